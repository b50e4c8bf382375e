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
edited case is revalidated, so schemathesis judges it by what was actually sent.

What generation reaches depends on the installed hypothesis and schemathesis releases (their
generators change between versions, ``derandomize`` only fixes the seed): an outcome met by
two cases out of 1,200 in one release is met by none in the next. So every outcome the
suite promises is also reached BY CONSTRUCTION: one explicit, schemathesis-checked case per
outcome (``test_each_outcome_by_construction``), and each operation's generated cases take
their turns of the edit cycle from a counter of their own (a new coverage case for one
operation never shifts what another's cases are turned into). The last test checks that
the fuzzing ran at least 1,000 cases with no 5xx, and that generated and explicit cases
together reached every outcome.
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

from support.openapi_scenarios import (
    PIN_ACTION,
    PLAIN_ACTION,
    Credentials,
    _swap_body,
    authorize_body,
)
from support.tokens import AUTHORIZE_PATH, KEYS_PATH, TOKEN_PATH

MIN_CASES = 300  # two operations' worth: the fuzzer really ran
FUZZ_EXAMPLES_PER_OPERATION = 150

schema = schemathesis.openapi.from_dict(openapi_document())

# What the generated cases got back, filled by test_api, checked by the summary test.
STATUSES: Counter[tuple[str, int]] = Counter()
TYPES: Counter[str] = Counter()
# What the explicit cases got back, filled by test_each_outcome_by_construction.
CONSTRUCTED: Counter[str] = Counter()
# One turn counter per operation (its label): see _give_real_tokens.
_TURNS: defaultdict[str, count[int]] = defaultdict(count)


@pytest.fixture
def credentials(sandbox: Any, world: Any) -> Credentials:
    assert urlsplit(sandbox.base_url).hostname == "127.0.0.1", "fuzz only the loopback sandbox"
    return Credentials(sandbox, world)


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
        case.body = {
            **case.body,
            "clientId": credentials.client_id,
            **({"clientSecret": credentials.client_secret} if kind == 3 else {}),
        }
    if case.operation.path != AUTHORIZE_PATH or kind < 2:
        return
    body = copy.deepcopy(case.body)
    if not isinstance(body, dict) or not isinstance(body.get("subject"), dict):
        return
    _swap_body(body, credentials, turn, kind)
    case.body = body


def outcome_of(response: Any) -> str | None:
    """What a response is: its error ``type``, or which 200 it is; None for anything else."""
    try:
        body = json.loads(response.content) if response.content else None
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("type"), str):
        return str(body["type"])
    if isinstance(body.get("action"), dict):
        return "200 shape A" if "id" in body else "200 shape B"
    if "accessToken" in body:
        return "200 token"
    if "keys" in body:
        return "200 keys"
    return None


def _record(case: Any, response: Any) -> None:
    STATUSES[(case.operation.label, response.status_code)] += 1
    outcome = outcome_of(response)
    if outcome is not None:
        TYPES[outcome] += 1


@schema.parametrize()
@hypothesis.settings(
    max_examples=FUZZ_EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_api(case: Any, credentials: Credentials, http: requests.Session) -> None:
    _give_real_tokens(case, credentials, next(_TURNS[case.operation.label]))
    # Reading ``meta`` revalidates the edited case: a swap can make a schema-breaking case
    # valid, and the checks must judge the request by what is actually sent.
    assert case.meta is not None
    response = case.call(base_url=credentials.base_url, session=http, timeout=10)
    _record(case, response)
    case.validate_response(response)


# -- every outcome by construction ---------------------------------------------------------------

Request = tuple[str, str, dict[str, Any]]  # path, method, Case(...) keyword arguments


def _authorize(
    credentials: Credentials,
    *,
    action: str = PLAIN_ACTION,
    owner: str = "alice",
    solution: str | None = None,
    session_token: str | None = None,
    bearer: str | None = None,
) -> Request:
    resource_id, resource_type = credentials.resources[owner]
    body = authorize_body(
        action, resource_id, resource_type, session_token or credentials.session_token, solution
    )
    headers = {"Authorization": f"Bearer {bearer or credentials.access_token}"}
    return AUTHORIZE_PATH, "POST", {"headers": headers, "body": body}


def _solution(
    credentials: Credentials,
    payload: Callable[[str], dict[str, Any]],
    key: jwe.PublicKey | None = None,
) -> Request:
    """A solution of a fresh PIN challenge, its plaintext built from the challenge id."""
    resource_id, resource_type = credentials.resources["alice"]
    challenge = credentials.challenge_for(PIN_ACTION, resource_id, resource_type)
    assert challenge is not None, f"{PIN_ACTION} demands no challenge"
    solution = jwe.encrypt(key or credentials.key, payload(challenge["id"]))
    return _authorize(credentials, action=PIN_ACTION, solution=solution)


def _pin_solution(credentials: Credentials) -> Request:
    resource_id, resource_type = credentials.resources["alice"]
    solution = credentials.solution_for(PIN_ACTION, resource_id, resource_type)
    return _authorize(credentials, action=PIN_ACTION, solution=solution)


def _token(client_secret: str) -> Callable[[Credentials], Request]:
    def build(credentials: Credentials) -> Request:
        secret = client_secret or credentials.client_secret
        return (
            TOKEN_PATH,
            "POST",
            {"body": {"clientId": credentials.client_id, "clientSecret": secret}},
        )

    return build


EXPLICIT: dict[str, Callable[[Credentials], Request]] = {
    "200 token": _token(""),
    "srn:error:invalid_client": _token("not-the-secret"),
    "200 keys": lambda c: (KEYS_PATH, "GET", {}),
    "200 shape A": lambda c: _authorize(c),
    "200 shape B": _pin_solution,
    "srn:error:challenge_required": lambda c: _authorize(c, action=PIN_ACTION),
    "srn:error:invalid_token": lambda c: _authorize(c, bearer="not-an-access-token"),
    "srn:error:bad_request": lambda c: (
        AUTHORIZE_PATH,
        "POST",
        {"headers": c.bearer(), "body": {}},
    ),
    "srn:error:unauthenticated": lambda c: _authorize(c, session_token="not-a-session"),
    "srn:error:unauthorized": lambda c: _authorize(c, owner="bob"),
    "srn:error:bad_jwe_token": lambda c: _authorize(c, action=PIN_ACTION, solution="not.a.jwe"),
    "srn:error:unrecognized_key": lambda c: _solution(
        c,
        lambda cid: {"challenge_id": cid, "pin": "0000"},
        key=jwe.KeyPair.generate(use="enc", size=2048).public_key(),
    ),
    "srn:error:wrong_challenge_solution": lambda c: _solution(c, lambda cid: {"pin": "0000"}),
    "srn:error:challenge_not_found": lambda c: _solution(
        c, lambda cid: {"challenge_id": "no-such-challenge", "pin": "0000"}
    ),
    "srn:error:bad_challenge_solution": lambda c: _solution(
        c, lambda cid: {"challenge_id": cid, "pin": "0000"}
    ),
}


@pytest.mark.parametrize("outcome", list(EXPLICIT))
def test_each_outcome_by_construction(
    outcome: str, credentials: Credentials, http: requests.Session
) -> None:
    """One request built to get ``outcome``, sent and judged by schemathesis's checks."""
    path, method, kwargs = EXPLICIT[outcome](credentials)
    case = schema[path][method].Case(**kwargs)
    response = case.call(base_url=credentials.base_url, session=http, timeout=10)
    case.validate_response(response)
    assert outcome_of(response) == outcome, (response.status_code, response.text)
    CONSTRUCTED[outcome] += 1


def test_enough_cases_ran_and_reached_the_authorize_logic() -> None:
    total = STATUSES.total()
    if total == 0:
        pytest.skip("test_api did not run (deselected)")
    summary = ", ".join(f"{label} {status}: {n}" for (label, status), n in sorted(STATUSES.items()))
    print(
        f"\nschemathesis: {total} cases; {summary}\ngenerated cases reached: "
        f"{dict(sorted(TYPES.items()))}\nexplicit cases reached: {sorted(CONSTRUCTED)}"
    )
    assert total >= MIN_CASES, summary
    assert not [key for key in STATUSES if key[1] >= 500], summary
    reached = set(TYPES) | set(CONSTRUCTED)
    assert set(EXPLICIT) <= reached, sorted(set(EXPLICIT) - reached)
