"""The AuthZEN wire facts the client, the sandbox and the check share (authzkit.wire.authzen)."""

from __future__ import annotations

import pytest

from authzkit.wire import authzen


def test_metadata_lives_between_host_and_path() -> None:
    assert authzen.metadata_url("https://pdp.example.com") == (
        "https://pdp.example.com/.well-known/authzen-configuration"
    )
    assert authzen.metadata_url("https://pdp.example.com/tenant1") == (
        "https://pdp.example.com/.well-known/authzen-configuration/tenant1"
    )


def test_an_endpoint_comes_from_the_metadata_else_its_default_path() -> None:
    metadata = {authzen.ACCESS_EVALUATION_ENDPOINT: "https://other.example/eval"}
    assert authzen.endpoint_url("https://pdp", authzen.ACCESS_EVALUATION_ENDPOINT, metadata) == (
        "https://other.example/eval"
    )
    assert authzen.endpoint_url("https://pdp/", authzen.SEARCH_ACTION_ENDPOINT, metadata) == (
        "https://pdp/access/v1/search/action"
    )


def test_metadata_naming_another_pdp_is_refused() -> None:
    document = authzen.metadata_document("https://pdp.example.com")
    assert authzen.metadata_problem(document, "https://pdp.example.com/") is None
    problem = authzen.metadata_problem(document, "https://evil.example.com")
    assert problem is not None and "policy_decision_point" in problem
    assert authzen.metadata_problem({"policy_decision_point": "https://p"}, "https://p") == (
        "the metadata has no access_evaluation_endpoint"
    )


def test_defaults_fill_only_what_an_evaluation_omits_and_replace_whole_entities() -> None:
    body = {
        "subject": {"type": "user", "id": "alice"},
        "action": {"name": "write"},
        "resource": {"type": "record", "id": "record-1", "properties": {"status": "active"}},
        "context": {"time": "t0"},
        "evaluations": [{}, {"resource": {"type": "record", "id": "record-2"}, "context": {}}],
    }
    first, second = authzen.merge_defaults(body)
    assert first == {k: body[k] for k in ("subject", "action", "resource", "context")}
    assert second["resource"] == {"type": "record", "id": "record-2"}  # no property merging
    assert second["context"] == {}
    assert second["subject"] == body["subject"]


@pytest.mark.parametrize(
    ("semantic", "decision", "stops"),
    [
        ("execute_all", False, False),
        ("execute_all", True, False),
        ("deny_on_first_deny", False, True),
        ("deny_on_first_deny", True, False),
        ("permit_on_first_permit", True, True),
        ("permit_on_first_permit", False, False),
    ],
)
def test_short_circuits(semantic: str, decision: bool, stops: bool) -> None:
    assert authzen.stops_after(semantic, decision) is stops


def test_an_evaluations_request_names_its_semantic_and_refuses_unknown_ones() -> None:
    body = authzen.evaluations_request(
        [{"action": authzen.action("read")}],
        semantic="deny_on_first_deny",
        subject=authzen.entity("user", "alice"),
    )
    assert body == {
        "subject": {"type": "user", "id": "alice"},
        "options": {"evaluations_semantic": "deny_on_first_deny"},
        "evaluations": [{"action": {"name": "read"}}],
    }
    assert authzen.semantic_of(body) == "deny_on_first_deny"
    assert authzen.semantic_of({}) == authzen.DEFAULT_SEMANTIC == "execute_all"
    with pytest.raises(ValueError, match="unknown evaluations semantic"):
        authzen.evaluations_request([], semantic="first_wins")


def test_paging_follows_next_token_until_empty() -> None:
    request = {"subject": {"type": "user"}, "page": {"limit": 2}}
    assert authzen.with_page_token(request, "abc")["page"] == {"limit": 2, "token": "abc"}
    assert authzen.next_token({"page": {"next_token": "xyz"}}) == "xyz"
    assert authzen.next_token({"results": []}) == ""


def test_answer_shapes() -> None:
    assert authzen.decision_problem({"decision": True, "context": {}}) is None
    assert authzen.decision_problem({"decision": "true"}) is not None
    assert authzen.search_result_problem("action", {"name": "read"}) is None
    assert authzen.search_result_problem("subject", {"type": "user"}) is not None


def test_a_property_value_is_json_when_it_parses() -> None:
    assert authzen.property_value("true") is True
    assert authzen.property_value("42") == 42
    assert authzen.property_value("admin") == "admin"
