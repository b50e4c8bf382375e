"""authzkit: explore and load-test an Authorization Decision Service.

Every public name resolves on first use, so ``import authzkit`` stays light. The layers,
bottom to top, as folders; each imports only from itself and the ones below
(``tests/test_layout.py`` holds this map to the folders; docs/internals.md, "The package")::

    wire/    actions authzen children clock config deprecation error_display error_table errors
             html identity jwe locks oauth openapi redact sessions spec tls variables version
             what client and sandbox both speak (and what their child processes need);
             imports nothing else of authzkit
    client/  access_token_display answers authorize authzen credentials discovery
             exchange_display exchanges facade issuer outcome_display outcomes prepared
             recorder retry token transport unauthenticated
             the typed client (``exchanges``: its record of exchanges; ``recorder``: that
             module's former name, deprecated); imports no shared module and no side
    shared/  connection consent extras flows matrix options trace
             what the tools share: connect to a sandbox or a real service, consent to
             wrong answers, named flows, the policy matrix, command-line options, the
             Markdown layout of a trace; the one side it may import is the sandbox
             (lazily, to start an embedded one)
    sides    sandbox/  the reference service; imports only the wire layer (its command
                       line also ``shared/options``, which itself imports only the wire layer)
             check/ loadtest/ widgets/  conformance, load tests, notebook widgets
                       (loadtest/ is the one importer of locust)
             pytest_plugin testing/  the pytest plugin for projects that test against it
             cli/      the ``authzkit`` command; no other side imports it
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from authzkit.wire.version import __version__

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "AccessTokenRejectedError": "authzkit.wire.errors",
    "Authorized": "authzkit.client.outcomes",
    "AuthzClient": "authzkit.client.facade",
    "AuthzError": "authzkit.wire.errors",
    "BadChallengeSolutionError": "authzkit.wire.errors",
    "BadJweTokenError": "authzkit.wire.errors",
    "BadRequestError": "authzkit.wire.errors",
    "ChallengeNotFoundError": "authzkit.wire.errors",
    "ChallengeRequired": "authzkit.client.outcomes",
    "ChallengeRequiredError": "authzkit.wire.errors",
    "ChallengeSolutionError": "authzkit.wire.errors",
    "ClientNotPermittedError": "authzkit.wire.errors",
    "ConfigError": "authzkit.wire.errors",
    "ERRORS": "authzkit.wire.error_table",
    "ManualClock": "authzkit.wire.clock",
    "Recorder": "authzkit.client.exchanges",
    "Connection": "authzkit.shared.connection",
    "Sandbox": "authzkit.sandbox",
    "SandboxAdmin": "authzkit.sandbox",
    "Secret": "authzkit.wire.redact",
    "Settings": "authzkit.wire.config",
    "SolutionEncryptionError": "authzkit.wire.errors",
    "TokenRequestError": "authzkit.wire.errors",
    "TlsError": "authzkit.wire.errors",
    "TlsSettings": "authzkit.wire.tls",
    "TransportError": "authzkit.wire.errors",
    "UnauthenticatedError": "authzkit.wire.errors",
    "UnauthorizedError": "authzkit.wire.errors",
    "UnexpectedResponseError": "authzkit.wire.errors",
    "UnrecognizedKeyError": "authzkit.wire.errors",
    "WrongChallengeSolutionError": "authzkit.wire.errors",
    "connect": "authzkit.shared.connection",
    "protected_header": "authzkit.wire.jwe",
    "request_hash": "authzkit.client.authorize",
}

__all__ = sorted(_EXPORTS)


# deprecated name -> the public name that replaces it (warned once, then kept)
_DEPRECATED: dict[str, str] = {
    "Environment": "Connection",
}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        from authzkit.wire.deprecation import deprecated

        deprecated(f"authzkit.{name}", f"authzkit.{_DEPRECATED[name]}")
        value = __getattr__(_DEPRECATED[name])
    else:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'authzkit' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from authzkit.client.authorize import (
        request_hash as request_hash,
    )
    from authzkit.client.exchanges import (
        Recorder as Recorder,
    )
    from authzkit.client.facade import (
        AuthzClient as AuthzClient,
    )
    from authzkit.client.outcomes import (
        Authorized as Authorized,
        ChallengeRequired as ChallengeRequired,
    )
    from authzkit.sandbox import (
        Sandbox as Sandbox,
        SandboxAdmin as SandboxAdmin,
    )
    from authzkit.shared.connection import (
        Connection as Connection,
        connect as connect,
    )
    from authzkit.wire.clock import (
        ManualClock as ManualClock,
    )
    from authzkit.wire.config import (
        Settings as Settings,
    )
    from authzkit.wire.error_table import (
        ERRORS as ERRORS,
    )
    from authzkit.wire.errors import (
        AccessTokenRejectedError as AccessTokenRejectedError,
        AuthzError as AuthzError,
        BadChallengeSolutionError as BadChallengeSolutionError,
        BadJweTokenError as BadJweTokenError,
        BadRequestError as BadRequestError,
        ChallengeNotFoundError as ChallengeNotFoundError,
        ChallengeRequiredError as ChallengeRequiredError,
        ChallengeSolutionError as ChallengeSolutionError,
        ClientNotPermittedError as ClientNotPermittedError,
        ConfigError as ConfigError,
        SolutionEncryptionError as SolutionEncryptionError,
        TokenRequestError as TokenRequestError,
        TransportError as TransportError,
        UnauthenticatedError as UnauthenticatedError,
        UnauthorizedError as UnauthorizedError,
        UnexpectedResponseError as UnexpectedResponseError,
        UnrecognizedKeyError as UnrecognizedKeyError,
        WrongChallengeSolutionError as WrongChallengeSolutionError,
    )
    from authzkit.wire.jwe import (
        protected_header as protected_header,
    )
    from authzkit.wire.redact import (
        Secret as Secret,
    )
