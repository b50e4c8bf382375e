"""``AuthzClient(dialect="authzen")`` against a scripted PDP, for what a well-behaved one
never does: metadata naming another PDP (refused, nothing sent to it), an echo of another
request id, pages that never end, errors by status, no metadata, no search offered; and
the Bearer token sent only when a token method is configured."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from authzkit import AuthzClient
from authzkit.client.authzen import NotOfferedError
from authzkit.wire.authzen import (
    ACCESS_EVALUATION_ENDPOINT,
    EVALUATION_PATH,
    METADATA_PATH,
    SEARCH_PATHS,
    metadata_document,
)
from authzkit.wire.errors import (
    AccessTokenRejectedError,
    AuthzError,
    BadRequestError,
    ConfigError,
    UnexpectedResponseError,
)

from support.fake_pdp import FakePdp

ALICE = {"type": "user", "id": "alice"}
DOC = {"type": "doc", "id": "1"}
TOKEN_PATH = "/api/v3.1/oauth/tokens"  # the draft's token endpoint, below the PDP here


def _permit(body: Any) -> tuple[int, Any]:
    return 200, {"decision": True, "context": {"reason": "owner"}}


@pytest.fixture
def scripted_pdp() -> Iterator[FakePdp]:
    running = FakePdp().start()
    running.routes[METADATA_PATH] = lambda _: (200, metadata_document(running.base_url))
    running.routes[EVALUATION_PATH] = _permit
    try:
        yield running
    finally:
        running.stop()


def _client(scripted_pdp: FakePdp, **options: Any) -> AuthzClient:
    return AuthzClient(base_url=scripted_pdp.base_url, dialect="authzen", **options)


def test_metadata_naming_another_pdp_is_refused_and_nothing_is_asked(scripted_pdp: FakePdp) -> None:
    scripted_pdp.routes[METADATA_PATH] = lambda _: (200, metadata_document("https://pdp.example"))
    with _client(scripted_pdp) as client, pytest.raises(ConfigError) as refused:
        client.evaluate("read", subject=ALICE, resource=DOC)
    assert "'https://pdp.example' is not" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert scripted_pdp.posted(EVALUATION_PATH) == []


def test_every_call_carries_its_own_request_id_and_an_echo_of_another_is_refused(
    scripted_pdp: FakePdp,
) -> None:
    with _client(scripted_pdp) as client:
        outcome = client.evaluate("read", subject=ALICE, resource=DOC)
        assert outcome.authorized and outcome.context == {"reason": "owner"}
        sent = [r.headers.get("X-Request-ID") for r in scripted_pdp.received]
        assert len(sent) == 2 and all(sent) and len(set(sent)) == 2  # metadata, evaluation
        assert all("Authorization" not in r.headers for r in scripted_pdp.received)
        scripted_pdp.echo = "someone-elses-request"
        with pytest.raises(UnexpectedResponseError, match="someone-elses-request"):
            client.evaluate("read", subject=ALICE, resource=DOC)
        scripted_pdp.echo = None  # no echo at all is tolerated (authzkit check grades it)
        assert client.evaluate("read", subject=ALICE, resource=DOC).authorized


def test_without_metadata_the_default_paths_serve(scripted_pdp: FakePdp) -> None:
    del scripted_pdp.routes[METADATA_PATH]
    with _client(scripted_pdp) as client:
        assert client.evaluate("read", subject=ALICE, resource=DOC).authorized
        assert not client.authzen.metadata().published


def test_a_search_the_metadata_leaves_out_is_not_offered(scripted_pdp: FakePdp) -> None:
    members = (ACCESS_EVALUATION_ENDPOINT,)
    scripted_pdp.routes[METADATA_PATH] = lambda _: (
        200,
        metadata_document(scripted_pdp.base_url, members),
    )
    with _client(scripted_pdp) as client, pytest.raises(NotOfferedError, match="search_subject"):
        client.search_subjects(subject="user", action="read", resource=DOC)


def test_pages_that_never_end_are_refused(scripted_pdp: FakePdp) -> None:
    page = {"page": {"next_token": "again"}, "results": [{"type": "user", "id": "alice"}]}
    scripted_pdp.routes[SEARCH_PATHS["subject"]] = lambda _: (200, page)
    with _client(scripted_pdp) as client:
        found = client.search_subjects(subject="user", action="read", resource=DOC, limit=5)
        with pytest.raises(UnexpectedResponseError, match="second time"):
            list(found)
    bodies = scripted_pdp.posted(SEARCH_PATHS["subject"])
    assert bodies[0]["page"] == {"limit": 5}
    assert bodies[1]["page"] == {"limit": 5, "token": "again"}


@pytest.mark.parametrize(
    ("status", "error"),
    [(400, BadRequestError), (401, AccessTokenRejectedError), (500, AuthzError)],
)
def test_an_error_status_is_its_error_with_the_pdps_words(
    scripted_pdp: FakePdp, status: int, error: type[AuthzError]
) -> None:
    scripted_pdp.routes[EVALUATION_PATH] = lambda _: (status, "subject.type is missing")
    with _client(scripted_pdp) as client, pytest.raises(error) as raised:
        client.evaluate("read", subject=ALICE, resource=DOC)
    assert raised.value.status == status and "subject.type is missing" in str(raised.value)


def test_a_batch_with_too_few_answers_is_a_protocol_error(scripted_pdp: FakePdp) -> None:
    scripted_pdp.routes["/access/v1/evaluations"] = lambda _: (
        200,
        {"evaluations": [{"decision": True}]},
    )
    with (
        _client(scripted_pdp) as client,
        pytest.raises(UnexpectedResponseError, match="1 answers to 2"),
    ):
        client.evaluations([{"resource": DOC}, {"resource": DOC}], subject=ALICE, action="read")


def test_a_configured_token_method_sends_a_bearer_token(scripted_pdp: FakePdp) -> None:
    token = {"accessToken": "pdp-token-0123456789", "expiresIn": 900, "tokenType": "Bearer"}
    scripted_pdp.routes[TOKEN_PATH] = lambda _: (200, token)
    with _client(scripted_pdp, client_id="pep", client_secret="pep-secret") as client:
        assert client.evaluate("read", subject=ALICE, resource=DOC).authorized
    asked = [r for r in scripted_pdp.received if r.path == EVALUATION_PATH]
    assert asked[0].headers["Authorization"] == "Bearer pdp-token-0123456789"
