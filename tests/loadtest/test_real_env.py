"""``authzkit loadtest`` against an environment it did not start, as a new user meets one: a
sandbox process with a world of its own (its actions are not the demo names), reached
through ``AUTHZKIT_*`` and ``--subjects FILE``; and the fault flags reaching the sandbox the
command does start. The environment's own counters say what it received."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from authzkit.sandbox.process import SandboxProcess
from authzkit.wire.children import child_env
from authzkit.wire.spec import DEFAULT_CHALLENGE_ACTION, DEFAULT_PLAIN_ACTION

from support.dice import drawn_503s, first_503
from support.loadtest import PACED, write_subjects

pytestmark = pytest.mark.slow

DEFAULT_WORLD = Path(__file__).resolve().parents[2] / "authzkit" / "sandbox" / "default_world.toml"
CHALLENGE, PLAIN = "approve_payment", "view_balance"  # the staging world's names
ACCOUNT = "srn:resource:account"


@pytest.fixture(scope="module")
def staging(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxProcess]:
    """A sandbox process whose actions are not the demo names, started by the test."""
    world = tmp_path_factory.mktemp("staging") / "world.toml"
    text = DEFAULT_WORLD.read_text(encoding="utf-8")
    world.write_text(
        text.replace(f'"{DEFAULT_CHALLENGE_ACTION}"', f'"{CHALLENGE}"').replace(
            f'"{DEFAULT_PLAIN_ACTION}"', f'"{PLAIN}"'
        ),
        encoding="utf-8",
    )
    with SandboxProcess(token_ttl=600, world=world) as sandbox:
        yield sandbox


def authzkit(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "authzkit", *args],
        cwd=cwd,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )


def alice_rows(staging: SandboxProcess) -> list[list[str]]:
    """Alice's session on each of her two accounts: rows 2 and 3 of a subjects file."""
    admin = staging.admin()
    token = admin.session_token("alice", ttl=3600)
    return [
        [token, r["id"], ACCOUNT, "1234"]
        for r in admin.world()["resources"]
        if r["owner"] == "alice"
    ]


def authorize_counts(staging: SandboxProcess) -> dict[str, int]:
    return dict(staging.admin().stats()["authorize"])


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


def stats_rows(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["method"], e["name"]): e for e in json.loads((out / "stats.json").read_text())}


def test_the_demo_action_on_another_environment_stops_before_any_load(
    staging: SandboxProcess, tmp_path: Path
) -> None:
    """The issue's run: a challenge scenario on an environment without ``transfer_funds``.
    Unnamed, the action is a configuration error before any request; named wrongly, the
    preflight's two calls are all the environment receives (a 30 s run would have sent
    thousands)."""
    subjects = write_subjects(tmp_path / "subjects.csv", alice_rows(staging))
    run = (
        "loadtest",
        "--no-report",  # what is judged is printed and counted
        "--scenario",
        "challenge",
        "-u",
        "4",
        "-t",
        "30s",
        "--subjects",
        str(subjects),
    )
    before = staging.admin().stats()
    unnamed = authzkit(*run, "--out", str(tmp_path / "unnamed"), cwd=tmp_path, env=staging.env())
    assert unnamed.returncode == 2, unnamed.stdout + unnamed.stderr
    assert "--challenge-action NAME or set AUTHZKIT_CHALLENGE_ACTION" in unnamed.stderr
    assert staging.admin().stats() == before  # not even a token was asked for

    out = tmp_path / "demo-name"
    done = authzkit(
        *run,
        "--challenge-action",
        DEFAULT_CHALLENGE_ACTION,
        "--out",
        str(out),
        cwd=tmp_path,
        env=staging.env(),
    )
    assert done.returncode == 2, done.stdout + done.stderr
    for part in (
        f"challenge action '{DEFAULT_CHALLENGE_ACTION}' failed for every subject",
        "srn:error:unauthorized (HTTP 403) for subjects.csv:2, subjects.csv:3",
        "No load was sent",
        "--challenge-action NAME or AUTHZKIT_CHALLENGE_ACTION",
    ):
        assert part in done.stderr, done.stderr
    after = staging.admin().stats()
    assert after["tokens_issued"] == before["tokens_issued"] + 1
    assert delta(after["authorize"], before["authorize"]) == {"srn:error:unauthorized": 2}
    assert not (out / "locust.out").exists() and not (out / "stats.json").exists()
    assert json.loads((out / "preflight.json").read_text())["requests"] == {
        "token": 1,
        "authorize": 2,
    }


@dataclass(frozen=True)
class ChallengeRun:
    """One challenge run on the staging environment, for the two tests that judge it."""

    done: subprocess.CompletedProcess[str]
    out: Path
    subjects: list[list[str]]
    authorize_before: dict[str, int]
    authorize_after: dict[str, int]


@pytest.fixture(scope="module")
def challenge_run(
    staging: SandboxProcess, tmp_path_factory: pytest.TempPathFactory
) -> ChallengeRun:
    """``--challenge-action`` names the staging action while ``AUTHZKIT_CHALLENGE_ACTION``
    names the demo one (wrong here), and the subjects file holds an expired session between
    Alice's two good rows."""
    tmp_path = tmp_path_factory.mktemp("challenge-run")
    good, other = alice_rows(staging)
    rows = [good, ["expired-session", good[1], ACCOUNT, "1234"], other]
    subjects = write_subjects(tmp_path / "subjects.csv", rows)
    out = tmp_path / "run"
    before = authorize_counts(staging)
    done = authzkit(
        "loadtest",
        "--no-report",  # what is judged is printed and counted
        "--scenario",
        "challenge",
        "--challenge-action",
        CHALLENGE,
        "-u",
        "2",
        "-t",
        "2s",
        "--wait-time",
        "0.02-0.05",  # counters are judged, not throughput
        "--subjects",
        str(subjects),
        "--out",
        str(out),
        "--quiet",
        "--max-failure-ratio",
        "0",
        cwd=tmp_path,
        env={**staging.env(), "AUTHZKIT_CHALLENGE_ACTION": DEFAULT_CHALLENGE_ACTION},
    )
    return ChallengeRun(done, out, rows, before, authorize_counts(staging))


def test_a_bad_subject_row_is_named_and_the_run_goes_on_without_it(
    challenge_run: ChallengeRun,
) -> None:
    done, out = challenge_run.done, challenge_run.out
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        f"preflight: 3 subjects x '{CHALLENGE}': 2 challenge_required, 1 srn:error:unauthenticated"
    ) in done.stdout
    assert (
        "dropping subject rows refused 'approve_payment': srn:error:unauthenticated "
        "(HTTP 401) for subjects.csv:3"
    ) in done.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["preflight"]["dropped"] == ["subjects.csv:3"]
    assert meta["actions"] == {"plain": None, "challenge": CHALLENGE}
    rows = stats_rows(out)
    assert rows[("FLOW", "challenge round trip")]["num_requests"] > 0
    assert sum(r["num_failures"] for r in rows.values()) == 0  # the bad row never ran
    # The environment saw one unauthenticated call: the preflight's.
    seen = delta(challenge_run.authorize_after, challenge_run.authorize_before)
    assert seen["srn:error:unauthenticated"] == 1
    assert meta["command"] == "loadtest"  # the authzkit command; Locust's: locust_command
    argv = meta["locust_command"]
    copy = Path(argv[argv.index("--subjects") + 1])
    assert copy.parent != out and not copy.exists()  # a private copy, removed after the run
    for path in out.iterdir():  # session tokens stay in the subjects file
        assert challenge_run.subjects[0][0].encode() not in path.read_bytes(), path.name


def test_the_option_wins_over_the_variable(challenge_run: ChallengeRun) -> None:
    """``AUTHZKIT_CHALLENGE_ACTION`` names the demo action (wrong here), the option the right
    one: the option is what the preflight and the users send."""
    done, out = challenge_run.done, challenge_run.out
    assert done.returncode == 0, done.stdout + done.stderr
    meta = json.loads((out / "run.json").read_text())
    argv = meta["locust_command"]
    assert argv[argv.index("--challenge-action") + 1] == CHALLENGE
    assert json.loads((out / "preflight.json").read_text())["action"] == CHALLENGE
    solutions = stats_rows(out)[("POST", "authorize:solution")]
    assert solutions["num_failures"] == 0 < solutions["num_requests"]
    # not one call named the demo action: the staging world would have refused it
    assert "srn:error:unauthorized" not in delta(
        challenge_run.authorize_after, challenge_run.authorize_before
    )


# --error-rate 0.1 --fault-seed 2: the third request the sandbox receives is its first 503.
ERROR_RATE, FAULT_SEED = 0.1, 2


def test_fault_flags_reach_the_sandbox_the_command_starts(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = authzkit(
        "loadtest",
        "--no-report",  # what is judged is printed and counted
        "--scenario",
        "challenge",
        "-u",
        "2",
        "-t",
        "3s",
        "--wait-time",
        PACED,  # the faults are counted, not the throughput
        "--error-rate",
        str(ERROR_RATE),
        "--fault-seed",
        str(FAULT_SEED),
        "--rotate-keys-every",
        "1",
        "--latency-ms",
        "1",
        "--pause-every",
        "1",
        "--pause-ms",
        "200",
        "--out",
        str(out),
        "--quiet",
        cwd=tmp_path,
    )
    assert (out / "stats.json").exists(), done.stdout + done.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["faults"] == {
        "latency_ms": "1",
        "error_rate": ERROR_RATE,
        "fault_seed": FAULT_SEED,
        "rotate_keys_every": 1.0,
        "pause_every": 1.0,
        "pause_ms": 200.0,
    }
    assert meta["preflight"]["ran"] is False  # its own sandbox, its demo actions
    sandbox = json.loads((out / "sandbox_stats.json").read_text())
    faults = sandbox["faults"]
    rows = stats_rows(out)
    # --error-rate with --fault-seed: the requests the sandbox received drew exactly the
    # seed's 503s, whichever endpoint each went to, and the run saw each of them as a
    # failure of its row. One round trip (a token, a first ask) is enough calls to draw one.
    received = sum(n for name, n in faults.items() if name.startswith("requests:"))
    injected = {
        name.removeprefix("unavailable:"): n
        for name, n in faults.items()
        if name.startswith("unavailable:")
    }
    assert received > first_503(ERROR_RATE, FAULT_SEED)
    assert sum(injected.values()) == drawn_503s(ERROR_RATE, FAULT_SEED, received) > 0
    by_row: Counter[str] = Counter()
    for failure in json.loads((out / "summary.json").read_text())["failures"]:
        if failure["type"] != "FLOW" and "HTTP 503" in failure["error"]:
            by_row[failure["name"]] += failure["occurrences"]
    seen: Counter[str] = Counter()
    for name, count in by_row.items():
        seen[name.split(":")[0]] += count  # authorize:solution is an authorize call too
    assert dict(seen) == injected
    # 503s are answered in front of the service, which never counted them.
    first_asks = rows[("POST", "authorize")]["num_requests"]
    assert sandbox["challenges_issued"] == first_asks - by_row["authorize"]
    # the sandbox's own fault counters: every flag took effect, the pause and latency too
    # --rotate-keys-every: the key changed under the users, who fetched it again (a fetch
    # answered by an injected 503 never reached the service's counter).
    assert sandbox["authorize"].get("srn:error:unrecognized_key", 0) >= 1
    keys = rows[("GET", "keys")]["num_requests"]
    assert sandbox["keys_served"] == keys - injected.get("keys", 0) >= 2
    # POST /authorize carries both rows of a round trip: the first ask and the solution
    sent = sum(
        row["num_requests"]
        for (method, name), row in rows.items()
        if method == "POST" and name.startswith("authorize")
    )
    assert faults["requests:authorize"] == sent
    assert faults["key_rotations"] >= 1
    # --pause-*: a fifth of every second paused, so each second's traffic meets a pause (a
    # rotation due at the same moment swaps in a key made ahead; it does not hold the loop)
    held = sum(count for name, count in faults.items() if name.startswith("held:"))
    assert faults["pauses"] >= 1 and held >= 1
    assert faults["delayed:authorize"] == faults["requests:authorize"]


def test_a_named_action_is_asked_first_on_the_started_sandbox_and_kept_apart(
    tmp_path: Path,
) -> None:
    """Named, an action may not exist in the sandbox's world either: the preflight asks, and
    its requests stay out of the run's numbers, the sandbox's counters included."""
    out = tmp_path / "run"
    done = authzkit(
        "loadtest",
        "--no-report",  # what is judged is printed and counted
        "--scenario",
        "challenge",
        "--challenge-action",
        "close_account",
        "-u",
        "2",
        "-t",
        "2s",
        "--wait-time",
        "0.02-0.05",  # counters are judged, not throughput
        "--out",
        str(out),
        "--quiet",
        "--max-failure-ratio",
        "0",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "preflight: 3 subjects x 'close_account': 3 challenge_required" in done.stdout
    assert json.loads((out / "preflight.json").read_text())["requests"] == {
        "token": 1,
        "authorize": 3,
    }
    sandbox = json.loads((out / "sandbox_stats.json").read_text())
    rows = stats_rows(out)
    assert sandbox["tokens_issued"] == rows[("POST", "token")]["num_requests"]
    assert sandbox["challenges_issued"] == rows[("POST", "authorize")]["num_requests"]
