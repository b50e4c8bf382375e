"""The command line as a user runs it: demo transcript, token, keys, authorize, solve."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from authzkit.cli import main

from support.leaks import shows

pytestmark = pytest.mark.usefixtures("no_authzkit_env")
SANDBOX_FLAGS = ["--key-size", "2048"]


def test_demo_walks_every_flow_and_prints_no_secret(world_secrets: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "authzkit", "demo", *SANDBOX_FLAGS],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for expected in (
        "token (client credentials)",
        "200  authorized (shape A",
        "403  challenge_required: pin",
        "200  authorized (shape B)",
        "srn:error:unauthenticated",
        "srn:error:unauthorized",
        "srn:error:bad_jwe_token",
        "srn:error:unrecognized_key",
        "srn:error:wrong_challenge_solution",
        "srn:error:bad_challenge_solution",
        "srn:error:challenge_not_found",
        "all 12 steps ended as expected",
    ):
        assert expected in out
    assert "unexpected" not in out
    for secret in world_secrets:
        assert not shows(secret, out + result.stderr)


def test_token_is_masked_unless_asked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", *SANDBOX_FLAGS]) == 0
    masked = capsys.readouterr().out
    assert "expiresIn 900 s" in masked
    assert not re.search(r"[\w-]{10,}\.[\w-]{10,}\.", masked), "a JWT was printed"
    assert main(["token", "--show", *SANDBOX_FLAGS]) == 0
    assert capsys.readouterr().out.strip().count(".") == 2  # the JWT itself
    assert main(["token", "--dialect", "published", *SANDBOX_FLAGS]) == 0
    assert "(bearer, expiresIn 900 s;" in capsys.readouterr().out  # as the service sent it


def test_keys_shows_the_public_enc_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", *SANDBOX_FLAGS]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["jwk"]["use"] == "enc" and shown["jwk"]["kid"] == shown["use=enc kid"]
    assert "d" not in shown["jwk"]


def test_authorize_and_solve(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["authorize", "show_account_balance_public", *SANDBOX_FLAGS]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "authorized"
    assert main(["authorize", "close_account", *SANDBOX_FLAGS]) == 0
    challenge = json.loads(capsys.readouterr().out)
    assert challenge["outcome"] == "challenge_required"
    assert challenge["required_types"] == ["totp"]
    assert main(["solve", "close_account", "--subject", "bob", *SANDBOX_FLAGS]) == 0
    solved = json.loads(capsys.readouterr().out)
    assert (solved["outcome"], solved["shape"]) == ("authorized", "B")


def test_errors_are_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["authorize", "show_account_balance_public", "--subject", "mallory", *SANDBOX_FLAGS])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("authzkit authorize:") and "mallory" in err
    assert "Traceback" not in err


def test_bad_configuration_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTHZKIT_BASE_URL", "not a url")
    assert main(["token"]) == 2
    assert "AUTHZKIT_BASE_URL" in capsys.readouterr().err


def test_demo_on_the_published_dialect(world_secrets: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "authzkit", "demo", "--dialect", "published", *SANDBOX_FLAGS],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for expected in (
        "token (client credentials, private_key_jwt)",
        "bearer, expiresIn 900 s",
        "200  authorized (shape A, id ",
        "403  challenge_required: pin",
        "401  srn:error:unauthenticated",
        "srn:error:unauthorized",
        "srn:error:bad_jwe_token",
        "srn:error:unrecognized_key",
        "srn:error:wrong_challenge_solution",
        "srn:error:bad_challenge_solution",
        "srn:error:challenge_not_found",
        "all 12 steps ended as expected",
    ):
        assert expected in out
    assert "unexpected" not in out
    assert "PRIVATE KEY" not in out + result.stderr
    assert not re.search(r"eyJ[\w-]+\.", out + result.stderr), "a JWT or JWE was printed"
    for secret in world_secrets:
        assert not shows(secret, out + result.stderr)


def test_each_command_is_built_from_its_own_module_only() -> None:
    """``COMMANDS`` names, for every command ``--help`` lists, the module that adds it; a
    command line naming one imports that module and no other command's module it does
    not import itself."""
    from authzkit.cli.main import COMMANDS, build_parser

    listed = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(listed) == list(COMMANDS)  # type: ignore[arg-type]
    for command in COMMANDS:
        alone = build_parser([command])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        assert command in alone  # type: ignore[operator]
    # One fresh process per module (its commands share it): a process's imports are its own.
    for module, command in {m: c for c, m in reversed(COMMANDS.items())}.items():
        others = {m for m in COMMANDS.values() if m != module}
        code = (
            f"import sys\nimport {module}\nown = set(sys.modules)\n"
            "from authzkit.cli.main import build_parser\n"
            f"build_parser([{command!r}])\n"
            f"print(sorted(m for m in {sorted(others)!r} if m in set(sys.modules) - own))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
        )
        assert done.stdout.strip() == "[]", f"authzkit {command} imported {done.stdout}"
