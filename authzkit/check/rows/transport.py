"""Rows of SPEC §Authentication (the access token refused once expired or forged) and of
the transport: https, a correlation header, no timeouts.

The transport rows read every exchange of the run, so the runner checks them last.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from authzkit.check.probe import Probe
from authzkit.check.results import Finding, RowSpec, Skip
from authzkit.check.verdicts import SUBJECT_FIELD, body_of, differs, failed, passed
from authzkit.client.transport import HttpResponse
from authzkit.wire.errors import AuthzError
from authzkit.wire.spec import UNAUTHENTICATED, error_type

SPEC_AUTH = "SPEC §Authentication"
SPEC_TRANSPORT = "SPEC §Authentication (transport)"
# A well-formed JWT no issuer signed: {"alg":"none"}.{"sub":"forged"}.
FORGED_TOKEN = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJmb3JnZWQifQ."
CORRELATION_HEADERS = (
    "x-request-id",
    "x-correlation-id",
    "request-id",
    "x-amzn-requestid",
    "traceparent",
)
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def access_401(response: HttpResponse) -> Finding:
    """A refused access token: any 401 — but one naming the subject's token misleads."""
    if response.status != 401:
        return failed("HTTP 401", response)
    body = body_of(response)
    if body.get("field") == SUBJECT_FIELD:
        return failed(
            "a 401 about the access token",
            came=f"HTTP 401 naming {SUBJECT_FIELD} (blames the subject)",
        )
    kind = error_type(body)
    if kind == UNAUTHENTICATED and "field" not in body:
        return differs("401 without field (the same body as an invalid subject session)")
    return passed(f"HTTP 401 {kind or ''}".rstrip())


def expired(probe: Probe) -> Finding:
    probe.advance(0)  # skips on a real environment before any request
    token = probe.access_token()
    current = probe.client.token_provider.current
    provider = probe.client.token_provider
    if current is None:
        raise Skip("needs token.fields")
    service, client = probe.clocks  # type: ignore[misc]
    # Both sides move to just before the client would refresh, then only the service past
    # expiry: the client still holds the token the service now refuses (the lag stays
    # under a client assertion's lifetime, as between real synchronised clocks).
    if client() < current.refresh_at - 1:
        probe.advance(current.refresh_at - 1 - client())
    probe.advance(current.expires_at + 1 - service(), client=False)
    try:
        outcome = access_401(
            probe.authorize(probe.plain_action(), bearer=token, name="check:expired_token")
        )
        if outcome.verdict == "fail":
            return outcome
        calls = provider.token_calls
        rid, rtype = probe.resource()
        try:
            probe.client.authorize(
                probe.plain_action(),
                resource_id=rid,
                resource_type=rtype,
                subject_token=probe.subject_token(),
                user_agent="authzkit",
            )
        except AuthzError as exc:
            return failed(
                "the client to refresh its token and succeed", came=f"{type(exc).__name__}: {exc}"
            )
        return Finding(
            outcome.verdict,
            f"{outcome.detail}; the client refreshed "
            f"({provider.token_calls - calls} token call) and was authorized",
        )
    finally:
        probe.sync_client_clock()


def forged(probe: Probe) -> Finding:
    response = probe.authorize(probe.plain_action(), bearer=FORGED_TOKEN, name="check:forged_token")
    return access_401(response)


def https(probe: Probe) -> Finding:
    provider = probe.client.token_provider
    urls = {
        u
        for u in (
            probe.client.base_url,
            provider.token_url or probe.client.auth_url,
            provider.issuer,
        )
        if u
    }
    plain = sorted(
        u for u in urls if urlsplit(u).scheme != "https" and urlsplit(u).hostname not in LOOPBACK
    )
    if plain:
        return failed(
            "https for a non-loopback host",
            came=f"plain http: {', '.join(plain)} (tokens travel in clear)",
        )
    if any(urlsplit(u).scheme != "https" for u in urls):
        return passed("plain http on a loopback host only")
    return passed("https everywhere")


def correlation_id(probe: Probe) -> Finding:
    if not len(probe.recorder):
        probe.keys_response()
    for exchange in probe.recorder:
        headers = {k.lower(): v for k, v in exchange.response_headers.items()}
        for name in CORRELATION_HEADERS:
            if name in headers:
                return Finding("pass", f"{name} seen (e.g. {headers[name]})", (exchange,))
    raise Skip("no correlation header (x-request-id) seen; SPEC does not require one")


def timeouts(probe: Probe) -> Finding:
    if not len(probe.recorder):
        probe.keys_response()
    exchanges = probe.recorder.exchanges
    lost = [e for e in exchanges if e.status == 0]
    if lost:
        return Finding(
            "fail",
            f"expected an answer within {probe.client.timeout} s; "
            f"{len(lost)} request(s) got none: {lost[0].error}",
            tuple(lost[:3]),
        )
    slowest = max(e.elapsed_ms for e in exchanges)
    return passed(
        f"{len(exchanges)} requests answered, slowest {slowest:.0f} ms "
        f"(timeout {probe.client.timeout:g} s)"
    )


ROWS = (
    RowSpec(
        "access_token.expired",
        "an expired access token → 401, the client refreshes",
        SPEC_AUTH,
        expired,
        2,
    ),
    RowSpec("access_token.forged", "a forged access token → 401", SPEC_AUTH, forged, 1),
    RowSpec(
        "transport.https", "https for a non-loopback host", SPEC_TRANSPORT, https, 0, security=True
    ),
    RowSpec(
        "transport.correlation_id",
        "a correlation header (x-request-id)",
        SPEC_TRANSPORT,
        correlation_id,
        0,
    ),
    RowSpec("transport.timeouts", "no request timed out", SPEC_TRANSPORT, timeouts, 0),
)

__all__ = ["ROWS", "access_401"]
