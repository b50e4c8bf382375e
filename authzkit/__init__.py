"""authzkit: explore and load-test an Authorization Decision Service.

``import authzkit`` stays light: every public name is resolved on first use, so the
sandbox's Starlette, pandas and locust are never imported by merely importing the package.

Layers, bottom to top (each imports only from its own layer and the ones below it;
``tests/test_layout.py`` enforces this, type-only imports included)::

    wire    spec errors error_table oauth jwe clock locks redact config variables actions
            openapi version tls
            what client and sandbox both speak; imports nothing else of authzkit
    client  client token unauthenticated credentials issuer discovery transport
            authorize answers outcomes retry recorder prepared
            the typed client; imports no glue and no side
    glue    connection consent flows policy matrix options extras trace
            what the tools share: connect to a sandbox or a real service, consent to
            wrong answers, named flows, the policy matrix, command-line options, the
            Markdown layout of a trace; the one side it may import is the sandbox
            (lazily, to start an embedded one)
    sides   sandbox/  the reference service; imports only the wire layer (its command
                      line also ``options``, which itself imports only the wire layer)
            check/ loadtest/ widgets/  conformance, load tests, notebook widgets
                      (loadtest/ is the one importer of locust)
            pytest_plugin testing/  the pytest plugin for projects that test against it
            cli/      the ``authzkit`` command; no other side imports it

A member of the map may be a package (``jwe``, ``options``): the modules inside it are in
its layer, and its ``__init__`` is the public home of its names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from authzkit.version import __version__

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "AccessTokenRejectedError": "authzkit.errors",
    "Authorized": "authzkit.outcomes",
    "AuthzClient": "authzkit.client",
    "AuthzError": "authzkit.errors",
    "BadChallengeSolutionError": "authzkit.errors",
    "BadJweTokenError": "authzkit.errors",
    "BadRequestError": "authzkit.errors",
    "ChallengeNotFoundError": "authzkit.errors",
    "ChallengeRequired": "authzkit.outcomes",
    "ChallengeRequiredError": "authzkit.errors",
    "ChallengeSolutionError": "authzkit.errors",
    "ClientNotPermittedError": "authzkit.errors",
    "ConfigError": "authzkit.errors",
    "ERRORS": "authzkit.error_table",
    "ManualClock": "authzkit.clock",
    "Recorder": "authzkit.recorder",
    "Environment": "authzkit.connection",
    "Sandbox": "authzkit.sandbox",
    "SandboxAdmin": "authzkit.sandbox",
    "Secret": "authzkit.redact",
    "Settings": "authzkit.config",
    "SolutionEncryptionError": "authzkit.errors",
    "TokenRequestError": "authzkit.errors",
    "TlsError": "authzkit.errors",
    "TlsSettings": "authzkit.tls",
    "TransportError": "authzkit.errors",
    "UnauthenticatedError": "authzkit.errors",
    "UnauthorizedError": "authzkit.errors",
    "UnexpectedResponseError": "authzkit.errors",
    "UnrecognizedKeyError": "authzkit.errors",
    "WrongChallengeSolutionError": "authzkit.errors",
    "connect": "authzkit.connection",
    "protected_header": "authzkit.jwe",
    "request_hash": "authzkit.authorize",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'authzkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from authzkit.authorize import request_hash
    from authzkit.client import AuthzClient
    from authzkit.clock import ManualClock
    from authzkit.config import Settings
    from authzkit.connection import Environment, connect
    from authzkit.error_table import ERRORS
    from authzkit.errors import (
        AccessTokenRejectedError,
        AuthzError,
        BadChallengeSolutionError,
        BadJweTokenError,
        BadRequestError,
        ChallengeNotFoundError,
        ChallengeRequiredError,
        ChallengeSolutionError,
        ClientNotPermittedError,
        ConfigError,
        SolutionEncryptionError,
        TokenRequestError,
        TransportError,
        UnauthenticatedError,
        UnauthorizedError,
        UnexpectedResponseError,
        UnrecognizedKeyError,
        WrongChallengeSolutionError,
    )
    from authzkit.jwe import protected_header
    from authzkit.outcomes import Authorized, ChallengeRequired
    from authzkit.recorder import Recorder
    from authzkit.redact import Secret
    from authzkit.sandbox import Sandbox, SandboxAdmin
