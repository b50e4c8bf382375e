"""Secrets audit, part one: every CLI command, trace and load test, and the committed
notebooks, leak none of the recognizable secrets (see :mod:`support.audit`)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from authzkit.wire.spec import OIDC_TOKEN_PATH

from support.audit import NOTEBOOKS, PIN, Audit, assert_clean, run
from support.loadtest import PACED

pytestmark = pytest.mark.slow


def test_cli_commands_traces_and_load_test_leak_nothing(audit: Audit) -> None:
    outputs = {
        # consent: the audit covers the wrong-answer steps too (the wrong PIN must not leak)
        "demo": run(audit, "demo", "--allow-wrong-answers"),
        "token": run(audit, "token"),
        "keys": run(audit, "keys"),
        "authorize": run(audit, "authorize", "show_account_balance_public"),
        "solve": run(audit, "solve", "transfer_funds"),
        "trace": run(audit, "trace", "challenge", "--out", "traces/challenge.md")
        + run(audit, "trace", "errors", "--allow-wrong-answers", "--out", "traces/errors.md"),
    }
    assert "all 12 steps ended as expected" in outputs["demo"]
    if audit.dialect == "published":  # tokens came from the issuer, by client assertion
        trace = (audit.work / "traces" / "challenge.md").read_text()
        assert f"{OIDC_TOKEN_PATH} → 200" in trace
        assert '"client_assertion": "$CLIENT_ASSERTION"' in trace

    subjects = audit.work / "subjects.csv"
    with subjects.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["subject_token", "resource_id", "resource_type", "pin"])
        writer.writerow([audit.subject_token, audit.resource_id, "srn:resource:account", PIN])
    outputs["loadtest"] = run(
        audit,
        "loadtest",
        "--scenario",
        "challenge",
        "--users",
        "2",
        "--run-time",
        "2s",
        "--wait-time",
        PACED,  # what is judged is what it printed and wrote, not its throughput
        "--no-report",  # authzkit report below writes the page, audited with the rest
        "--subjects",
        str(subjects),
        "--challenge-action",
        "transfer_funds",
        "--out",
        "loadtest-out",
        timeout=240,
    )
    outputs["report"] = run(audit, "report", "loadtest-out")

    for name, text in outputs.items():
        assert_clean(f"the output of authzkit {name}", text, audit.secrets)
    for path in sorted(audit.work.rglob("*")):
        if path.is_file() and path != subjects:
            assert_clean(
                str(path.relative_to(audit.work)), path.read_text(errors="replace"), audit.secrets
            )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_holds_no_secret(notebook: Path, world_secrets: list[str]) -> None:
    # PINs are short digit runs that occur by chance in long outputs; the rest cannot.
    secrets = [secret for secret in world_secrets if not secret.isdigit()]
    assert_clean(f"committed {notebook.name}", notebook.read_text(), secrets)
