"""``AuthzClient(dialect="authzen")`` against the AuthZEN sandbox (the certification
fixture): one evaluation as Authorized or Denied, a batch in request order under each
semantic with the defaults merged, and a search followed over every page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from authzkit import AuthzClient, Sandbox
from authzkit.client.outcomes import Authorized, Denied
from authzkit.wire.authzen import EVALUATIONS_PATH, SEARCH_PATHS

ALICE = {"type": "user", "id": "alice"}
BOB = {"type": "user", "id": "bob", "properties": {"role": "admin"}}
ACTIVE = {"type": "record", "id": "record-1", "properties": {"status": "active"}}
ARCHIVED = {"type": "record", "id": "record-2", "properties": {"status": "archived"}}


def _one_per_page() -> dict[str, Any]:
    """The certification fixture with pages of one result."""
    shipped = resources.files("authzkit.sandbox.authzen") / "worlds" / "certification.json"
    return {**json.loads(shipped.read_text(encoding="utf-8")), "page_size": 1}


def _bodies(authzen_sandbox: Sandbox, path: str) -> list[dict[str, Any]]:
    return [r.request_body for r in authzen_sandbox.received() if r.url.endswith(path)]


@pytest.fixture(scope="module")
def authzen_sandbox() -> Iterator[Sandbox]:
    with Sandbox(dialect="authzen", world=_one_per_page(), record=True) as running:
        yield running


@pytest.fixture
def authzen_client(authzen_sandbox: Sandbox) -> Iterator[AuthzClient]:
    with AuthzClient(base_url=authzen_sandbox.base_url, dialect="authzen") as made:
        yield made


def test_one_evaluation_is_authorized_or_denied(authzen_client: AuthzClient) -> None:
    permit = authzen_client.evaluate("read", subject=ALICE, resource=ACTIVE)
    deny = authzen_client.evaluate("write", subject=BOB, resource=ACTIVE)
    assert isinstance(permit, Authorized) and permit.authorized and permit.status == "authorized"
    assert isinstance(deny, Denied) and not deny.authorized and deny.status == "denied"
    assert (permit.action, deny.asked and deny.asked.resource_id) == ("read", "record-1")
    assert "denied" in deny._repr_html_()


def test_a_batch_answers_in_request_order_with_the_defaults_merged(
    authzen_client: AuthzClient, authzen_sandbox: Sandbox
) -> None:
    items: list[dict[str, Any]] = [
        {"resource": ACTIVE},  # alice writes record-1: permit
        {"resource": ARCHIVED},  # archived is read-only: deny
        {"action": "read", "resource": ARCHIVED},  # the item's own action: permit
    ]
    outcomes = authzen_client.evaluations(items, subject=ALICE, action="write")
    assert [o.status for o in outcomes] == ["authorized", "denied", "authorized"]
    assert [o.action for o in outcomes] == ["write", "write", "read"]
    sent = _bodies(authzen_sandbox, EVALUATIONS_PATH)[-1]
    assert "options" not in sent  # no semantic named: the PDP's default
    assert sent["subject"] == ALICE and sent["action"] == {"name": "write"}


@pytest.mark.parametrize(
    ("semantic", "statuses"),
    [
        ("execute_all", ["authorized", "denied", "authorized"]),
        ("deny_on_first_deny", ["authorized", "denied"]),
        ("permit_on_first_permit", ["authorized"]),
    ],
)
def test_each_semantic_ends_the_answers_where_it_says(
    authzen_client: AuthzClient, semantic: str, statuses: list[str]
) -> None:
    items = [{"resource": ACTIVE}, {"resource": ARCHIVED}, {"resource": ACTIVE}]
    outcomes = authzen_client.evaluations(items, semantic=semantic, subject=ALICE, action="write")
    assert [o.status for o in outcomes] == statuses


def test_a_search_follows_every_page(authzen_client: AuthzClient, authzen_sandbox: Sandbox) -> None:
    found = list(authzen_client.search_subjects(subject="user", action="read", resource=ACTIVE))
    assert [s["id"] for s in found] == ["alice", "bob"]
    pages = _bodies(authzen_sandbox, SEARCH_PATHS["subject"])[-2:]
    assert "token" not in (pages[0].get("page") or {}) and pages[1]["page"]["token"]
    actions = [a["name"] for a in authzen_client.search_actions(subject=ALICE, resource=ACTIVE)]
    assert actions[:2] == ["read", "write"]
    writable = authzen_client.search_resources(subject=BOB, action="write", resource="record")
    assert [r["id"] for r in writable] == ["record-2"]


def test_a_draft_call_on_an_authzen_client_is_refused_in_words(authzen_client: AuthzClient) -> None:
    from authzkit.wire.errors import ConfigError

    with pytest.raises(ConfigError, match="speaks authzen"):
        authzen_client.authorize("read", resource_id="record-1", subject_token="t")
    with pytest.raises(ConfigError, match="semantic"):
        authzen_client.evaluations([{"resource": ACTIVE}], semantic="all_at_once", subject=ALICE)
