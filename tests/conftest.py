"""Shared fixtures: ONE sandbox per dialect per test session, reset before every test that uses it.

- ``sandbox``: the running draft-dialect :class:`authzkit.Sandbox` (2048-bit keys for
  speed), with its challenges and counters cleared and its clock back at wall-clock time.
- ``clock``: that sandbox's clock, a :class:`support.clocks.FollowingClock` that follows wall
  time; ``clock.advance(s)`` jumps ahead (expiry tests never sleep). Clients using the
  system clock (TOTP codes) agree with it whenever a test has not advanced it.
- ``published_sandbox``: the same for the provider's published dialect (OIDC issuer,
  ``private_key_jwt``, bare 401s; tokens live ``support.sandboxes.PUBLISHED_TOKEN_TTL`` s);
  ``published_clock`` is its clock, frozen for the test (moved only by ``advance``).
- ``world``: the default world (the one the sandbox serves).
- ``faulted(**faults)``: a sandbox of its own with faults fixed at start (the session's two
  stay fault-free); ``access_token``, ``http``, ``openapi``, ``published_openapi`` for the
  hardening tests.
- ``no_authzkit_env``: no ``AUTHZKIT_*`` variable, an empty working directory (no ``.env``).
- ``certificates``: a private CA and the certificates it signed, for the TLS tests.

Helpers live in the ``support`` package (``tests/support/``), imported as
``from support.X import …``; no test imports a conftest or another test module.
"""

from __future__ import annotations

import gc
import os
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from authzkit.sandbox import Sandbox
from authzkit.sandbox.world import World
from authzkit.wire.openapi import openapi_document

from support import prewarm, rsa_keys
from support.clocks import FollowingClock
from support.sandboxes import PUBLISHED_TOKEN_TTL
from support.tls import Certificates, make_certificates
from support.tokens import fetch_access_token

# The suite starts hundreds of Python processes (commands, sandboxes, Locust, kernels, xdist
# workers): each compiles authzkit again unless compiled modules may be cached, which a
# machine's PYTHONDONTWRITEBYTECODE forbids. The suite lets them be cached (in __pycache__,
# ignored by git) for itself and every process it starts.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Hundreds of sandboxes each generate two or three RSA keys: the suite's processes, its own
# and the children they start, build most of them from primes already found instead
# (support.rsa_keys: a modulus of its own every time, one real generation per few keys).
rsa_keys.share_with_children(os.environ)
rsa_keys.install(rsa)

# One hypothesis profile for every run, on CI or not (hypothesis would load its own "ci" profile
# only when it detects CI): the same examples on every machine and every run, no example
# database carried from one run to the next. `pytest --hypothesis-profile=explore` fuzzes
# afresh (random seeds, with the database) when hunting for new bugs.
# hypothesis is a [dev] dependency: `pytest tests/core` runs without it.
try:
    from hypothesis import settings
except ImportError:  # pragma: no cover - a partial install
    pass
else:
    settings.register_profile("authzkit", derandomize=True, database=None, print_blob=True)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile("authzkit")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--test-order",
        choices=("file", "reverse", "shuffle"),
        default="file",
        help="run modules and the tests inside them in file order (default), reversed, or "
        "shuffled (seeded by --test-order-seed); proves the suite is order independent",
    )
    parser.addoption("--test-order-seed", type=int, default=0, help="seed of --test-order=shuffle")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Reorder per ``--test-order``; a module's tests stay together (module fixtures), and
    a notebook's cells keep their order (nbval runs them as one kernel session)."""
    _unique_node_ids(items)
    order = config.getoption("--test-order")
    if order != "file":
        _reorder(items, order, config.getoption("--test-order-seed"))
    elif hasattr(config, "workerinput"):
        _slow_modules_first(items)


def _unique_node_ids(items: list[pytest.Item]) -> None:
    """schemathesis names its per-operation items ``test_api[POST /path]`` but gives them
    all the node id ``…::test_api``; pytest-xdist finds items by node id, so the duplicates
    ran one operation's cases and dropped the others' unseen. Each gets its own name."""
    seen = [item.nodeid for item in items]
    for item in items:
        if seen.count(item.nodeid) > 1 and not item.nodeid.endswith(f"::{item.name}"):
            # pytest 9 keeps the id as the parent's id plus the name the item was made with
            item._id = item.parent.id.child(item.name)  # type: ignore[union-attr]
            assert item.nodeid.endswith(f"::{item.name}"), item.nodeid


# The longest files, longest first (``--durations`` of the README's command, summed per file).
# Only the order of a run depends on this list: a file missing from it is scheduled after
# the listed ones (with the other files of ``slow`` tests), never skipped.
LONGEST_FILES = (
    "tests/docs/test_site.py",
    "tests/audit/test_notebook_secrets.py",
    "tests/loadtest/test_cli.py",
    "tests/loadtest/test_real_env.py",
    "tests/loadtest/test_notebook_live.py",
    "tests/loadtest/test_endurance.py",
    "tests/audit/test_secrets_audit.py",
    "tests/loadtest/test_users.py",
    "tests/deploy/test_distributed_run.py",
    "tests/loadtest/test_external_sandbox.py",
    "tests/capacity/test_run.py",
    "notebooks/06_load_test_report.ipynb",
    "notebooks/08_capacity.ipynb",
    "tests/hardening/test_published_schemathesis.py",
    "tests/hardening/test_schemathesis.py",
    "tests/loadtest/test_distributed.py",
    "tests/loadtest/test_open_model.py",
    "tests/soak/test_saturation.py",
    "tests/sandbox/test_cli.py",
    "tests/notebooks/test_export_browser.py",
)


def _slow_modules_first(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadfile`` hands out whole files in this order, see
    :func:`pytest_configure`), the longest files go first, then the other files holding
    ``slow`` tests, so no long file starts last and runs alone."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(str(item.path), []).append(item)
    root = Path(__file__).resolve().parents[1]

    def rank(group: list[pytest.Item]) -> tuple[int, bool]:
        path = group[0].path.resolve().relative_to(root).as_posix()
        listed = LONGEST_FILES.index(path) if path in LONGEST_FILES else len(LONGEST_FILES)
        return listed, not any(item.get_closest_marker("slow") for item in group)

    ordered = sorted(modules.values(), key=rank)
    items[:] = [item for group in ordered for item in group]


def _reorder(items: list[pytest.Item], order: str, seed: int) -> None:
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(str(item.path), []).append(item)
    groups = list(modules.values())
    tests = [group for group in groups if all(isinstance(i, pytest.Function) for i in group)]
    if order == "reverse":
        groups.reverse()
        for group in tests:
            group.reverse()
    else:
        shuffler = random.Random(seed)
        shuffler.shuffle(groups)
        for group in tests:
            shuffler.shuffle(group)
    items[:] = [item for group in groups for item in group]


SUMMARY_TEST = "test_enough_cases_ran_and_reached_the_authorize_logic"


class SummariesLast:
    """A schemathesis summary judges what its module's other tests recorded: it runs after
    them in any order (``--test-order``, or a plugin that shuffles: hence trylast)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        _summaries_last(items)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SummariesLast(), "authzkit-tests-summaries-last")
    # pytest-xdist hands out files by their number of tests, most first, unless told not to:
    # the few-test long files (the site, the load test commands, the soak) then started last
    # and ran alone. Files go out in the order the workers collected them (above).
    if getattr(config.option, "loadscopereorder", False):
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The xdist controller, before it starts the workers (its own sessionstart is trylast),
    writes the caches each worker of a fresh clone would build for itself (support.prewarm)."""
    if session.config.pluginmanager.has_plugin("dsession"):
        prewarm.warm(session.config)


def pytest_collection_finish(session: pytest.Session) -> None:
    """A worker keeps the 300,000-odd objects of its collection (modules, items, hypothesis
    and schemathesis strategies) for the whole run, and every full garbage collection walked
    them all again: 3 to 6 s of CPU per worker. Frozen, they are left out of collections."""
    gc.freeze()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per core (at least two). A test often waits on its child
    processes (Locust runs of a fixed length, sandboxes, kernels, the browser) while another
    computes: with one and a half per core the cores were idle 40 % of the time, with two
    they are busy (3 % idle: the suite's time is its CPU work), while two and a half starved
    a run of a few seconds of the CPU it needed to send anything."""
    return max(2, (os.cpu_count() or 1) * 2)


def _summaries_last(items: list[pytest.Item]) -> None:
    for summary in [item for item in items if item.name == SUMMARY_TEST]:  # one per module
        rest = [item for item in items if item is not summary]
        module = [index for index, item in enumerate(rest) if item.path == summary.path]
        at = module[-1] + 1 if module else len(rest)
        items[:] = [*rest[:at], summary, *rest[at:]]


@pytest.fixture(scope="session")
def session_sandbox() -> Iterator[Sandbox]:
    """The one draft-dialect sandbox of the test session."""
    # announce=False: reached by URL, the shared sandbox plays a real environment (the tests of
    # the "a sandbox that says so is a sandbox" rule start their own).
    with Sandbox(key_size=2048, clock=FollowingClock(), announce=False) as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def published_session_sandbox() -> Iterator[Sandbox]:
    """The one published-dialect sandbox of the test session (access tokens live
    ``PUBLISHED_TOKEN_TTL`` seconds)."""
    with Sandbox(
        dialect="published", key_size=2048, clock=FollowingClock(), token_ttl=PUBLISHED_TOKEN_TTL
    ) as sandbox:
        yield sandbox


def _reset(sandbox: Sandbox) -> Sandbox:
    clock = sandbox.clock
    if isinstance(clock, FollowingClock):
        clock.rewind()
    sandbox.reset()
    return sandbox


@pytest.fixture
def sandbox(session_sandbox: Sandbox) -> Sandbox:
    """The session's draft sandbox, with challenges, counters and clock reset for this test."""
    return _reset(session_sandbox)


@pytest.fixture
def clock(sandbox: Sandbox) -> FollowingClock:
    """The sandbox's clock; ``clock.advance(seconds)`` to expire tokens and challenges."""
    assert isinstance(sandbox.clock, FollowingClock)
    return sandbox.clock


@pytest.fixture
def published_sandbox(published_session_sandbox: Sandbox) -> Sandbox:
    """The session's published sandbox, with challenges, used assertion ids, counters and
    clock reset for this test."""
    return _reset(published_session_sandbox)


@pytest.fixture
def published_clock(published_sandbox: Sandbox) -> FollowingClock:
    """The published sandbox's clock, FROZEN for this test: it moves only by
    ``advance(seconds)`` (exact expiry boundaries, times built from its ``clock()``)."""
    clock = published_sandbox.clock
    assert isinstance(clock, FollowingClock)
    clock.freeze()
    return clock


@pytest.fixture(scope="session")
def world() -> World:
    """The default world (fixed ids and demo credentials)."""
    return World.default()


@pytest.fixture
def no_authzkit_env(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """No ``AUTHZKIT_*`` variable of the person running the tests and no ``.env``: commands
    start their own sandbox, or reach only the URL a test gives them. Returns the empty
    working directory the test runs in."""
    for name in [n for n in os.environ if n.startswith("AUTHZKIT_")]:
        monkeypatch.delenv(name)
    cwd = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(cwd)
    return cwd


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    """A private CA, and a server and a client certificate it signed (one set per module)."""
    return make_certificates(tmp_path_factory.mktemp("certificates"))


@pytest.fixture(scope="session")
def world_secrets(world: World) -> list[str]:
    """Every secret of the default world: client secrets and each subject's credentials."""
    secrets: list[str] = []
    for name, client in world.clients.items():
        assert client.client_secret is not None, f"the world's client {name} has no secret"
        secrets.append(client.client_secret)
    for subject in world.subjects.values():
        secrets += list(subject.credentials.values())
    return secrets


@pytest.fixture
def access_token(sandbox: Sandbox) -> str:
    """A fresh access token of the draft sandbox's resource_server client."""
    assert sandbox.client_secret is not None, "the sandbox's client has no secret"
    return fetch_access_token(sandbox.base_url, sandbox.client_id, sandbox.client_secret)


@pytest.fixture
def http() -> Iterator[requests.Session]:
    """A requests session, closed after the test."""
    with requests.Session() as session:
        yield session


@pytest.fixture(scope="session")
def openapi() -> dict[str, Any]:
    """The draft dialect's OpenAPI document."""
    return openapi_document()


@pytest.fixture(scope="session")
def published_openapi() -> dict[str, Any]:
    """The published dialect's OpenAPI document."""
    return openapi_document("published")


@pytest.fixture
def faulted() -> Iterator[Callable[..., Sandbox]]:
    """``faulted(error_rate=…, …)`` starts a sandbox of its own with those faults (they are
    fixed at start, so the session's sandboxes stay fault-free); all stop at teardown."""
    started: list[Sandbox] = []

    def start(**faults: Any) -> Sandbox:
        sandbox = Sandbox(key_size=2048, **faults).start()
        started.append(sandbox)
        return sandbox

    yield start
    for sandbox in started:
        sandbox.stop()
