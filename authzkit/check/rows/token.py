"""Rows of SPEC §3 (issue access token) and §Authentication: the token endpoint.

They judge the client's own first token call as it was recorded, so a token endpoint that
answers in the published dialect (OAuth 2.0, snake_case) is a ``diff`` and one that answers
neither way is a ``fail``.
"""

from __future__ import annotations

from typing import Any

from authzkit.check.probe import Probe
from authzkit.check.results import Finding, RowSpec, Skip
from authzkit.check.verdicts import answer, differs, failed, passed
from authzkit.client.credentials import ClientCredentials
from authzkit.client.transport import is_form

SPEC_TOKEN = "SPEC §3 Issue access token"
SPEC_AUTH = "SPEC §Authentication"
DRAFT_FIELDS = ("accessToken", "expiresIn", "tokenType")
OAUTH_FIELDS = ("access_token", "expires_in", "token_type")


def _with_exchange(probe: Probe, outcome: Finding) -> Finding:
    return Finding(outcome.verdict, outcome.detail, (probe.token_exchange(),))


def _body(probe: Probe) -> dict[str, Any]:
    exchange = probe.token_exchange()
    if exchange.status != 200:
        raise Skip("needs token.request_style")
    body = exchange.response_body
    return body if isinstance(body, dict) else {}


def request_style(probe: Probe) -> Finding:
    exchange = probe.token_exchange()
    form = is_form(exchange.request_headers)
    if exchange.status != 200:
        outcome = failed(
            "HTTP 200 with a token",
            came=f"HTTP {exchange.status} {str(exchange.response_body)[:120]}",
        )
    elif form:
        outcome = differs(
            "token endpoint is OAuth 2.0 form-encoded (client credentials "
            "grant), not the draft's camelCase JSON"
        )
    else:
        outcome = passed("JSON body with clientId and clientSecret accepted")
    return _with_exchange(probe, outcome)


def fields(probe: Probe) -> Finding:
    body = _body(probe)
    for names, outcome in (
        (DRAFT_FIELDS, passed("accessToken, expiresIn and tokenType")),
        (
            OAUTH_FIELDS,
            differs("snake_case OAuth 2.0 fields (access_token, expires_in, token_type)"),
        ),
    ):
        if all(name in body for name in names):
            if not isinstance(body[names[0]], str) or not body[names[0]]:
                outcome = failed(
                    f"{names[0]} a non-empty string", came=type(body[names[0]]).__name__
                )
            return _with_exchange(probe, outcome)
    return _with_exchange(
        probe, failed("accessToken, expiresIn, tokenType", came=f"fields {sorted(body)}")
    )


def expires_in(probe: Probe) -> Finding:
    body = _body(probe)
    name = "expiresIn" if "expiresIn" in body else "expires_in"
    value = body.get(name)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        outcome = passed(f"{name} = {value} (an integer > 0)")
    else:
        outcome = failed(f"{name} an integer > 0", came=f"{value!r} ({type(value).__name__})")
    return _with_exchange(probe, outcome)


def token_type(probe: Probe) -> Finding:
    body = _body(probe)
    value = body.get("tokenType", body.get("token_type"))
    if value == "Bearer":
        outcome = passed("tokenType Bearer")
    elif isinstance(value, str) and value.lower() == "bearer":
        outcome = differs(f"token type {value!r} in lower case (RFC 6750: case-insensitive)")
    else:
        outcome = failed("token type Bearer", came=repr(value))
    return _with_exchange(probe, outcome)


def wrong_secret_refused(probe: Probe) -> Finding:
    probe.token_exchange()
    provider = probe.client.token_provider
    url = provider.token_url or probe.token_exchange().url
    method = provider.client_auth
    key = None
    if method == "private_key_jwt":
        from authzkit.wire.jwe import KeyPair

        key = KeyPair.generate(use="sig", size=2048).private_pem()  # a key nobody registered
    wrong = ClientCredentials(
        client_id=provider.client_id,
        method=method,
        client_secret="authzkit-check-wrong-secret",
        client_key=key,
    )
    request = wrong.request(url, issuer=provider.issuer)
    response = probe.send(
        "POST",
        url,
        "check:token:wrong_secret",
        headers=request.headers or None,
        body=dict(request.fields),
    )
    body = response.body()
    issued = isinstance(body, dict) and any(body.get(n) for n in ("accessToken", "access_token"))
    if response.status == 200 or issued:
        return failed(
            "a refusal without a token",
            response,
            came=f"HTTP {response.status} with a token for wrong credentials",
        )
    if 400 <= response.status < 500:
        return passed(f"refused: {answer(response)}")
    return failed("a 4xx refusal", response)


def lifetime_honoured(probe: Probe) -> Finding:
    probe.access_token()
    current = probe.client.token_provider.current
    if current is None:
        raise Skip("needs token.fields")
    probe.advance(0)  # skips on a real environment before any request
    token = current.value
    service = probe.clocks[0]  # type: ignore[index]
    probe.advance(current.expires_at - 1 - service(), client=False)
    before = probe.authorize(probe.plain_action(), bearer=token, name="check:lifetime")
    probe.advance(2, client=False)
    after = probe.authorize(probe.plain_action(), bearer=token, name="check:lifetime")
    probe.sync_client_clock()
    if before.status != 200:
        return failed(f"the token accepted 1 s before its {current.expires_in} s ran out", before)
    if after.status != 401:
        return failed("HTTP 401 once expiresIn has passed", after)
    return passed(f"accepted until {current.expires_in} s, 401 after")


ROWS = (
    RowSpec(
        "token.request_style",
        "token request in the draft's style accepted",
        SPEC_TOKEN,
        request_style,
        requests=1,
    ),
    RowSpec("token.fields", "token response fields and types", SPEC_TOKEN, fields, 0),
    RowSpec("token.expires_in", "expiresIn is an integer > 0", SPEC_TOKEN, expires_in, 0),
    RowSpec("token.type", "token type is Bearer", SPEC_TOKEN, token_type, 0),
    RowSpec(
        "token.wrong_secret_refused",
        "wrong credentials refused without a token",
        SPEC_AUTH,
        wrong_secret_refused,
        1,
        security=True,
    ),
    RowSpec(
        "token.lifetime_honoured",
        "the token lives expiresIn seconds",
        SPEC_AUTH,
        lifetime_honoured,
        2,
    ),
)

__all__ = ["ROWS"]
