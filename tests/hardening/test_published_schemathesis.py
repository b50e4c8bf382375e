"""schemathesis against the live published-dialect sandbox, from its own OpenAPI document.

The same approach as ``test_schemathesis.py`` (every phase, every check, schema-breaking
data included, each outcome also reached by construction), on the published document: the
OIDC issuer's discovery document and form-encoded token endpoint, the keys and the
published authorize bodies. A few hundred generated cases, not a thousand: the draft run
already fuzzes the shared logic; this one fuzzes what the dialect adds.

Generated token requests take turns of six: as generated; with the real client id; as a
real ``client_secret_post``; with a real, fresh ``private_key_jwt`` assertion; with a
garbage assertion (a real one with its signature cut, or whatever was generated); with an
assertion already used. Authorize requests get the draft run's edits (a real access token
from the issuer, a real session, action, resource and solution). Whatever else a case holds
stays generated, and the edited case is revalidated.
"""

from __future__ import annotations

import copy
import json
from collections import Counter, defaultdict
from collections.abc import Callable
from itertools import count
from typing import Any
from urllib.parse import urlsplit

import hypothesis
import pytest
import requests
import schemathesis

from authzkit.wire import jwe
from authzkit.wire.openapi import openapi_document
from authzkit.wire.spec import CLIENT_ASSERTION_TYPE

from support.openapi_scenarios import (
    PIN_ACTION,
    PLAIN_ACTION,
    Credentials,
    _swap_body,
    authorize_body,
)
from support.tokens import (
    AUTHORIZE_PATH,
    KEYS_PATH,
    OIDC_CONFIGURATION,
    OIDC_TOKEN,
    assertion_form,
    client_assertion,
    fetch_published_access_token,
)

MIN_CASES = 300
FUZZ_EXAMPLES_PER_OPERATION = 100

schema = schemathesis.openapi.from_dict(openapi_document("published"))

STATUSES: Counter[tuple[str, int]] = Counter()
TYPES: Counter[str] = Counter()
CONSTRUCTED: Counter[str] = Counter()
_TURNS: defaultdict[str, count[int]] = defaultdict(count)
_ASSERTION_FIELDS = ("client_secret", "client_assertion", "client_assertion_type")


class PublishedCredentials(Credentials):
    """The published sandbox's real tokens, assertions and world for the generated cases."""

    def __init__(self, sandbox: Any, world: Any) -> None:
        self.sandbox = sandbox
        self.base_url = sandbox.base_url
        self.client_id = sandbox.client_id
        self.client_secret = sandbox.client_secret
        self.access_token = fetch_published_access_token(sandbox)
        self._init_world(sandbox, world)
        self.used_assertion = client_assertion(sandbox)
        response = requests.post(
            self.base_url + OIDC_TOKEN,
            timeout=10,
            data={**assertion_form(sandbox), "client_assertion": self.used_assertion},
        )
        assert response.status_code == 200, response.text

    def _init_world(self, sandbox: Any, world: Any) -> None:
        self.session_token = sandbox.session_token("alice")
        self.credentials = world.subjects["alice"].credentials
        owned = [r for r in world.resources.values() if r.owner == "alice"]
        self.resources: dict[str, tuple[str, str]] = {}
        for resource in world.resources.values():
            self.resources.setdefault(resource.owner, (resource.id, resource.type))
        self.targets = [
            (action.name, resource.id, resource.type)
            for action in world.actions.values()
            for resource in owned
        ]
        keys = requests.get(f"{self.base_url}{KEYS_PATH}", timeout=10).json()["keys"]
        self.key = jwe.PublicKey.from_jwk(next(key for key in keys if key["use"] == "enc"))

    def token_form(self, kind: int, generated: dict[str, Any]) -> dict[str, Any]:
        """The generated form with the credentials of turn ``kind`` (1..5)."""
        form = {k: v for k, v in generated.items() if k not in _ASSERTION_FIELDS}
        form["client_id"] = self.client_id
        if kind == 2:
            form["client_secret"] = self.client_secret
        elif kind == 3:
            form.update(
                client_assertion_type=CLIENT_ASSERTION_TYPE,
                client_assertion=client_assertion(self.sandbox),
            )
        elif kind == 4:  # its signature cut: garbage that looks right
            signed = client_assertion(self.sandbox).rpartition(".")[0]
            form.update(
                client_assertion_type=CLIENT_ASSERTION_TYPE,
                client_assertion=f"{signed}.c2lnbmF0dXJl",
            )
        elif kind == 5:
            form.update(
                client_assertion_type=CLIENT_ASSERTION_TYPE, client_assertion=self.used_assertion
            )
        return form


@pytest.fixture
def published_credentials(published_sandbox: Any, world: Any) -> PublishedCredentials:
    host = urlsplit(published_sandbox.base_url).hostname
    assert host == "127.0.0.1", "fuzz only the loopback sandbox"
    return PublishedCredentials(published_sandbox, world)


def _give_real_credentials(
    case: Any, published_credentials: PublishedCredentials, turn: int
) -> None:
    """Swap generated values for real ones by turn (see the module docstring)."""
    kind = turn % 6
    if kind == 0:
        return
    path = case.operation.path
    if path == OIDC_TOKEN:
        if isinstance(case.body, dict):
            if kind >= 2 and case.headers is not None and "Authorization" in case.headers:
                headers = case.headers.copy()
                del headers["Authorization"]
                case.headers = headers
            case.body = published_credentials.token_form(kind, case.body)
        return
    if case.headers is not None and "Authorization" in case.headers:
        headers = case.headers.copy()
        headers["Authorization"] = f"Bearer {published_credentials.access_token}"
        case.headers = headers
    if path != AUTHORIZE_PATH or kind < 2:
        return
    body = copy.deepcopy(case.body)
    if isinstance(body, dict) and isinstance(body.get("subject"), dict):
        _swap_body(body, published_credentials, turn, kind)
        case.body = body


def outcome_of(response: Any) -> str | None:
    """What a published answer is: an OAuth error, an srn type, or which 200 it is."""
    try:
        body = json.loads(response.content) if response.content else None
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    for key, name in (
        ("access_token", "200 token"),
        ("issuer", "200 configuration"),
        ("keys", "200 keys"),
        ("action", "200 authorized"),
    ):
        if key in body:
            return name
    if isinstance(body.get("error"), str):
        return f"oauth {body['error']}"
    return str(body["type"]) if isinstance(body.get("type"), str) else None


@schema.parametrize()
@hypothesis.settings(
    max_examples=FUZZ_EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_api(
    case: Any, published_credentials: PublishedCredentials, http: requests.Session
) -> None:
    _give_real_credentials(case, published_credentials, next(_TURNS[case.operation.label]))
    assert case.meta is not None  # revalidates the edited case (see test_schemathesis.py)
    response = case.call(base_url=published_credentials.base_url, session=http, timeout=10)
    STATUSES[(case.operation.label, response.status_code)] += 1
    outcome = outcome_of(response)
    if outcome is not None:
        TYPES[outcome] += 1
    case.validate_response(response)


# -- every outcome by construction ---------------------------------------------------------------

Request = tuple[str, str, dict[str, Any]]
FORM = "application/x-www-form-urlencoded"


def _token(
    form: Callable[[PublishedCredentials], dict[str, str]],
) -> Callable[[PublishedCredentials], Request]:
    return lambda c: (OIDC_TOKEN, "POST", {"body": form(c), "media_type": FORM})


def _authorize(
    c: PublishedCredentials,
    *,
    action: str = PLAIN_ACTION,
    owner: str = "alice",
    solution: str | None = None,
    session_token: str | None = None,
    bearer: str | None = None,
) -> Request:
    resource_id, resource_type = c.resources[owner]
    body = authorize_body(
        action, resource_id, resource_type, session_token or c.session_token, solution
    )
    return (
        AUTHORIZE_PATH,
        "POST",
        {"headers": {"Authorization": f"Bearer {bearer or c.access_token}"}, "body": body},
    )


def _solution(
    c: PublishedCredentials,
    payload: Callable[[str], dict[str, Any]],
    key: jwe.PublicKey | None = None,
) -> Request:
    resource_id, resource_type = c.resources["alice"]
    challenge = c.challenge_for(PIN_ACTION, resource_id, resource_type)
    assert challenge is not None
    return _authorize(
        c, action=PIN_ACTION, solution=jwe.encrypt(key or c.key, payload(challenge["id"]))
    )


def _solved(c: PublishedCredentials) -> Request:
    resource_id, resource_type = c.resources["alice"]
    return _authorize(
        c, action=PIN_ACTION, solution=c.solution_for(PIN_ACTION, resource_id, resource_type)
    )


GRANT = {"grant_type": "client_credentials"}
EXPLICIT: dict[str, tuple[str, Callable[[PublishedCredentials], Request]]] = {
    "200 token (private_key_jwt)": ("200 token", _token(lambda c: assertion_form(c.sandbox))),
    "200 token (client_secret_post)": (
        "200 token",
        _token(lambda c: {**GRANT, "client_id": c.client_id, "client_secret": c.client_secret}),
    ),
    "oauth invalid_request": (
        "oauth invalid_request",
        _token(lambda c: {"client_id": c.client_id}),
    ),
    "oauth unsupported_grant_type": (
        "oauth unsupported_grant_type",
        _token(lambda c: {"grant_type": "password"}),
    ),
    "oauth unauthorized_client": (
        "oauth unauthorized_client",
        _token(lambda c: {**GRANT, "client_id": c.client_id, "client_secret": "not-the-secret"}),
    ),
    "oauth invalid_client (garbage assertion)": (
        "oauth invalid_client",
        _token(lambda c: {**assertion_form(c.sandbox), "client_assertion": "not.a.jwt"}),
    ),
    "oauth invalid_client (reused jti)": (
        "oauth invalid_client",
        _token(lambda c: {**assertion_form(c.sandbox), "client_assertion": c.used_assertion}),
    ),
    "oauth invalid_client (no authentication)": (
        "oauth invalid_client",
        _token(lambda c: dict(GRANT)),
    ),
    "200 configuration": ("200 configuration", lambda c: (OIDC_CONFIGURATION, "GET", {})),
    "200 keys": ("200 keys", lambda c: (KEYS_PATH, "GET", {})),
    "200 authorized": ("200 authorized", lambda c: _authorize(c)),
    "200 authorized after a challenge": ("200 authorized", _solved),
    "srn:error:challenge_required": (
        "srn:error:challenge_required",
        lambda c: _authorize(c, action=PIN_ACTION),
    ),
    "401 for the access token": (
        "srn:error:unauthenticated",
        lambda c: _authorize(c, bearer="not-an-access-token"),
    ),
    "401 for the subject": (
        "srn:error:unauthenticated",
        lambda c: _authorize(c, session_token="not-a-session"),
    ),
    "srn:error:bad_authorize_request": (
        "srn:error:bad_authorize_request",
        lambda c: (AUTHORIZE_PATH, "POST", {"headers": c.bearer(), "body": {}}),
    ),
    "srn:error:unauthorized": ("srn:error:unauthorized", lambda c: _authorize(c, owner="bob")),
    "srn:error:bad_jwe_token": (
        "srn:error:bad_jwe_token",
        lambda c: _authorize(c, action=PIN_ACTION, solution="not.a.jwe"),
    ),
    "srn:error:unrecognized_key": (
        "srn:error:unrecognized_key",
        lambda c: _solution(
            c,
            lambda cid: {"challenge_id": cid, "pin": "0000"},
            key=jwe.KeyPair.generate(use="enc", size=2048).public_key(),
        ),
    ),
    "srn:error:wrong_challenge_solution": (
        "srn:error:wrong_challenge_solution",
        lambda c: _solution(c, lambda cid: {"pin": "0"}),
    ),
    "srn:error:challenge_not_found": (
        "srn:error:challenge_not_found",
        lambda c: _solution(c, lambda cid: {"challenge_id": "no-such-challenge", "pin": "0000"}),
    ),
    "srn:error:bad_challenge_solution": (
        "srn:error:bad_challenge_solution",
        lambda c: _solution(c, lambda cid: {"challenge_id": cid, "pin": "0000"}),
    ),
}


@pytest.mark.parametrize("name", list(EXPLICIT))
def test_each_outcome_by_construction(
    name: str, published_credentials: PublishedCredentials, http: requests.Session
) -> None:
    """One request built to get the outcome, sent and judged by schemathesis's checks."""
    expected, build = EXPLICIT[name]
    path, method, kwargs = build(published_credentials)
    case = schema[path][method].Case(**kwargs)
    response = case.call(base_url=published_credentials.base_url, session=http, timeout=10)
    case.validate_response(response)
    assert outcome_of(response) == expected, (response.status_code, response.text)
    assert response.headers["x-request-id"]
    CONSTRUCTED[expected] += 1


def test_enough_cases_ran_and_reached_the_authorize_logic() -> None:
    total = STATUSES.total()
    if total == 0:
        pytest.skip("test_api did not run (deselected)")
    summary = ", ".join(f"{label} {status}: {n}" for (label, status), n in sorted(STATUSES.items()))
    print(
        f"\nschemathesis (published): {total} cases; {summary}\ngenerated cases reached: "
        f"{dict(sorted(TYPES.items()))}\nexplicit cases reached: {sorted(CONSTRUCTED)}"
    )
    assert total >= MIN_CASES, summary
    assert not [key for key in STATUSES if key[1] >= 500], summary
    reached = set(TYPES) | set(CONSTRUCTED)
    expected = {outcome for outcome, _ in EXPLICIT.values()}
    assert expected <= reached, sorted(expected - reached)
    assert {"200 token", "oauth invalid_client"} <= set(TYPES), "generated token cases"
