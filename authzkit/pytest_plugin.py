"""pytest plugin: test your own code against a real authzkit sandbox, one fixture away.

Registered through the ``pytest11`` entry point ``authzkit``; importing it costs nothing
beyond pytest (the client and the sandbox load when a fixture asks). Its fixtures, marker and
options: docs/testing.md; how it is built: docs/internals.md, "The plugin".
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from authzkit.client.facade import AuthzClient
    from authzkit.testing.sandboxes import AuthzSandbox, SandboxPool
    from authzkit.testing.view import AuthzView

MARKER = "authz"
T = TypeVar("T")
# What collection found on a marked test: (settings, strict, error); None: not marked.
_MARKED = pytest.StashKey[tuple[dict[str, Any] | None, bool | None, str | None]]()
_VIEW = pytest.StashKey["AuthzView"]()
_DEFAULTS = pytest.StashKey[dict[str, Any]]()
# The ini keys of the sandbox's TLS (setting -> ini key, help).
_TLS_INI = {
    "tls_cert": ("authz_tls_cert", "serve HTTPS with this certificate, PEM (with authz_tls_key)"),
    "tls_key": ("authz_tls_key", "the private key of authz_tls_cert, unencrypted PEM"),
    "tls_ca": ("authz_tls_ca", "the CA bundle authz_client and authz_env trust over HTTPS"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("authz", "authzkit sandbox (authz_* fixtures)")
    group.addoption(
        "--authz-dialect",
        dest="authz_dialect",
        default=None,
        metavar="DIALECT",
        help="what the sandbox speaks: draft (default), published or authzen (ini: authz_dialect)",
    )
    group.addoption(
        "--authz-world",
        dest="authz_world",
        default=None,
        metavar="FILE",
        help="the sandbox's world file, TOML or JSON; on authzen certification, todo or a "
        "JSON file (ini: authz_world)",
    )
    group.addoption(
        "--authz-url",
        dest="authz_url",
        default=None,
        metavar="URL",
        help="use the authzkit sandbox already running at URL instead of "
        "starting one (ini: authz_url)",
    )
    group.addoption(
        "--authz-strict",
        dest="authz_strict",
        action="store_true",
        default=None,
        help="fail a test on any request to the sandbox it did not expect (ini: authz_strict)",
    )
    parser.addini("authz_dialect", "the sandbox's dialect: draft, published or authzen", default="")
    parser.addini("authz_world", "the sandbox's world file (relative to this ini file)", default="")
    parser.addini("authz_url", "an authzkit sandbox already running", default="")
    parser.addini("authz_strict", "strict mode for every test", type="bool", default=False)
    parser.addini(
        "authz_key_size",
        "RSA key size of the sandboxes the plugin starts (default 2048)",
        default="",
    )
    for key, help in _TLS_INI.values():
        parser.addini(key, f"{help} (relative to this ini file)", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "authz(**settings): the authz fixtures of this test use a sandbox with "
        "these `authzkit sandbox` settings (dialect, world, latency_ms, "
        "error_rate, token_outage, tls_cert and tls_key, …), tls_ca (the CA "
        "bundle its clients trust) and strict=True|False",
    )


def _ini_dir(config: pytest.Config) -> Path:
    return config.inipath.parent if config.inipath is not None else config.rootpath


def _defaults(config: pytest.Config) -> dict[str, Any]:
    """The session's sandbox settings: ``authzkit sandbox``'s defaults, the plugin's key
    size, then the ini keys and the options (each refused with its own name)."""
    found = config.stash.get(_DEFAULTS, None)
    if found is not None:
        return found
    from authzkit.testing.settings import check_dialect, check_tls, file_setting, parse_settings

    settings = parse_settings({}, where="authzkit sandbox defaults")
    given: list[tuple[str, str, Any]] = []
    if config.getini("authz_key_size"):
        given.append(("authz_key_size (ini)", "key_size", config.getini("authz_key_size")))
    if config.getini("authz_dialect"):
        given.append(("authz_dialect (ini)", "dialect", config.getini("authz_dialect")))
    if config.getini("authz_world"):
        world = file_setting("world", str(config.getini("authz_world")), _ini_dir(config))
        given.append(("authz_world (ini)", "world", world))
    for name, (key, _) in _TLS_INI.items():
        if config.getini(key):
            path = file_setting(name, str(config.getini(key)), _ini_dir(config))
            given.append((f"{key} (ini)", name, path))
    if config.getoption("authz_dialect"):
        given.append(("--authz-dialect", "dialect", config.getoption("authz_dialect")))
    if config.getoption("authz_world"):
        world = file_setting(
            "world", str(config.getoption("authz_world")), config.invocation_params.dir
        )
        given.append(("--authz-world", "world", world))
    for where, name, value in given:
        settings = parse_settings({name: value}, where=where, base=settings)
    check_tls(settings, names=(_TLS_INI["tls_cert"][0], _TLS_INI["tls_key"][0]))
    check_dialect(settings)
    config.stash[_DEFAULTS] = settings
    return settings


def _url(config: pytest.Config) -> str | None:
    url = config.getoption("authz_url") or config.getini("authz_url")
    return str(url) if url else None


def _strict(config: pytest.Config) -> bool:
    option = config.getoption("authz_strict")
    return bool(option) if option is not None else bool(config.getini("authz_strict"))


def _marked(item: pytest.Item) -> tuple[dict[str, Any] | None, bool | None, str | None]:
    """The marker's settings over the session's, its ``strict``, or what is wrong."""
    from authzkit.testing.settings import check_dialect, check_tls, file_setting, parse_settings
    from authzkit.wire.errors import ConfigError

    kwargs: dict[str, Any] = {}
    args: list[Any] = []
    for mark in reversed(list(item.iter_markers(MARKER))):  # the closest mark wins
        kwargs.update(mark.kwargs)
        args += mark.args
    shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    where = f"@pytest.mark.authz({shown})"
    if args:
        return None, None, f"{where}: takes keyword arguments only, got {args!r}"
    strict = kwargs.pop("strict", None)
    if strict is not None and not isinstance(strict, bool):
        return None, None, f"{where}: strict must be True or False, got {strict!r}"
    kwargs = {
        name: file_setting(name, value, Path(item.path).parent) for name, value in kwargs.items()
    }
    try:
        settings = parse_settings(kwargs, where=where, base=_defaults(item.config))
    except ConfigError as exc:
        return None, None, str(exc)
    try:
        check_tls(settings)  # the pair as merged: the ini file may give one, the marker the other
        check_dialect(settings)
    except ConfigError as exc:
        return None, None, f"{where}: {exc}"
    return settings, strict, None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check every ``@pytest.mark.authz`` now; a bad one fails its test at setup."""
    for item in items:
        if item.get_closest_marker(MARKER) is not None:
            item.stash[_MARKED] = _marked(item)


def pytest_runtest_setup(item: pytest.Item) -> None:
    marked = item.stash.get(_MARKED, None)
    if marked is not None and marked[2] is not None:
        pytest.fail(marked[2], pytrace=False)


def _plainly(what: str, make: Callable[[], T]) -> T:
    """``make()``, its :class:`ConfigError` (or a sandbox that cannot start) a one-line
    failure naming ``what``, not a traceback deep inside."""
    from authzkit.wire.errors import AuthzError

    try:
        return make()
    except AuthzError as exc:
        problem = f"{what}: {exc}"
    pytest.fail(problem, pytrace=False)  # outside the except: no chained traceback


@pytest.fixture(scope="session")
def _authz_pool(request: pytest.FixtureRequest) -> Iterator[SandboxPool]:
    """The session's sandboxes (of this xdist worker), stopped at its end."""
    from authzkit.testing.sandboxes import SandboxPool

    config = request.config
    defaults = _plainly("authz settings", lambda: _defaults(config))
    pool = SandboxPool(defaults, _url(config))
    yield pool
    pool.stop()


@pytest.fixture(scope="session")
def authz_sandbox(_authz_pool: SandboxPool) -> AuthzSandbox:
    """The session's sandbox (one per xdist worker): the one ``--authz-url`` names, else
    one started on 127.0.0.1 on a free port with the session's settings."""
    return _plainly("authz sandbox", _authz_pool.default)


@pytest.fixture
def authz(
    request: pytest.FixtureRequest,
    _authz_pool: SandboxPool,
) -> Generator[AuthzView, None, None]:
    """This test's view of the sandbox, reset before and after the test; a marked test
    gets a sandbox with the marker's settings."""
    from authzkit.testing.view import AuthzView

    item = request.node
    settings, strict, _ = item.stash.get(_MARKED, (None, None, None))
    if settings is None:
        sandbox = _plainly("authz sandbox", _authz_pool.default)
    else:
        shown = ", ".join(f"{k}={v!r}" for k, v in item.get_closest_marker(MARKER).kwargs.items())
        sandbox = _plainly(f"@pytest.mark.authz({shown})", lambda: _authz_pool.configured(settings))
    _plainly("authz sandbox reset", sandbox.reset)
    view = AuthzView(sandbox, strict=_strict(request.config) if strict is None else strict)
    item.stash[_VIEW] = view
    yield view
    view.close()
    sandbox.reset()


@pytest.fixture
def authz_client(authz: AuthzView) -> AuthzClient:
    """``authz.client``: an :class:`authzkit.AuthzClient` for ``authz``'s sandbox (its
    demo client; on AuthZEN a PEP's client), closed when the test ends."""
    return authz.client


class AuthzEnv(dict[str, str]):
    """The ``AUTHZKIT_*`` settings of a sandbox: a plain mapping, and ``apply(monkeypatch)``
    sets them for this test (removing any other connection variable)."""

    def apply(self, monkeypatch: pytest.MonkeyPatch) -> AuthzEnv:
        from authzkit.wire.variables import CONNECTION_VARIABLES

        for name in CONNECTION_VARIABLES:
            if name not in self:
                monkeypatch.delenv(name, raising=False)
        for name, value in self.items():
            monkeypatch.setenv(name, value)
        return self


@pytest.fixture
def authz_env(authz: AuthzView) -> AuthzEnv:
    """``AUTHZKIT_*`` settings pointing at ``authz``'s sandbox (``AUTHZKIT_BASE_URL``,
    ``AUTHZKIT_CLIENT_ID``, ``AUTHZKIT_CLIENT_SECRET``; the issuer and client key file in
    the published dialect)."""
    return AuthzEnv(authz.sandbox.env())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """When the test body passed: its expectations, and strict mode's unexpected requests."""
    yield
    view = item.stash.get(_VIEW, None)
    problems = view.problems() if view is not None else []
    if view is not None and problems:
        pytest.fail(view.report(problems), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, Any]:
    """A failed test's report gets what the sandbox received, as trace Markdown."""
    report = yield
    view = item.stash.get(_VIEW, None)
    if view is not None and report.failed and report.when == "call":
        report.sections.append(("authz: what the sandbox received", _trace(item, view)))
    return report


def _trace(item: pytest.Item, view: AuthzView) -> str:
    from authzkit.testing.trace import render

    try:
        problems = [f"- {p}" for p in view.problems()]
        unmet = ["Also not as the test expected:", "", *problems, ""] if problems else []
        return "\n".join([*unmet, render(item.nodeid, view.requests, where=view.base_url)])
    except Exception as exc:  # the report must not hide the test's own failure
        return f"(the sandbox's record could not be read: {type(exc).__name__}: {exc})"


def marked_settings(item: pytest.Item) -> Mapping[str, Any] | None:
    """The sandbox settings a marked test gets (None for an unmarked one)."""
    found = item.stash.get(_MARKED, None)
    return found[0] if found is not None else None


__all__ = [
    "MARKER",
    "AuthzEnv",
    "authz",
    "authz_client",
    "authz_env",
    "authz_sandbox",
    "marked_settings",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_runtest_call",
    "pytest_runtest_makereport",
    "pytest_runtest_setup",
]
