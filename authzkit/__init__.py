"""authzkit: explore and load-test an Authorization Decision Service.

``import authzkit`` stays light: every public name is resolved on first use, so the
sandbox's Starlette, pandas and locust are never imported by merely importing the package.

Layers, bottom to top, as folders (each imports only from its own layer and the ones below
it; ``tests/test_layout.py`` reads a module's layer from its path and enforces this, type-only
imports included, and checks that this map names every module of each layer)::

    wire/    actions children clock config error_display error_table errors html identity jwe
             locks oauth openapi redact spec tls variables version
             what client and sandbox both speak (and what their child processes need);
             imports nothing else of authzkit
    client/  access_token_display answers authorize credentials discovery exchange_display
             facade issuer outcome_display outcomes prepared recorder retry token transport
             unauthenticated
             the typed client; imports no shared module and no side
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

Each ``*_display`` module draws objects of its layer for a notebook (their ``_repr_html_``,
built with ``wire/html``; the text ``repr`` stays as it is), imported when first shown.

A member of a layer may be a package (``wire/jwe``, ``shared/options``): the modules inside it
are in its layer, and its ``__init__`` is the public home of its names. The modules' former
homes (``authzkit.config``, ``authzkit.jwe``, …) and the former names of renamed modules
(``authzkit.check.model``, …) stay importable: ``_FormerHomes`` hands out the module itself
under its old name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import pkgutil
import sys
from types import ModuleType
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
    "Recorder": "authzkit.client.recorder",
    "Connection": "authzkit.shared.connection",
    "Environment": "authzkit.shared.connection",  # Connection's former name, for a release
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'authzkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


LAYERS = ("wire", "client", "shared")


class _FormerHomes(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``authzkit.config`` is ``authzkit.wire.config``: a module moved into a layer's folder
    is found under its former name too, as the same module object (so a monkeypatch or an
    ``isinstance`` through either name sees one module), and so is a renamed module
    (``_RENAMED``, for a release); any other name is left to the other finders.
    ``authzkit.client`` is its layer's package, whose face offers what the former module
    did."""

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if _new_home(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(str(_new_home(spec.name)))

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module already ran under its new name."""


# A module renamed to say what it holds: its former name → its name now, kept for a release
# (its home before the layers were folders, ``authzkit.policy``, is found through the layer).
_RENAMED: dict[str, str] = {
    "authzkit.check.model": "authzkit.check.results",
    "authzkit.loadtest.report": "authzkit.loadtest.reporting",
    "authzkit.sandbox.app": "authzkit.sandbox.endpoints",
    "authzkit.sandbox.server": "authzkit.sandbox.embedded",
    "authzkit.sandbox.service": "authzkit.sandbox.decisions",
    "authzkit.sandbox.serving": "authzkit.sandbox.server_thread",
    "authzkit.shared.policy": "authzkit.shared.matrix.plan",
}


def _new_home(fullname: str) -> str | None:
    """``authzkit.jwe.keys`` → ``authzkit.wire.jwe.keys``, ``authzkit.check.model`` →
    ``authzkit.check.results``; ``None`` when it never moved."""
    parts = fullname.split(".")
    if len(parts) < 2 or parts[0] != __name__:
        return None
    renamed = _renamed(fullname)
    if renamed is not None:
        return renamed
    layer = _moved().get(parts[1])
    if layer is not None:
        return ".".join([__name__, layer, *parts[1:]])
    found = (_renamed(".".join([__name__, layer, *parts[1:]])) for layer in LAYERS)
    return next((home for home in found if home is not None), None)


def _renamed(fullname: str) -> str | None:
    """The name now of a renamed module (or of a module inside a renamed package)."""
    for former, now in _RENAMED.items():
        if fullname == former or fullname.startswith(f"{former}."):
            return now + fullname[len(former) :]
    return None


_MOVED: dict[str, str] = {}


def _moved() -> dict[str, str]:
    """Module name → its layer, read once from the layers' folders (never a list to keep)."""
    if not _MOVED:
        for layer in LAYERS:
            package = importlib.import_module(f"{__name__}.{layer}")
            _MOVED.update((m.name, layer) for m in pkgutil.iter_modules(package.__path__))
        _MOVED.pop("client", None)  # authzkit.client is the client layer's own package
    return _MOVED


if not any(isinstance(finder, _FormerHomes) for finder in sys.meta_path):
    # First: any other finder (an editable install's among them) would not know the move.
    sys.meta_path.insert(0, _FormerHomes())


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from authzkit.client.authorize import (
        request_hash as request_hash,
    )
    from authzkit.client.facade import (
        AuthzClient as AuthzClient,
    )
    from authzkit.client.outcomes import (
        Authorized as Authorized,
        ChallengeRequired as ChallengeRequired,
    )
    from authzkit.client.recorder import (
        Recorder as Recorder,
    )
    from authzkit.sandbox import (
        Sandbox as Sandbox,
        SandboxAdmin as SandboxAdmin,
    )
    from authzkit.shared.connection import (
        Connection as Connection,
        Environment as Environment,
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
