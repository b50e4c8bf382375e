"""``authzkit.loadtest.run``, ``load`` and ``Run`` as a notebook uses them: one short run in
a real kernel (nbclient, no frontend: a line per interval, the call returns the finished
run) that never imports locust or gevent; ``load`` of its directory; keywords refused
before anything starts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from authzkit import loadtest
from authzkit.wire.errors import ConfigError

from support.cells import code_notebook
from support.kernels import execute_notebook
from support.loadtest import PACED

SETUP = (
    "import json, sys\n"
    "from authzkit import loadtest\n"
    f'run = loadtest.run(users=2, run_time="3s", wait_time="{PACED}", sandbox=True, '
    "no_report=True, max_failure_ratio=0.5)"
)
REPORT = (
    "rows = run.rows()\n"
    "print(json.dumps({'heavy': [m for m in ('locust', 'gevent') if m in sys.modules],\n"
    "    'type': type(run).__name__, 'path': str(run.path), 'requests': run.requests,\n"
    "    'failures': run.failures, 'exit_code': run.exit_code, 'passed': run.passed,\n"
    "    'aggregated': int(rows[rows['row'] == 'Aggregated']['requests'].iloc[0]),\n"
    "    'html': 'thresholds met' in run._repr_html_()}))"
)
LINE = re.compile(r"^  \d+ s / 3 s  [\d,]+ requests  .* req/s  p50 .*  p99 .*  \d+ failures$", re.M)


def _stdout(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.slow
def test_run_in_a_kernel_returns_the_run_and_never_imports_locust(tmp_path: Path) -> None:
    notebook = code_notebook(SETUP, REPORT)
    execute_notebook(notebook, cwd=tmp_path, sockets=tmp_path / "sockets", timeout=300)
    assert LINE.search(_stdout(notebook.cells[0])), _stdout(notebook.cells[0])
    found = json.loads(_stdout(notebook.cells[1]))
    assert found["heavy"] == [] and found["type"] == "Run"
    path = Path(found["path"])
    assert path.parent == tmp_path / "loadtest-out"
    summary = json.loads((path / "summary.json").read_text())
    assert found["requests"] == summary["requests"] == found["aggregated"] > 0
    assert found["failures"] == summary["failures_total"]
    assert found["exit_code"] == 0 and found["passed"] is True and found["html"]

    loaded = loadtest.load(path)
    assert loaded.path == path and not loaded.running
    assert (loaded.requests, loaded.failures) == (summary["requests"], summary["failures_total"])
    assert loaded.verdict == "thresholds met" and loaded.problems == []
    assert "Aggregated" in loaded.histograms
    assert set(loaded.timeline()["row"]) >= {"POST authorize"}
    assert repr(loaded).startswith(f"Run({str(path)!r}, exit 0, ")
    comparison = loaded.compare(loaded)
    assert (comparison["failure_ratio_delta"].fillna(0) == 0).all()


def test_load_refuses_a_directory_no_run_wrote(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a load-test run directory"):
        loadtest.load(tmp_path)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"users": 0}, "must be a whole number >= 1"),
        ({"run_time": "0s"}, "at least 1s"),
        ({"scenario": "nope"}, "invalid choice: 'nope'"),
        ({"rate": -5}, "--rate"),
        ({"fast": "yes"}, "fast= takes True or False"),
        ({"user": 4}, "no option user="),
        ({"worker": True}, "worker= is not offered"),
        ({"locust_args": "--loglevel DEBUG"}, "locust_args= takes a list of strings"),
    ],
)
def test_run_refuses_what_the_command_refuses_before_anything_starts(
    options: dict[str, Any], words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=re.escape(words)):
        loadtest.run(**options)
    assert list(tmp_path.iterdir()) == []  # no run directory, nothing started


def test_the_command_s_own_refusal_is_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that needs more than one value (the drift's windows must fit the run time)
    is the command's, in its child: its words come back as the error, before any load."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="drift"):
        loadtest.run(run_time="2s", max_drift=2, drift_window=5, sandbox=True)
    assert not list(tmp_path.glob("loadtest-out/*/summary.json"))


def test_find_capacity_refuses_what_authzkit_capacity_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"authzkit\.loadtest\.capacity: .*--max-p99-ms"):
        loadtest.find_capacity(max_p99_ms=-1)
    with pytest.raises(ConfigError, match="no option users="):
        loadtest.find_capacity(users=3)
    with pytest.raises(FileNotFoundError, match="not a capacity run"):
        loadtest.load_capacity(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_without_a_page_the_run_says_a_line_a_second() -> None:
    """A plain process has no frontend: ``run`` blocks and prints; the line reads as the
    live view does (``-`` for a figure not known yet)."""
    from authzkit.loadtest.notebook.background import Figures
    from authzkit.loadtest.notebook.live import has_frontend, line

    assert has_frontend() is False
    assert line(Figures(None, 0, 0, None, None, None), 3) == "  starting"
    shown = line(Figures(2.0, 1204, 1, 401.25, 1_150.0, 23_400.0), 5)
    assert shown == "  2 s / 5 s  1,204 requests  401.2 req/s  p50 1.15 ms  p99 23.4 ms  1 failures"


def test_a_run_shows_its_headline_escaped_and_says_it_was_stopped(tmp_path: Path) -> None:
    from support.report_runs import write_run

    directory = write_run(tmp_path / "run")
    meta = {"scenario": "<script>x</script>", "users": 5, "exit_code": 130, "interrupted": "SIGINT"}
    (directory / "run.json").write_text(json.dumps(meta))
    found = loadtest.load(directory)
    page = found._repr_html_()
    assert "Interrupted by SIGINT" in page and "thresholds not checked" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<img" in page  # latency second by second, drawn from the run's rows
    assert repr(found) == (
        f"Run({str(directory)!r}, exit 130, 102 requests, 0 failures, thresholds not checked, "
        "interrupted by SIGINT)"
    )


def test_a_run_on_a_sandbox_of_its_own_takes_none_of_the_kernels_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``sandbox=True`` leaves the kernel's ``AUTHZKIT_*`` variables out of the command's
    environment: a configured environment's secrets never reach a run on a sandbox."""
    from authzkit.loadtest.notebook.background import child_environment

    monkeypatch.setenv("AUTHZKIT_BASE_URL", "https://authz.example")
    monkeypatch.setenv("AUTHZKIT_CLIENT_SECRET", "the-kernel-s-secret")
    own = child_environment(True, {"AUTHZKIT_TOKEN_TTL": "4"})
    assert sorted(k for k in own if k.startswith("AUTHZKIT_")) == ["AUTHZKIT_TOKEN_TTL"]
    assert child_environment(False, None)["AUTHZKIT_CLIENT_SECRET"] == "the-kernel-s-secret"
