"""The locust-free pieces: subjects, --wait-time, thresholds, durations, import hygiene."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from authzkit.loadtest.child import LOCUST
from authzkit.loadtest.record.context import parse_wait_time
from authzkit.loadtest.record.subjects import subjects_from_csv, subjects_from_world
from authzkit.loadtest.record.summary import threshold_problems
from authzkit.sandbox.world import World
from authzkit.shared.options import parse_duration
from authzkit.wire.children import child_env
from authzkit.wire.errors import ConfigError


def test_subjects_csv(tmp_path: Path) -> None:
    path = tmp_path / "subjects.csv"
    path.write_text(
        "subject_token,resource_id,resource_type,pin,totp_secret\n"
        "tok-1,acc-1,,1234,\n"
        "tok-2,acc-2,srn:resource:card,,JBSWY3DPEHPK3PXP\n"
    )
    first, second = subjects_from_csv(path)
    assert (first.token.reveal(), first.resource_id, first.resource_type) == (
        "tok-1",
        "acc-1",
        "srn:resource:account",
    )
    assert {k: v.reveal() for k, v in first.answers.items()} == {"pin": "1234"}
    assert second.resource_type == "srn:resource:card"
    assert set(second.answers) == {"totp_secret"}
    assert "tok-1" not in repr(first) and "1234" not in repr(first)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("resource_id,pin\nacc,1\n", "lacks subject_token"),
        ("subject_token,resource_id\n,acc\n", ":2: subject_token and resource_id"),
        ("subject_token,resource_id\n", "no subject rows"),
    ],
)
def test_subjects_csv_errors_name_the_problem(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "s.csv"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        subjects_from_csv(path)


def test_subjects_csv_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        subjects_from_csv(tmp_path / "absent.csv")


def test_subjects_from_world(world: World) -> None:
    minted: list[str] = []

    def mint(s: str) -> str:
        minted.append(s)
        return f"token-{s}"

    subjects = subjects_from_world(world, mint)
    assert minted == ["alice", "bob"]  # one session token per subject, not per resource
    owners = {s.label for s in subjects}
    assert owners == {"alice", "bob"}
    alice = next(s for s in subjects if s.label == "alice")
    assert set(alice.answers) == {"pin", "login_password", "totp_secret"}
    assert world.resource_server().client_id == "authzkit-demo"


@pytest.mark.parametrize(
    ("text", "bounds"),
    [
        ("", (0.0, 0.0)),
        ("0", (0.0, 0.0)),
        ("1.5", (1.5, 1.5)),
        ("0.5-2", (0.5, 2.0)),
        (None, (0.0, 0.0)),
    ],
)
def test_parse_wait_time(text: str | None, bounds: tuple[float, float]) -> None:
    assert parse_wait_time(text) == bounds


@pytest.mark.parametrize("text", ["fast", "2-1", "-1", "1-x"])
def test_parse_wait_time_rejects(text: str) -> None:
    with pytest.raises(ConfigError, match="--wait-time"):
        parse_wait_time(text)


def test_thresholds() -> None:
    assert (
        threshold_problems(p95_ms=90, failure_ratio=0.0, max_p95_ms=100, max_failure_ratio=0.0)
        == []
    )
    assert (
        threshold_problems(p95_ms=90, failure_ratio=0.2, max_p95_ms=None, max_failure_ratio=None)
        == []
    )
    problems = threshold_problems(
        p95_ms=150, failure_ratio=0.02, max_p95_ms=100, max_failure_ratio=0.01
    )
    assert problems == [
        "Aggregated p95 150 ms > --max-p95-ms 100",
        "failure ratio 0.0200 > --max-failure-ratio 0.01",
    ]


@pytest.mark.parametrize(
    ("text", "seconds"), [("30", 30), ("30s", 30), ("2m", 120), ("1h30m", 5400), ("1m30s", 90)]
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "1d", "m"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ConfigError, match="run time"):
        parse_duration(text)


def test_only_loadtest_imports_locust() -> None:
    """The command, the report and the support modules never pull locust (or gevent) in."""
    code = (
        "import sys, authzkit.cli, authzkit.loadtest.command, authzkit.loadtest.child, "
        "authzkit.loadtest.record.context, authzkit.loadtest.record.tasks, "
        "authzkit.loadtest.record.summary, authzkit.loadtest.read.tables, "
        "authzkit.loadtest.read.plots, authzkit.loadtest.read.html, "
        "authzkit.sandbox.process\n"
        "authzkit.cli.build_parser()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('locust', 'gevent'))\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=child_env(), capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_users_declare_the_token_endpoint_options() -> None:
    """``--issuer``, ``--token-url``, ``--client-auth`` and ``--client-key-file`` are Locust
    options (checked by a ``locust --list`` subprocess, started as authzkit starts Locust:
    nothing is imported here), and a client authentication outside CLIENT_AUTH_METHODS is
    refused by name."""
    locustfile = Path(__file__).resolve().parents[2] / "locustfiles" / "authorize.py"

    def locust_list(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*LOCUST, "-f", str(locustfile), *options, "--list"],
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    done = locust_list(
        "--issuer",
        "https://accounts.example/auth/realms/r",
        "--token-url",
        "https://accounts.example/token",
        "--client-auth",
        "private_key_jwt",
        "--client-key-file",
        "client.pem",
    )
    assert done.returncode == 0 and "FastAuthorizeUser" in done.stdout, done.stderr
    refused = locust_list("--client-auth", "mutual_tls")
    assert refused.returncode != 0 and "--client-auth: invalid choice" in refused.stderr
