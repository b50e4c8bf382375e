"""What needs a fresh process: pytest-xdist workers, and what an unrelated run imports.

These run pytest in a subprocess with plugin autoloading off and the plugins named with
``-p`` (``authzkit`` is the entry point's name), so the process holds exactly what pytest,
the plugin and the tests bring in: other installed plugins (locust's own pytest plugin
imports locust) cannot blur the picture.
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"
HEAVY = (
    "starlette",
    "uvicorn",
    "locust",
    "gevent",
    "requests",
    "authzkit.sandbox",
    "authzkit.client.facade",
)


def run_alone(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "-p", "authzkit", *args, timeout=240
        )


def test_the_plugin_is_registered_as_the_authzkit_entry_point() -> None:
    found = {e.name: e.value for e in importlib.metadata.entry_points(group="pytest11")}
    assert found.get("authzkit") == "authzkit.pytest_plugin"


def test_a_run_that_uses_no_fixture_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a_unrelated=f"""
        import sys

        def test_unrelated(request):
            assert request.config.pluginmanager.has_plugin("authzkit")
            heavy = [m for m in {HEAVY!r} if m in sys.modules]
            assert heavy == []
    """,
        test_b_uses_the_sandbox=f"""
        import sys

        def test_uses_the_sandbox(authz_sandbox):
            heavy = [m for m in {HEAVY!r} if m in sys.modules]
            assert "starlette" in heavy and "uvicorn" in heavy
            assert "locust" not in heavy and "gevent" not in heavy
    """,
    )
    run_alone(pytester, "-v").assert_outcomes(passed=2)


def test_one_sandbox_per_xdist_worker(partner: pytest.Pytester) -> None:
    out = partner.path / "seen"
    out.mkdir()
    partner.makepyfile(
        test_workers=f'''
        import json, os
        import pytest
        from service import may_show_balance

        @pytest.mark.parametrize("n", range(8))
        def test_each(n, authz, authz_client, authz_sandbox):
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            assert may_show_balance(authz_client, authz.session_token("alice"),
                                    "{ALICE_ACCOUNT}")
            assert authz.stats()["authorize"] == {{"authorized": 1}}  # no other worker's
            with open(os.path.join({str(out)!r}, f"{{n}}.json"), "w") as file:
                json.dump({{"worker": worker, "url": authz_sandbox.base_url}}, file)
    '''
    )
    run_alone(partner, "-p", "xdist", "-n", "2").assert_outcomes(passed=8)
    seen = [json.loads(p.read_text()) for p in sorted(Path(out).glob("*.json"))]
    by_worker: dict[str, set[str]] = {}
    for entry in seen:
        by_worker.setdefault(entry["worker"], set()).add(entry["url"])
    assert sorted(by_worker) == ["gw0", "gw1"]
    assert all(len(urls) == 1 for urls in by_worker.values())
    assert by_worker["gw0"] != by_worker["gw1"]
