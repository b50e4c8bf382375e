"""schemathesis against the live sandbox, from the shipped OpenAPI document.

Every phase runs (the document's examples, schemathesis's systematic coverage cases, and
random fuzzing, each with schema-valid and schema-breaking data) and every response goes
through schemathesis's checks: no 5xx, only documented statuses and content types, bodies
that validate against the document, schema-breaking data rejected, auth not ignored.

Most generated requests get a real access token, so the generator reaches the authorize
logic rather than stopping at 401; one in six keeps the generated garbage (or no) token.
In turn, requests also get a real session token, a real action and resource of the world,
and a really encrypted solution, so that both success shapes, the challenge and the
challenge-solution errors are fuzzed too, with every other field still generated. The
edited case is revalidated, so schemathesis judges it by what was actually sent. The last
test checks that enough cases ran (at least 1,000) and what they reached.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterator
from itertools import count
from typing import Any
from urllib.parse import urlsplit

import hypothesis
import pyotp
import pytest
import requests
import schemathesis

from authzkit import jwe
from authzkit.openapi import openapi_document

from .conftest import AUTHORIZE_PATH, KEYS_PATH, TOKEN_PATH, fetch_access_token

MIN_CASES = 1000
FUZZ_EXAMPLES_PER_OPERATION = 500

schema = schemathesis.openapi.from_dict(openapi_document())

# What the generated cases got back, filled by test_api, checked by the summary test.
STATUSES: Counter[tuple[str, int]] = Counter()
TYPES: Counter[str] = Counter()
_turn = count()


class Credentials:
    """The sandbox's real tokens and world, handed to the generated cases."""

    def __init__(self, sandbox: Any, world: Any) -> None:
        self.base_url = sandbox.base_url
        self.client_id = sandbox.client_id
        self.client_secret = sandbox.client_secret
        self.access_token = fetch_access_token(sandbox.base_url, sandbox.client_id,
                                               sandbox.client_secret)
        self.session_token = sandbox.session_token("alice")
        self.credentials = world.subjects["alice"].credentials
        owned = [r for r in world.resources.values() if r.owner == "alice"]
        self.targets = [(action.name, resource.id, resource.type)
                        for action in world.actions.values() for resource in owned]
        keys = requests.get(f"{self.base_url}{KEYS_PATH}", timeout=10).json()["keys"]
        self.key = jwe.PublicKey.from_jwk(next(key for key in keys if key["use"] == "enc"))

    def solution_for(self, action: str, resource_id: str, resource_type: str) -> str | None:
        """A correct, encrypted solution of a fresh challenge; None when none is demanded."""
        body = {"action": {"name": action, "context": {"resource_id": resource_id,
                                                        "resource_type": resource_type}},
                "subject": {"token": self.session_token}}
        answer = requests.post(f"{self.base_url}{AUTHORIZE_PATH}", json=body, timeout=10,
                               headers={"Authorization": f"Bearer {self.access_token}"})
        challenge = answer.json().get("challenge") if answer.status_code == 403 else None
        if not isinstance(challenge, dict):
            return None
        kind = challenge["required_types"][0]
        secret = self.credentials[kind]
        value = pyotp.TOTP(secret).now() if kind == "totp" else secret
        return jwe.encrypt(self.key, {"challenge_id": challenge["id"], kind: value})


@pytest.fixture
def credentials(sandbox: Any, world: Any) -> Credentials:
    assert urlsplit(sandbox.base_url).hostname == "127.0.0.1", "fuzz only the loopback sandbox"
    return Credentials(sandbox, world)


@pytest.fixture
def session() -> Iterator[requests.Session]:
    with requests.Session() as http:
        yield http


def _give_real_tokens(case: Any, credentials: Credentials, turn: int) -> None:
    """Swap generated values for real ones, a little more on each turn of six.

    0: as generated (garbage or missing access token); 1: a real access token; 2: and a
    real subject token; 3: and a real action and resource; 4: and no challenge_solution
    (so shape A or a challenge comes back); 5: and a solution that is really encrypted for
    a fresh challenge (so shape B comes back). Token requests get a real client id on turn
    2, and the real secret too on turn 3. Whatever else a case holds stays generated.
    Copies are edited and assigned back: generated cases may share nested containers.
    """
    kind = turn % 6
    if kind == 0:
        return
    if case.headers is not None and "Authorization" in case.headers:
        headers = case.headers.copy()
        headers["Authorization"] = f"Bearer {credentials.access_token}"
        case.headers = headers
    if case.operation.path == TOKEN_PATH and kind in (2, 3) and isinstance(case.body, dict):
        case.body = {**case.body, "clientId": credentials.client_id,
                     **({"clientSecret": credentials.client_secret} if kind == 3 else {})}
    if case.operation.path != AUTHORIZE_PATH or kind < 2:
        return
    body = copy.deepcopy(case.body)
    if not isinstance(body, dict) or not isinstance(body.get("subject"), dict):
        return
    _swap_body(body, credentials, turn, kind)
    case.body = body


def _swap_body(body: dict[str, Any], credentials: Credentials, turn: int, kind: int) -> None:
    subject = body["subject"]
    subject["token"] = credentials.session_token
    action = body.get("action")
    if kind < 3 or not isinstance(action, dict) or not isinstance(action.get("context"), dict):
        return
    name, resource_id, resource_type = credentials.targets[turn % len(credentials.targets)]
    action["name"] = name
    action["context"]["resource_id"] = resource_id
    action["context"]["resource_type"] = resource_type
    context = subject.get("context")
    if kind < 4 or not isinstance(context, dict):
        return
    context.pop("challenge_solution", None)
    if kind == 5:
        solution = credentials.solution_for(name, resource_id, resource_type)
        if solution is not None:
            context["challenge_solution"] = solution


def _record(case: Any, response: Any) -> None:
    STATUSES[(case.operation.label, response.status_code)] += 1
    try:
        body = json.loads(response.content) if response.content else None
    except ValueError:
        body = None
    if isinstance(body, dict):
        if isinstance(body.get("type"), str):
            TYPES[body["type"]] += 1
        elif isinstance(body.get("action"), dict):
            TYPES["200 shape A" if "id" in body else "200 shape B"] += 1
        elif "accessToken" in body:
            TYPES["200 token"] += 1
        elif "keys" in body:
            TYPES["200 keys"] += 1


@schema.parametrize()
@hypothesis.settings(
    max_examples=FUZZ_EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_api(case: Any, credentials: Credentials, session: requests.Session) -> None:
    _give_real_tokens(case, credentials, next(_turn))
    # Reading ``meta`` revalidates the edited case: a swap can make a schema-breaking case
    # valid, and the checks must judge the request by what is actually sent.
    assert case.meta is not None
    response = case.call(base_url=credentials.base_url, session=session, timeout=10)
    _record(case, response)
    case.validate_response(response)


def test_enough_cases_ran_and_reached_the_authorize_logic() -> None:
    total = STATUSES.total()
    if total == 0:
        pytest.skip("test_api did not run (deselected)")
    summary = ", ".join(f"{label} {status}: {n}" for (label, status), n in sorted(STATUSES.items()))
    print(f"\nschemathesis: {total} cases; {summary}\nreached: {dict(sorted(TYPES.items()))}")
    assert total >= MIN_CASES, summary
    assert not [key for key in STATUSES if key[1] >= 500], summary
    reached = set(TYPES)
    assert {"200 token", "200 keys", "200 shape A", "200 shape B",
            "srn:error:challenge_required", "srn:error:bad_jwe_token",
            "srn:error:unauthenticated", "srn:error:invalid_token", "srn:error:bad_request",
            "srn:error:invalid_client", "srn:error:unauthorized"} <= reached, reached
