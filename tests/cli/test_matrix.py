"""``authzkit matrix``: the policy table a user reads, plain requests only, clear refusals."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit.cli import main
from authzkit.shared.connection import Connection, connect
from authzkit.shared.matrix import PolicyMatrix, plan_matrix, policy_matrix
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError

from support.leaks import shows

SANDBOX_FLAGS = ["--key-size", "2048"]
ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"  # the default world's fixed ids
BOB_ACCOUNT = "b3e9f1a4-2d7c-4a6b-9e8f-1c2d3e4f5a33"
# What alice may do on her own accounts in the default world (and nothing on bob's).
ALICE_OWN = {
    "show_account_balance_public": "authorized",
    "transfer_funds": "challenge: pin",
    "change_contact_details": "challenge: login_password",
    "close_account": "challenge: totp",
    "add_payee": "challenge: pin, totp",
}
REAL_ENV = {
    "AUTHZKIT_BASE_URL": "https://authz.example.test",
    "AUTHZKIT_CLIENT_ID": "partner",
    "AUTHZKIT_CLIENT_SECRET": "partner-secret-value",
    "AUTHZKIT_SUBJECT_TOKEN": "subject-session-token-value",
}


def row_of(out: str, action: str) -> list[str]:
    """The printed table row of ``action``, split into its columns."""
    line = next(line for line in out.splitlines() if line.startswith(action + " "))
    return [cell.strip() for cell in line[len(action) :].split("  ") if cell.strip()]


@pytest.mark.usefixtures("no_authzkit_env")
@pytest.mark.parametrize("dialect", ["draft", "published"])
def test_the_default_world_as_a_table(
    dialect: str, capsys: pytest.CaptureFixture[str], world_secrets: list[str]
) -> None:
    assert main(["matrix", "--dialect", dialect, *SANDBOX_FLAGS]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(
        "subject alice: 5 action(s) x 3 resource(s) = 15 plain authorize request(s)"
    )
    header = next(line for line in out.splitlines() if line.startswith("action "))
    assert header.split("  ")[-1].strip() == "b3e9f1a4… (bob)"
    for action, expected in ALICE_OWN.items():
        assert row_of(out, action) == [expected, expected, "unauthorized"]
    assert f"b3e9f1a4… (bob)    {BOB_ACCOUNT}  srn:resource:account" in out
    assert "15 cells: 2 authorized, 8 challenge, 5 unauthorized" in out
    for secret in world_secrets:
        assert not shows(secret, out)


@pytest.mark.usefixtures("no_authzkit_env")
def test_chosen_subject_actions_and_resources(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "matrix",
                "--subject",
                "bob",
                "--actions",
                "transfer_funds, no_such_action",
                "--resources",
                f"{ALICE_ACCOUNT},{BOB_ACCOUNT}",
                *SANDBOX_FLAGS,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("subject bob: 2 action(s) x 2 resource(s) = 4 plain")
    assert row_of(out, "transfer_funds") == ["unauthorized", "challenge: pin"]
    assert row_of(out, "no_such_action") == ["unauthorized", "unauthorized"]


@pytest.mark.usefixtures("no_authzkit_env")
def test_an_unknown_sandbox_subject_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--subject", "mallory", *SANDBOX_FLAGS]) == 2
    err = capsys.readouterr().err
    assert err.startswith("authzkit matrix:") and "mallory" in err and "alice" in err


@pytest.mark.usefixtures("no_authzkit_env")
@pytest.mark.parametrize(
    ("missing", "option"), [("--actions", "--actions a,b"), ("--resources", "--resources r1,r2")]
)
def test_a_real_environment_needs_actions_and_resources(
    missing: str, option: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in REAL_ENV.items():
        monkeypatch.setenv(name, value)
    given = {"--actions": ["--resources", "r1"], "--resources": ["--actions", "a"]}[missing]
    # The host does not exist: a request would fail differently (exit 1), not with exit 2.
    assert main(["matrix", *given]) == 2
    captured = capsys.readouterr()
    assert option in captured.err
    assert captured.out == ""  # refused before announcing (or sending) anything
    assert not shows(REAL_ENV["AUTHZKIT_CLIENT_SECRET"], captured.err)
    assert not shows(REAL_ENV["AUTHZKIT_SUBJECT_TOKEN"], captured.err)


def test_real_environment_defaults_come_from_settings() -> None:
    settings = Settings.from_env(
        {
            **REAL_ENV,
            "AUTHZKIT_RESOURCE_ID": "acc-1",
            "AUTHZKIT_RESOURCE_TYPE": "srn:resource:card",
        },
        dotenv=None,
    )
    with pytest.raises(ConfigError, match="--actions"):
        plan_matrix(settings)
    plan = plan_matrix(settings, actions="balance,transfer")
    assert plan.subject == "AUTHZKIT_SUBJECT_TOKEN"
    assert plan.actions == ("balance", "transfer")
    assert [(r.id, r.type) for r in plan.resources] == [("acc-1", "srn:resource:card")]
    assert plan.requests == 2
    from_variables = Settings.from_env(
        {
            **REAL_ENV,
            "AUTHZKIT_PLAIN_ACTION": "balance",
            "AUTHZKIT_CHALLENGE_ACTION": "transfer",
            "AUTHZKIT_RESOURCE_ID": "acc-1",
            "AUTHZKIT_FOREIGN_RESOURCE_ID": "acc-9",
        },
        dotenv=None,
    )
    plan = plan_matrix(from_variables)
    assert plan.actions == ("balance", "transfer")
    assert [r.id for r in plan.resources] == ["acc-1", "acc-9"]
    with pytest.raises(ConfigError, match="--subject"):
        plan_matrix(settings, subject="alice", actions="balance")
    no_token = Settings.from_env(
        {k: v for k, v in REAL_ENV.items() if k != "AUTHZKIT_SUBJECT_TOKEN"}, dotenv=None
    )
    with pytest.raises(ConfigError, match="AUTHZKIT_SUBJECT_TOKEN"):
        plan_matrix(no_token, actions="a", resources="r")


@pytest.fixture(scope="module", params=["draft", "published"])
def dialect_connection(request: pytest.FixtureRequest) -> Iterator[Connection]:
    with connect(Settings(), key_size=2048, dialect=request.param) as connection:
        yield connection


def test_no_solution_is_ever_sent(dialect_connection: Connection) -> None:
    sandbox = dialect_connection.sandbox
    assert sandbox is not None
    sandbox.reset()
    matrix = policy_matrix(dialect_connection)
    assert isinstance(matrix, PolicyMatrix)
    assert matrix.cell("transfer_funds", ALICE_ACCOUNT).outcome == "challenge: pin"
    assert matrix.cell("show_account_balance_public", BOB_ACCOUNT).kind == "unauthorized"
    stats = sandbox.stats()
    # 2 authorized, 8 challenges, 5 refusals: exactly one plain request per cell; a
    # solution would have answered authorized or a solution error instead of a challenge.
    assert stats["authorize"] == {
        "authorized": 2,
        "srn:error:challenge_required": 8,
        "srn:error:unauthorized": 5,
    }
    assert stats["challenges_issued"] == 8


def test_the_frame_has_one_row_per_action(dialect_connection: Connection) -> None:
    pytest.importorskip("pandas")
    matrix = policy_matrix(dialect_connection, actions=["close_account", "add_payee"])
    frame = matrix.to_frame()
    assert list(frame.index) == ["close_account", "add_payee"]
    assert frame.loc["add_payee", "b3e9f1a4… (bob)"] == "unauthorized"
    assert frame.loc["close_account"].tolist()[:2] == ["challenge: totp"] * 2
    html = matrix.styled().to_html()
    assert "background-color: #fff1c2" in html and "background-color: #ffd7d5" in html
