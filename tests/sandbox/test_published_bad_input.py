"""The published dialect never 5xx: hypothesis fuzzes the OIDC token endpoint with any form
body, header and client assertion, and the authorize endpoint with any body (in-process)."""

from __future__ import annotations

import base64
import json
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

with warnings.catch_warnings():  # starlette's note about httpx2; not ours to act on
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from authzkit.sandbox.decisions import Service
from authzkit.sandbox.endpoints import build_app
from authzkit.sandbox.keys import KeyRing
from authzkit.sandbox.world import World
from authzkit.wire import jwe
from authzkit.wire.clock import ManualClock
from authzkit.wire.spec import AUTHORIZE_PATH

from support.sandbox_calls import ASSERTION_TYPE, OIDC_TOKEN, body

BASE_URL = "http://testserver"  # what TestClient sends as Host
OAUTH_ERRORS = {
    "invalid_request",
    "invalid_client",
    "unauthorized_client",
    "unsupported_grant_type",
}


class _Unexpected(logging.Handler):
    """Collects the sandbox's "unexpected exception" warnings: a masked bug still fails."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record.getMessage())


UNEXPECTED = _Unexpected()


class Target:
    """A published app on the same code, in-process, with the demo client's key."""

    def __init__(self, client: TestClient, service: Service) -> None:
        self.client = client
        self.service = service
        demo = service.world.resource_server()
        self.client_id = demo.client_id
        self.signer = jwe.ClientKey.load(demo.client_key_pem or "")
        self.access, _ = service.grant_access_token(demo)
        self.session, _ = service.mint_session("alice")

    def claims(self) -> dict[str, Any]:
        now = int(self.service.clock())
        return {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": BASE_URL + "/auth/realms/authzkit",
            "exp": now + 60,
            "jti": "j",
        }


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    world = World.default().with_generated_keys()
    service = Service(
        world=world,
        keys=KeyRing(size=2048),
        clock=ManualClock(),
        token_ttl=900,
        challenge_ttl=300,
        max_attempts=3,
    )
    logger = logging.getLogger("authzkit.sandbox")
    logger.addHandler(UNEXPECTED)
    try:
        with TestClient(
            build_app(service, dialect="published", base_url=BASE_URL),
            raise_server_exceptions=False,
        ) as client:
            yield Target(client, service)
    finally:
        logger.removeHandler(UNEXPECTED)


def _oauth_error(response: Any) -> None:
    assert not UNEXPECTED.seen, UNEXPECTED.seen
    assert response.status_code in (200, 400, 401), response.text
    found = response.json()
    if response.status_code == 200:
        assert found["token_type"] == "bearer"
        return
    assert set(found) == {"error", "error_description"} and found["error"] in OAUTH_ERRORS


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
claim_names = st.sampled_from(["iss", "sub", "aud", "exp", "jti", "nbf", "iat"])


@st.composite
def assertions(draw: st.DrawFn, target: Target) -> str:
    """Signed assertions with mutated claims, mangled headers or signatures, or garbage."""
    claims = target.claims()
    claims["jti"] = draw(st.text(max_size=8))
    values = json_values | st.integers(10**300, 10**400) | st.sampled_from([float("inf"), -1])
    for name, value in draw(st.dictionaries(claim_names, values, max_size=3)).items():
        claims[name] = value
    shape = draw(st.sampled_from(["signed", "resigned header", "cut", "garbage", "text"]))
    if shape == "text":
        return draw(st.text(max_size=60))
    if shape == "garbage":
        return ".".join(draw(st.lists(st.binary(max_size=40).map(_b64), max_size=5)))
    signed = target.signer.sign(claims)
    if shape == "cut":
        return signed[: draw(st.integers(0, len(signed)))]
    if shape == "resigned header":
        header = draw(json_values | st.fixed_dictionaries({"alg": st.text(max_size=6)}))
        return ".".join([_b64(json.dumps(header).encode()), *signed.split(".")[1:]])
    return signed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_assertions_never_get_a_5xx(target: Target, data: st.DataObject) -> None:
    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": data.draw(assertions(target)),
    }
    if data.draw(st.booleans()):
        form["client_id"] = data.draw(st.sampled_from([target.client_id, "x", ""]))
    _oauth_error(target.client.post(OIDC_TOKEN, data=form))


form_names = st.sampled_from(
    [
        "grant_type",
        "client_id",
        "client_secret",
        "client_assertion",
        "client_assertion_type",
        "scope",
    ]
) | st.text(max_size=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pairs=st.lists(st.tuples(form_names, st.text(max_size=12)), max_size=6),
    raw=st.binary(max_size=120),
    use_raw=st.booleans(),
    content_type=st.sampled_from(
        [
            "application/x-www-form-urlencoded",
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded; a=b",
        ]
    ),
    authorization=st.none()
    | st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=40).map(
        lambda t: "Basic " + t
    ),
)
def test_fuzzed_forms_and_headers_never_get_a_5xx(
    target: Target,
    pairs: list[tuple[str, str]],
    raw: bytes,
    use_raw: bool,
    content_type: str,
    authorization: str | None,
) -> None:
    from urllib.parse import urlencode

    content = raw if use_raw else urlencode(pairs).encode()
    headers = {"Content-Type": content_type}
    if authorization is not None:
        headers["Authorization"] = authorization
    _oauth_error(
        target.client.post(
            OIDC_TOKEN,
            content=content,
            headers={k: v.encode("latin-1") for k, v in headers.items()},
        )
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_authorize_bodies_never_get_a_5xx(target: Target, data: st.DataObject) -> None:
    payload = body(
        data.draw(st.sampled_from(["show_account_balance_public", "transfer_funds", "x"])),
        target.session,
    )
    section = data.draw(st.sampled_from(["action", "subject", "context", None]))
    if section is not None:
        payload[section] = data.draw(json_values)
    bearer = data.draw(st.sampled_from([target.access, "forged", ""]))
    response = target.client.post(
        AUTHORIZE_PATH,
        content=json.dumps(payload).encode(),
        headers={"Authorization": f"Bearer {bearer}"},
    )
    assert not UNEXPECTED.seen, UNEXPECTED.seen
    assert response.status_code in (200, 401, 403), response.text
    found = response.json()
    if response.status_code == 401:
        assert found == {"type": "srn:error:unauthenticated"}
    elif response.status_code == 403 and found["type"] != "srn:error:challenge_required":
        assert set(found) == {"challenge", "details", "id", "type"}
