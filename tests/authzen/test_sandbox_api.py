"""The AuthZEN sandbox's API, in process (Starlette's TestClient): the certification
fixture's mandated decisions and search results, batches, paging and the spec's errors."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from authzkit.sandbox.authzen.app import build_authzen_app
from authzkit.sandbox.authzen.decisions import AuthzenService
from authzkit.sandbox.authzen.world import AuthzenWorld, AuthzenWorldError

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ALICE = {"type": "user", "id": "alice"}
BOB = {"type": "user", "id": "bob"}
ADMIN_BOB = {"type": "user", "id": "bob", "properties": {"role": "admin"}}
RECORD_1 = {"type": "record", "id": "record-1"}
ARCHIVED_2 = {"type": "record", "id": "record-2", "properties": {"status": "archived"}}


def _client(world: str = "certification", **app: Any) -> TestClient:
    service = AuthzenService(AuthzenWorld.packaged(world))
    return TestClient(build_authzen_app(service, base_url="http://testserver", **app))


@pytest.fixture(scope="module")
def certification_app() -> Iterator[TestClient]:
    with _client() as client:
        yield client


def _decision(certification_app: TestClient, subject: Any, action: Any, resource: Any) -> bool:
    response = certification_app.post(
        "/access/v1/evaluation", json={"subject": subject, "action": action, "resource": resource}
    )
    assert response.status_code == 200, response.text
    return bool(response.json()["decision"])


# The certification scenario's decision rules 1-8 (C.1.4).
MANDATED = [
    (ALICE, {"name": "read"}, RECORD_1, True),
    (ALICE, {"name": "write"}, RECORD_1, True),
    (BOB, {"name": "read"}, RECORD_1, True),
    (BOB, {"name": "write"}, RECORD_1, False),
    (ALICE, {"name": "write"}, ARCHIVED_2, False),
    (ADMIN_BOB, {"name": "write"}, ARCHIVED_2, True),
    (ALICE, {"name": "delete", "properties": {"soft": True}}, RECORD_1, True),
    (ALICE, {"name": "delete", "properties": {"soft": False}}, RECORD_1, False),
]


@pytest.mark.parametrize(("subject", "action", "resource", "expected"), MANDATED)
def test_the_certification_fixture_decides_as_mandated(
    certification_app: TestClient, subject: Any, action: Any, resource: Any, expected: bool
) -> None:
    assert _decision(certification_app, subject, action, resource) is expected


def test_context_extra_properties_and_unknown_fields_change_nothing(
    certification_app: TestClient,
) -> None:
    body = {
        "subject": {**ALICE, "properties": {"department": "Sales", "role": "manager"}},
        "action": {"name": "read", "properties": {"method": "GET"}},
        "resource": {**RECORD_1, "properties": {"status": "active", "owner": "bob"}},
        "context": {"time": "2025-06-27T18:03-07:00"},
        "foo": "bar",
        "futureField": {"nested": True},
    }
    response = certification_app.post("/access/v1/evaluation", json=body)
    assert (response.status_code, response.json()) == (200, {"decision": True})
    assert response.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    "body",
    [
        {"action": {"name": "read"}, "resource": RECORD_1},
        {"subject": ALICE, "resource": RECORD_1},
        {"subject": ALICE, "action": {"name": "read"}},
        {"subject": {"id": "alice"}, "action": {"name": "read"}, "resource": RECORD_1},
        {"subject": {"type": "user"}, "action": {"name": "read"}, "resource": RECORD_1},
        {"subject": ALICE, "action": {}, "resource": RECORD_1},
        {"subject": ALICE, "action": {"name": "read"}, "resource": {"id": "record-1"}},
        {"subject": ALICE, "action": {"name": "read"}, "resource": {"type": "record"}},
        {"subject": "alice", "action": {"name": "read"}, "resource": RECORD_1},
        {"subject": ALICE, "action": {"name": 123}, "resource": RECORD_1},
        {"subject": ALICE, "action": {"name": "read"}, "resource": RECORD_1, "context": []},
    ],
)
def test_a_missing_or_mistyped_member_is_a_400(certification_app: TestClient, body: Any) -> None:
    response = certification_app.post("/access/v1/evaluation", json=body)
    assert response.status_code == 400
    assert response.json()["error"]["status"] == 400


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b'{"subject": {}}', "text/plain"),
        (b"{not json", "application/json"),
        (b"", "application/json"),
        (b"[]", "application/json"),
    ],
)
def test_a_wrong_content_type_or_a_malformed_or_empty_body_is_a_400(
    certification_app: TestClient, content: bytes, content_type: str
) -> None:
    for path in ("/access/v1/evaluation", "/access/v1/evaluations", "/access/v1/search/subject"):
        response = certification_app.post(
            path, content=content, headers={"content-type": content_type}
        )
        assert response.status_code == 400, path


def _batch(certification_app: TestClient, body: dict[str, Any]) -> Any:
    response = certification_app.post("/access/v1/evaluations", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_batch_merges_defaults_and_answers_in_request_order(
    certification_app: TestClient,
) -> None:
    active_1 = {**RECORD_1, "properties": {"status": "active"}}
    body = {
        "subject": ALICE,
        "action": {"name": "write"},
        "resource": active_1,
        "evaluations": [{}, {"resource": ARCHIVED_2}],
    }
    assert _batch(certification_app, body) == {
        "evaluations": [{"decision": True}, {"decision": False}]
    }
    swapped = {
        "subject": BOB,
        "resource": RECORD_1,
        "evaluations": [{"action": {"name": "read"}}, {"action": {"name": "write"}}],
    }
    assert [e["decision"] for e in _batch(certification_app, swapped)["evaluations"]] == [
        True,
        False,
    ]


def test_a_batch_without_evaluations_is_one_evaluation(certification_app: TestClient) -> None:
    body = {"subject": ALICE, "action": {"name": "read"}, "resource": RECORD_1}
    assert _batch(certification_app, body) == {"decision": True}
    assert _batch(certification_app, {**body, "evaluations": []}) == {"decision": True}


def test_a_failed_item_is_denied_with_its_error_and_the_rest_still_run(
    certification_app: TestClient,
) -> None:
    body = {
        "subject": ALICE,
        "action": {"name": "read"},
        "options": {"evaluations_semantic": "execute_all"},
        "evaluations": [{"resource": RECORD_1}, {}, {"resource": RECORD_1}],
    }
    first, failed, third = _batch(certification_app, body)["evaluations"]
    assert first == third == {"decision": True}
    assert failed["decision"] is False
    assert "resource is required" in failed["context"]["error"]["message"]


@pytest.mark.parametrize(
    ("semantic", "decisions"),
    [
        ("execute_all", [True, False, True]),
        ("deny_on_first_deny", [True, False]),
        ("permit_on_first_permit", [True]),
    ],
)
def test_the_three_semantics(
    certification_app: TestClient, semantic: str, decisions: list[bool]
) -> None:
    body = {
        "subject": BOB,
        "resource": RECORD_1,
        "options": {"evaluations_semantic": semantic},
        "evaluations": [
            {"action": {"name": "read"}},
            {"action": {"name": "write"}},
            {"action": {"name": "read"}},
        ],
    }
    assert [e["decision"] for e in _batch(certification_app, body)["evaluations"]] == decisions


def test_an_unknown_semantic_is_a_400(certification_app: TestClient) -> None:
    body = {
        "subject": BOB,
        "resource": RECORD_1,
        "options": {"evaluations_semantic": "any"},
        "evaluations": [{"action": {"name": "read"}}],
    }
    assert certification_app.post("/access/v1/evaluations", json=body).status_code == 400


def _search(certification_app: TestClient, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    response = certification_app.post(f"/access/v1/search/{kind}", json=body)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


# The certification scenario's search requirements S1-S6 (C.1.5), with the ids it names.
SEARCHES = [
    (
        "subject",
        {"subject": {"type": "user"}, "action": {"name": "read"}, "resource": RECORD_1},
        ["alice", "bob"],
    ),
    (
        "subject",
        {"subject": ALICE, "action": {"name": "read"}, "resource": RECORD_1},
        ["alice", "bob"],
    ),
    (
        "resource",
        {"subject": ALICE, "action": {"name": "read"}, "resource": {"type": "record"}},
        ["record-1"],
    ),
    ("action", {"subject": ALICE, "resource": RECORD_1}, ["read", "write"]),
    (
        "subject",
        {"subject": {"type": "user"}, "action": {"name": "write"}, "resource": ARCHIVED_2},
        ["bob"],
    ),
    (
        "resource",
        {"subject": ADMIN_BOB, "action": {"name": "write"}, "resource": {"type": "record"}},
        ["record-2"],
    ),
    ("action", {"subject": ADMIN_BOB, "resource": ARCHIVED_2}, ["read", "write"]),
    ("action", {"subject": {"type": "user", "id": "nonexistent-user"}, "resource": RECORD_1}, []),
    (
        "subject",
        {"subject": {"type": "spaceship"}, "action": {"name": "read"}, "resource": RECORD_1},
        [],
    ),
]


@pytest.mark.parametrize(("kind", "body", "expected"), SEARCHES)
def test_the_certification_searches(
    certification_app: TestClient, kind: str, body: dict[str, Any], expected: list[str]
) -> None:
    found = _search(certification_app, kind, body)
    key = "name" if kind == "action" else "id"
    ids = [r[key] for r in found["results"]]
    assert set(expected) <= set(ids) if expected else ids == []  # "at least", as C.1.5 says
    assert found["page"]["next_token"] == ""


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("subject", {"subject": {"type": "user"}, "resource": RECORD_1}),
        ("resource", {"action": {"name": "read"}, "resource": {"type": "record"}}),
        ("action", {"subject": ALICE}),
        (
            "subject",
            {
                "subject": {"type": "user"},
                "action": {"name": "read"},
                "resource": {"type": "record"},
            },
        ),
        (
            "resource",
            {
                "subject": {"type": "user"},
                "action": {"name": "read"},
                "resource": {"type": "record"},
            },
        ),
        ("action", {"subject": {"type": "user"}, "resource": RECORD_1}),
        (
            "subject",
            {
                "subject": {"type": "user"},
                "action": {"name": "read"},
                "resource": RECORD_1,
                "page": {"limit": -1},
            },
        ),
    ],
)
def test_a_search_missing_an_input_is_a_400(
    certification_app: TestClient, kind: str, body: Any
) -> None:
    assert certification_app.post(f"/access/v1/search/{kind}", json=body).status_code == 400


def test_paging_hands_out_every_result_once_then_an_empty_token(
    certification_app: TestClient,
) -> None:
    body = {
        "subject": {"type": "user"},
        "action": {"name": "read"},
        "resource": RECORD_1,
        "page": {"limit": 1},
    }
    first = _search(certification_app, "subject", body)
    assert (first["results"], first["page"]["total"]) == ([ALICE], 2)
    token = first["page"]["next_token"]
    assert token
    second = _search(certification_app, "subject", {**body, "page": {"limit": 1, "token": token}})
    assert second["results"] == [BOB]
    assert second["page"]["next_token"] == ""
    changed = {**body, "action": {"name": "write"}, "page": {"limit": 1, "token": token}}
    assert certification_app.post("/access/v1/search/subject", json=changed).status_code == 400
    garbage = {**body, "page": {"token": "not-a-token"}}
    assert certification_app.post("/access/v1/search/subject", json=garbage).status_code == 400


def test_the_metadata_names_this_pdp_and_every_endpoint(certification_app: TestClient) -> None:
    metadata = certification_app.get("/.well-known/authzen-configuration").json()
    assert metadata["policy_decision_point"] == "http://testserver"
    assert metadata["access_evaluation_endpoint"] == "http://testserver/access/v1/evaluation"
    assert metadata["search_action_endpoint"] == "http://testserver/access/v1/search/action"


def test_a_required_bearer_token_refuses_requests_without_it() -> None:
    body = {"subject": ALICE, "action": {"name": "read"}, "resource": RECORD_1}
    with _client(bearer_token="s3cret") as client:
        refused = client.post("/access/v1/evaluation", json=body)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        allowed = client.post(
            "/access/v1/evaluation", json=body, headers={"Authorization": "Bearer s3cret"}
        )
        assert allowed.json() == {"decision": True}
        assert client.get("/.well-known/authzen-configuration").status_code == 200


TODO_RICK = "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs"
TODO_MORTY = "CiRmZDE2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs"
TODO_BETH = "CiRmZDM2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs"


@pytest.mark.parametrize(
    ("subject", "action", "owner", "expected"),
    [
        (TODO_MORTY, "can_update_todo", "morty@the-citadel.com", True),
        (TODO_MORTY, "can_update_todo", "rick@the-citadel.com", False),
        (TODO_RICK, "can_update_todo", "morty@the-citadel.com", True),  # evil_genius
        (TODO_RICK, "can_delete_todo", "beth@the-smiths.com", True),  # admin
        (TODO_MORTY, "can_delete_todo", "beth@the-smiths.com", False),
        (TODO_BETH, "can_create_todo", None, False),  # viewer
        (TODO_BETH, "can_read_todos", None, True),
    ],
)
def test_the_todo_world_follows_the_interop_scenario(
    subject: str, action: str, owner: str | None, expected: bool
) -> None:
    resource: dict[str, Any] = {"type": "todo", "id": "7240d0db"}
    if owner is not None:
        resource["properties"] = {"ownerID": owner}
    with _client("todo") as client:
        assert _decision(client, {"type": "user", "id": subject}, {"name": action}, resource) is (
            expected
        )


def test_a_world_names_its_origin_and_a_bad_one_is_refused_by_entry() -> None:
    for name in ("certification", "todo"):
        origin = AuthzenWorld.packaged(name).origin
        assert origin["repository"] == "https://github.com/openid/authzen"
        assert len(origin["commit"]) == 40
    with pytest.raises(AuthzenWorldError, match=r"rules\[0\]: effect"):
        AuthzenWorld.from_json({"rules": [{"effect": "maybe"}]})
    with pytest.raises(AuthzenWorldError, match=r"subjects\[0\].id"):
        AuthzenWorld.from_json({"subjects": [{"type": "user"}]})
    with pytest.raises(AuthzenWorldError, match="no packaged AuthZEN world 'nope'"):
        AuthzenWorld.packaged("nope")
    world = AuthzenWorld.from_json(json.loads(json.dumps(AuthzenWorld.packaged("todo").to_json())))
    assert len(world.rules) == 7
