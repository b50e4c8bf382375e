"""A URL alone that publishes AuthZEN metadata is spoken to in AuthZEN by every command:
``authorize``, ``check``, ``trace``, ``matrix`` and ``loadtest`` decide it the same way
(``shared.connection.command_speaks_authzen``), with no ``--dialect`` and no
``AUTHZKIT_DIALECT``. Before, ``trace``, ``matrix`` and ``loadtest`` took the draft path."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from authzkit.cli import main
from authzkit.loadtest.arguments import add_loadtest_arguments
from authzkit.loadtest.plan import plan_run
from authzkit.sandbox import Sandbox

# What a PDP authzkit did not start cannot tell: the entities to ask about.
PDP_VARIABLES = {
    "AUTHZKIT_SUBJECT_ID": "alice",
    "AUTHZKIT_SUBJECT_TYPE": "user",
    "AUTHZKIT_RESOURCE_ID": "record-1",
    "AUTHZKIT_RESOURCE_TYPE": "record",
    "AUTHZKIT_PLAIN_ACTION": "read",
}


@pytest.fixture(scope="module")
def metadata_pdp_url() -> Iterator[str]:
    with Sandbox(dialect="authzen") as sandbox:
        yield sandbox.base_url


@pytest.fixture
def at_url(metadata_pdp_url: str, no_authzkit_env: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``AUTHZKIT_BASE_URL`` (and the entities) alone: no dialect said anywhere."""
    for name, value in {"AUTHZKIT_BASE_URL": metadata_pdp_url, **PDP_VARIABLES}.items():
        monkeypatch.setenv(name, value)
    return metadata_pdp_url


def test_matrix_asks_the_pdp(at_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["matrix", "--actions", "read,delete", "--resources", "record-1"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "authorized" in out.out and "denied" in out.out


def test_trace_runs_an_authzen_flow(
    at_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "trace.md"
    code = main(["trace", "evaluation", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert "/access/v1/evaluation" in out.read_text()


def test_loadtest_plans_evaluations(at_url: str) -> None:
    parser = argparse.ArgumentParser()
    add_loadtest_arguments(parser)
    found = plan_run(parser.parse_args([]), environ=dict(os.environ))
    assert found.dialect == "authzen"
