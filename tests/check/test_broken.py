"""Broken environments are caught by ``authzkit check`` (issue 12, "Tests that can fail").

The session's sandbox sits behind a :class:`~support.broken_proxy.BrokenProxy` that hides
``/sandbox/v1/*``, so the checker sees a real environment configured through ``AUTHZKIT_*``.
Each hook breaks one promise; the checker must then fail exactly the rows that promise
concerns (dependants skip, they do not fail) and exit 1, through ``run_checks`` and through
``authzkit check --yes``. The unbroken proxy is the control: no fail, exit 0, and the rows
the hooks target all ``pass`` there, so each broken run proves a change of verdict.

The first half tests the proxy itself: each hook really breaks what it says, and nothing
else, seen with the client and with plain HTTP.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import requests

from authzkit import AuthzClient
from authzkit.client.authorize import build_body
from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.sandbox import Sandbox
from authzkit.sandbox.world import World
from authzkit.wire.errors import SolutionEncryptionError
from authzkit.wire.spec import AUTHORIZE_PATH, DISCOVERY_PATH, TOKEN_PATH

from support.broken_proxy import HOOKS, BrokenProxy

PLAIN_ACTION = "show_account_balance_public"
CHALLENGE_ACTION = "transfer_funds"  # asks for a pin in the default world
TIMEOUT = 10.0
BAD_CHALLENGE_SOLUTION = "srn:error:bad_challenge_solution"

# Each hook and the rows of `authzkit check` it must fail — exactly these, no others.
BROKEN_ROWS = {
    "replayed_solution_accepted": {"challenge.single_use"},
    "enc_key_without_kid": {"keys.one_enc_rsa_key"},
    "enc_key_private_member": {"keys.no_private_members"},
    "expires_in_string": {"token.expires_in"},
    "garbage_jwe_500": {"errors.bad_jwe_token"},
    "foreign_resource_accepted": {"challenge.bound_to_resource"},
}
# Of those, the security properties a resource server relies on (marked so in the report).
SECURITY_ROWS = {"challenge.single_use", "challenge.bound_to_resource", "keys.no_private_members"}


def test_every_hook_has_its_rows() -> None:
    assert set(BROKEN_ROWS) == set(HOOKS)


# ------------------------------------------------------------------------------ helpers
@pytest.fixture
def alice_resources(world: World) -> dict[str, str]:
    """Alice's two resources and a resource of bob's (foreign to her)."""
    own = world.owned_by("alice")
    foreign = world.foreign_to("alice")
    assert len(own) >= 2 and foreign is not None
    return {"resource": own[0].id, "second": own[1].id, "type": own[0].type, "foreign": foreign.id}


@pytest.fixture
def open_proxy(sandbox: Sandbox) -> Iterator[Any]:
    """``open_proxy(*hooks)`` → a started proxy in front of the reset sandbox, stopped after
    the test (re-raising any error a proxy handler met)."""
    started: list[BrokenProxy] = []

    def open_(*hooks: str) -> BrokenProxy:
        proxy = BrokenProxy(sandbox, *hooks).start()
        started.append(proxy)
        return proxy

    yield open_
    for proxy in started:
        proxy.stop()


def client_for(proxy: BrokenProxy, sandbox: Sandbox) -> AuthzClient:
    return AuthzClient(
        base_url=proxy.base_url, client_id=sandbox.client_id, client_secret=sandbox.client_secret
    )


def post_authorize(
    proxy: BrokenProxy,
    client: AuthzClient,
    body: dict[str, Any],
) -> requests.Response:
    """The authorize call as plain HTTP, to see status and body exactly as they came."""
    return requests.post(
        proxy.base_url + AUTHORIZE_PATH,
        json=body,
        timeout=TIMEOUT,
        headers={"Authorization": f"Bearer {client.access_token()}"},
    )


def challenge_and_solution(
    client: AuthzClient, subject: str, resource_id: str, pin: str
) -> tuple[ChallengeRequired, str]:
    """A fresh pin challenge on ``resource_id`` and a correct solution for it."""
    outcome = client.authorize(CHALLENGE_ACTION, resource_id=resource_id, subject_token=subject)
    assert isinstance(outcome, ChallengeRequired)
    return outcome, client.build_solution(outcome.challenge_id, "pin", pin)


def solution_body(subject: str, resource_id: str, solution: Any) -> dict[str, Any]:
    return build_body(
        CHALLENGE_ACTION,
        resource_id=resource_id,
        subject_token=subject,
        challenge_solution=solution,
    )


# --------------------------------------------------------------------- the proxy itself
def test_the_proxy_hides_sandbox_paths_and_forwards_the_rest(
    open_proxy: Any, sandbox: Sandbox, world: World, alice_resources: dict[str, str]
) -> None:
    proxy = open_proxy()
    for path in ("/sandbox/v1/stats", "/sandbox/v1/world"):
        assert requests.get(proxy.base_url + path, timeout=TIMEOUT).status_code == 404
    assert (
        requests.post(
            proxy.base_url + "/sandbox/v1/sessions", json={"subject": "alice"}, timeout=TIMEOUT
        ).status_code
        == 404
    )
    assert proxy.hidden == 3
    client = client_for(proxy, sandbox)
    subject = sandbox.session_token("alice")
    assert isinstance(
        client.authorize(
            PLAIN_ACTION, resource_id=alice_resources["resource"], subject_token=subject
        ),
        Authorized,
    )
    solved = client.authorize_with_challenge(
        CHALLENGE_ACTION,
        resource_id=alice_resources["resource"],
        subject_token=subject,
        answers={"pin": world.subject("alice").credentials["pin"]},
    )
    assert isinstance(solved, Authorized)
    assert sandbox.stats()["authorize"] == {"authorized": 2, "srn:error:challenge_required": 1}
    assert proxy.forwarded[AUTHORIZE_PATH] == 3


def test_an_unknown_hook_is_named(sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="no_such_hook"):
        BrokenProxy(sandbox, "no_such_hook")


@pytest.mark.parametrize("hooks", [(), ("replayed_solution_accepted",)])
def test_replayed_solution(
    open_proxy: Any,
    sandbox: Sandbox,
    world: World,
    alice_resources: dict[str, str],
    hooks: tuple[str, ...],
) -> None:
    proxy = open_proxy(*hooks)
    client = client_for(proxy, sandbox)
    subject = sandbox.session_token("alice")
    _, solution = challenge_and_solution(
        client, subject, alice_resources["resource"], world.subject("alice").credentials["pin"]
    )
    body = solution_body(subject, alice_resources["resource"], solution)
    first = post_authorize(proxy, client, body)
    again = post_authorize(proxy, client, body)
    assert first.status_code == 200
    if hooks:
        assert (again.status_code, again.json()) == (200, first.json())
        assert proxy.hooks["replayed_solution_accepted"].count == 1
        assert sandbox.stats()["authorize"]["authorized"] == 1  # the sandbox saw one only
    else:
        assert again.status_code == 403
        assert again.json()["type"] == "srn:error:challenge_not_found"


@pytest.mark.parametrize("hook", ["enc_key_without_kid", "enc_key_private_member"])
def test_broken_enc_key(open_proxy: Any, sandbox: Sandbox, hook: str) -> None:
    proxy = open_proxy(hook)
    keys = requests.get(proxy.base_url + DISCOVERY_PATH, timeout=TIMEOUT).json()["keys"]
    real = requests.get(sandbox.base_url + DISCOVERY_PATH, timeout=TIMEOUT).json()["keys"]
    enc = [k for k in keys if k["use"] == "enc"]
    real_enc = [k for k in real if k["use"] == "enc"]
    assert len(enc) == len(real_enc) == 1
    if hook == "enc_key_without_kid":
        assert "kid" not in enc[0]
        assert {k: v for k, v in real_enc[0].items() if k != "kid"} == enc[0]
    else:
        assert set(enc[0]) - set(real_enc[0]) == {"d"}
        assert enc[0]["n"] == real_enc[0]["n"]
    # the sig key is untouched, and the client refuses such a key
    assert [k for k in keys if k["use"] == "sig"] == [k for k in real if k["use"] == "sig"]
    with pytest.raises(SolutionEncryptionError):
        client_for(proxy, sandbox).encryption_key()
    assert proxy.hooks[hook].count == 2  # our GET and the client's


def test_expires_in_string(open_proxy: Any, sandbox: Sandbox) -> None:
    proxy = open_proxy("expires_in_string")
    answer = requests.post(
        proxy.base_url + TOKEN_PATH,
        timeout=TIMEOUT,
        json={"clientId": sandbox.client_id, "clientSecret": sandbox.client_secret},
    )
    assert answer.status_code == 200
    assert answer.json()["expiresIn"] == str(sandbox.token_ttl)
    assert isinstance(answer.json()["accessToken"], str)
    assert proxy.hooks["expires_in_string"].count == 1


@pytest.mark.parametrize("hooks", [(), ("garbage_jwe_500",)])
def test_garbage_jwe(
    open_proxy: Any,
    sandbox: Sandbox,
    world: World,
    alice_resources: dict[str, str],
    hooks: tuple[str, ...],
) -> None:
    proxy = open_proxy(*hooks)
    client = client_for(proxy, sandbox)
    subject = sandbox.session_token("alice")
    garbage = post_authorize(
        proxy, client, solution_body(subject, alice_resources["resource"], "not-a-jwe")
    )
    if hooks:
        assert garbage.status_code == 500
        assert proxy.hooks["garbage_jwe_500"].count == 1
    else:
        assert garbage.status_code == 403
        assert garbage.json()["type"] == "srn:error:bad_jwe_token"
    # a well-formed solution still goes through, untouched
    _, solution = challenge_and_solution(
        client, subject, alice_resources["resource"], world.subject("alice").credentials["pin"]
    )
    solved = post_authorize(
        proxy, client, solution_body(subject, alice_resources["resource"], solution)
    )
    assert solved.status_code == 200


@pytest.mark.parametrize("hooks", [(), ("foreign_resource_accepted",)])
@pytest.mark.parametrize("other", ["second", "foreign"])
def test_solution_for_another_resource(
    open_proxy: Any,
    sandbox: Sandbox,
    world: World,
    alice_resources: dict[str, str],
    hooks: tuple[str, ...],
    other: str,
) -> None:
    proxy = open_proxy(*hooks)
    client = client_for(proxy, sandbox)
    subject = sandbox.session_token("alice")
    _, solution = challenge_and_solution(
        client, subject, alice_resources["resource"], world.subject("alice").credentials["pin"]
    )
    moved = post_authorize(proxy, client, solution_body(subject, alice_resources[other], solution))
    if hooks:
        assert moved.status_code == 200
        assert moved.json()["action"]["status"] == "authorized"
        assert proxy.hooks["foreign_resource_accepted"].count == 1
    else:
        assert moved.status_code in (401, 403)
        assert moved.json()["type"] != "srn:error:challenge_required"


def test_foreign_resource_hook_leaves_the_right_resource_alone(
    open_proxy: Any, sandbox: Sandbox, world: World, alice_resources: dict[str, str]
) -> None:
    proxy = open_proxy("foreign_resource_accepted")
    client = client_for(proxy, sandbox)
    subject = sandbox.session_token("alice")
    solved = client.authorize_with_challenge(
        CHALLENGE_ACTION,
        resource_id=alice_resources["resource"],
        subject_token=subject,
        answers={"pin": world.subject("alice").credentials["pin"]},
    )
    assert isinstance(solved, Authorized)
    assert proxy.hooks["foreign_resource_accepted"].count == 0


def test_a_proxy_failure_fails_the_test(
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy = BrokenProxy(sandbox).start()

    def explode(request: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(proxy, "_forward", explode)
    assert requests.get(proxy.base_url + DISCOVERY_PATH, timeout=TIMEOUT).status_code == 502
    with pytest.raises(RuntimeError, match="proxy failed"):
        proxy.stop()


# ---------------------------------------------------------------- the checker on them
@pytest.fixture
def check() -> ModuleType:
    """``authzkit.check`` (imported here so that the proxy's own tests run without it)."""
    return importlib.import_module("authzkit.check")


@pytest.fixture
def point_at(
    no_authzkit_env: None,
    monkeypatch: pytest.MonkeyPatch,
    sandbox: Sandbox,
    world: World,
    alice_resources: dict[str, str],
) -> Any:
    """``point_at(proxy)``: ``AUTHZKIT_*`` describe the proxy as a real environment."""
    credentials = world.subject("alice").credentials

    def point(proxy: BrokenProxy) -> None:
        env = {
            "AUTHZKIT_BASE_URL": proxy.base_url,
            "AUTHZKIT_CLIENT_ID": sandbox.client_id,
            "AUTHZKIT_CLIENT_SECRET": sandbox.client_secret,
            "AUTHZKIT_SUBJECT_TOKEN": sandbox.session_token("alice"),
            "AUTHZKIT_RESOURCE_ID": alice_resources["resource"],
            "AUTHZKIT_RESOURCE_TYPE": alice_resources["type"],
            "AUTHZKIT_PLAIN_ACTION": PLAIN_ACTION,
            "AUTHZKIT_CHALLENGE_ACTION": CHALLENGE_ACTION,
            "AUTHZKIT_FOREIGN_RESOURCE_ID": alice_resources["foreign"],
        }
        env.update(
            {f"AUTHZKIT_ANSWER_{kind.upper()}": value for kind, value in credentials.items()}
        )
        for name, value in env.items():
            monkeypatch.setenv(name, str(value))

    return point


def failing(rows: list[dict[str, Any]] | list[Any]) -> set[str]:
    """Ids of the rows whose verdict is ``fail`` (report rows or JSON rows)."""
    return {
        (r["id"] if isinstance(r, dict) else r.id)
        for r in rows
        if (r["verdict"] if isinstance(r, dict) else r.verdict) == "fail"
    }


def run_cli(tmp_path: Path, *options: str) -> tuple[int, dict[str, Any]]:
    """``authzkit check --yes --json FILE …``: the exit code and the JSON report."""
    from authzkit.cli import main

    out = tmp_path / f"check-{len(list(tmp_path.iterdir()))}.json"
    code = main(["check", "--yes", "--json", str(out), *options])
    return code, json.loads(out.read_text())


def test_the_unbroken_proxy_passes_and_sends_no_wrong_answer(
    check: ModuleType, open_proxy: Any, point_at: Any, sandbox: Sandbox, tmp_path: Path
) -> None:
    proxy = open_proxy()
    point_at(proxy)
    asked: list[int] = []

    def confirm(n: int) -> bool:
        asked.append(n)
        return True

    report = check.run_checks(confirm=confirm)
    verdicts = {row.id: row.verdict for row in report.rows}
    assert failing(report.rows) == set(), {
        r.id: r.detail for r in report.rows if r.verdict == "fail"
    }
    assert report.exit_code == 0
    assert report.target["real"] is True and report.target["sandbox"] is False
    assert len(asked) == 1 and asked[0] > 0
    # every row a hook targets really ran: a broken run changes its verdict. Binding to the
    # resource is inconclusive here (the only other resource is bob's: refused as
    # unauthorized whatever the binding), so that row is an informational skip.
    expected = {row: "pass" for rows in BROKEN_ROWS.values() for row in rows}
    expected["challenge.bound_to_resource"] = "skip"
    assert {row: verdicts.get(row) for row in expected} == expected
    assert "inconclusive" in report.row("challenge.bound_to_resource").detail
    assert verdicts["errors.bad_challenge_solution"] == "skip"
    assert sandbox.stats()["authorize"].get(BAD_CHALLENGE_SOLUTION, 0) == 0
    # One GET of /sandbox/v1/world asked whether this is a sandbox (the proxy hid it: a real
    # environment); no other sandbox endpoint was tried.
    assert proxy.hidden == 1

    code, document = run_cli(tmp_path)
    assert (code, failing(document["rows"])) == (0, set())
    assert document["summary"]["fail"] == 0
    assert sandbox.stats()["authorize"].get(BAD_CHALLENGE_SOLUTION, 0) == 0


def test_allow_wrong_answers_sends_exactly_one(
    check: ModuleType, open_proxy: Any, point_at: Any, sandbox: Sandbox, tmp_path: Path
) -> None:
    point_at(open_proxy())
    report = check.run_checks(confirm=lambda n: True, allow_wrong_answers=True)
    assert failing(report.rows) == set()
    assert report.row("errors.bad_challenge_solution").verdict == "pass"
    assert sandbox.stats()["authorize"].get(BAD_CHALLENGE_SOLUTION, 0) == 1

    sandbox.reset()
    code, document = run_cli(tmp_path, "--allow-wrong-answers")
    assert (code, failing(document["rows"])) == (0, set())
    assert sandbox.stats()["authorize"].get(BAD_CHALLENGE_SOLUTION, 0) == 1


@pytest.mark.parametrize("hook", sorted(BROKEN_ROWS))
def test_a_broken_environment_fails_exactly_its_rows(
    check: ModuleType, open_proxy: Any, point_at: Any, tmp_path: Path, hook: str
) -> None:
    expected = BROKEN_ROWS[hook]
    proxy = open_proxy(hook)
    point_at(proxy)
    report = check.run_checks(confirm=lambda n: True)
    assert proxy.hooks[hook].count >= 1, f"the checker never met {hook}"
    assert failing(report.rows) == expected, {
        r.id: r.detail for r in report.rows if r.verdict == "fail"
    }
    assert report.exit_code == 1
    assert all(report.row(row).detail for row in expected)  # it says what came instead
    assert {row for row in expected if report.row(row).security} == expected & SECURITY_ROWS

    proxy = open_proxy(hook)  # a fresh one: hooks such as the replay remember requests
    point_at(proxy)
    code, document = run_cli(tmp_path)
    assert proxy.hooks[hook].count >= 1
    assert (code, failing(document["rows"])) == (1, expected)
    assert document["summary"]["fail"] == len(expected)
