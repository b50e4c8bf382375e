"""The transport seam over requests and over Locust's two sessions (duck-typed fakes).

The fakes mimic what the client relies on: ``request(method, url, name=, catch_response=)``
returning a context manager with ``.success()``/``.failure()``, ``status_code == 0`` on a
connection error, and (FastHttpSession) no per-request ``timeout=``.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
import requests

from authzkit import AuthzError, TransportError, UnauthorizedError
from authzkit.client.facade import AuthzClient
from authzkit.client.transport import LocustTransport, RequestsTransport, transport_for
from authzkit.wire.tls import TlsSettings

from support.subjects import Subject


class FakeLocustResponse:
    """What ``catch_response=True`` yields: the response plus success/failure marks."""

    def __init__(
        self, status_code: int, content: bytes | None, headers: Any, error: Exception | None = None
    ) -> None:
        self.status_code = status_code
        self.content = content
        self.headers = headers
        self.error = error
        self.verdict: str | None = None

    def __enter__(self) -> FakeLocustResponse:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def success(self) -> None:
        self.verdict = "success"

    def failure(self, message: str) -> None:
        self.verdict = f"failure: {message}"


class FakeHttpSession(requests.Session):
    """Like Locust's HttpSession: a requests.Session whose ``request`` takes ``name=``."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, FakeLocustResponse]] = []
        self.kwargs: list[dict[str, Any]] = []

    def request(  # type: ignore[override]
        self,
        method: str,
        url: str,
        name: str | None = None,
        catch_response: bool = False,
        **kwargs: Any,
    ) -> Any:
        assert catch_response, "the client must ask for catch_response=True"
        self.kwargs.append(kwargs)
        try:
            real = super().request(method, url, **kwargs)
            response = FakeLocustResponse(real.status_code, real.content, real.headers)
        except requests.RequestException as exc:
            response = FakeLocustResponse(0, None, None, exc)
        self.rows.append((method, name or url, response))
        return response


class FakeFastHttpSession:
    """Like Locust's FastHttpSession: not a requests.Session, and no ``timeout=``."""

    def __init__(self) -> None:
        self.inner = requests.Session()
        self.rows: list[tuple[str, str, FakeLocustResponse]] = []

    def request(
        self,
        method: str,
        url: str,
        name: str | None = None,
        data: Any = None,
        catch_response: bool = False,
        stream: bool = False,
        headers: Any = None,
        auth: Any = None,
        json: Any = None,
        allow_redirects: bool = True,
        context: Any = None,
        **kwargs: Any,
    ) -> Any:
        assert "timeout" not in kwargs, "FastHttpSession takes no per-request timeout"
        assert catch_response
        try:
            real = self.inner.request(method, url, data=data, headers=headers, timeout=5)
            response = FakeLocustResponse(real.status_code, real.content, real.headers)
        except requests.RequestException as exc:
            response = FakeLocustResponse(0, None, None, exc)
        self.rows.append((method, name or url, response))
        return response


def test_transport_for_recognises_each_session() -> None:
    plain = transport_for(requests.Session(), timeout=3)
    assert isinstance(plain, RequestsTransport) and plain.timeout == 3
    http = transport_for(FakeHttpSession(), timeout=3)
    assert isinstance(http, LocustTransport) and http._extra == {"timeout": 3}
    fast = transport_for(FakeFastHttpSession(), timeout=3)
    assert isinstance(fast, LocustTransport) and fast._extra == {}
    with pytest.raises(TypeError):
        transport_for(object(), timeout=3)


def test_tls_settings_go_with_https_calls_only(sandbox: Any) -> None:
    """requests looks a CA bundle's path up on disk at every call given one: a plain
    http:// call is sent without TLS settings, an https:// (or relative) one with them."""
    session = FakeHttpSession()
    tls = TlsSettings(insecure=True)  # verification off: verify=False
    transport = transport_for(session, timeout=3, tls=tls)
    assert isinstance(transport, LocustTransport)
    transport.send("GET", sandbox.base_url + "/.well-known/openid-configuration", "d", {}, None)
    with pytest.raises(AuthzError):
        transport.send("GET", "https://127.0.0.1:9/", "tls", {}, None)  # nothing listens
    assert session.kwargs[0] == {"data": None, "headers": {}, "timeout": 3}
    assert session.kwargs[1]["verify"] is False and session.kwargs[1]["timeout"] == 3


@pytest.mark.parametrize("session_type", [FakeHttpSession, FakeFastHttpSession])
def test_locust_rows_are_named_and_marked(sandbox: Any, alice: Subject, session_type: type) -> None:
    session = session_type()
    with AuthzClient(
        base_url=sandbox.base_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        session=session,
        timeout=4,
    ) as client:
        client.authorize_with_challenge(
            "transfer_funds",
            answers=alice.answers(),
            resource_id=alice.resource_id,
            subject_token=alice.token,
        )
        with pytest.raises(UnauthorizedError):
            client.authorize(
                "show_account_balance_public",
                resource_id=alice.foreign_resource_id,
                subject_token=alice.token,
            )
    rows = [(method, name, response.verdict) for method, name, response in session.rows]
    assert rows == [
        ("POST", "token", "success"),
        ("POST", "authorize", "success"),  # the challenge 403 is a normal step
        ("GET", "keys", "success"),
        ("POST", "authorize:solution", "success"),
        ("POST", "authorize", "failure: HTTP 403 srn:error:unauthorized"),
    ]
    if session_type is FakeHttpSession:
        assert all(kwargs["timeout"] == 4 for kwargs in session.kwargs)


@pytest.mark.parametrize("session_type", [FakeHttpSession, FakeFastHttpSession])
def test_status_zero_is_a_transport_error(session_type: type) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = session_type()
    transport = transport_for(session, timeout=1)
    with pytest.raises(TransportError, match="cannot reach"):
        transport.request("GET", f"http://127.0.0.1:{port}/api/v1/discovery/keys", name="keys")
    assert session.rows[-1][2].verdict.startswith("failure: keys: cannot reach")


def test_html_error_row_quotes_a_snippet() -> None:
    class Html(FakeFastHttpSession):
        def request(  # type: ignore[override]
            self, method: str, url: str, catch_response: bool = False, **kwargs: Any
        ) -> Any:
            response = FakeLocustResponse(502, b"<html><h1>502 Bad Gateway</h1></html>", {})
            self.rows.append((method, kwargs["name"], response))
            return response

    session = Html()
    response = transport_for(session, timeout=1).request(
        "POST", "http://x/y", name="authorize", json_body={}
    )
    assert response.status == 502
    assert session.rows[0][2].verdict == "failure: HTTP 502 <html><h1>502 Bad Gateway</h1></html>"


def test_requests_transport_sends_compact_json_with_headers(fake: Any) -> None:
    transport = RequestsTransport(requests.Session(), timeout=2)
    response = transport.request(
        "POST",
        fake.base_url + "/api/v1/discovery/keys",
        name="keys",
        headers={"X-Trace": "1"},
        json_body={"a": "é"},
    )
    assert response.status == 200 and response.elapsed_ms > 0
    seen = fake.requests["/api/v1/discovery/keys"][0]
    assert seen.body == {"a": "é"}
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.headers["Accept"] == "application/json" and seen.headers["X-Trace"] == "1"


def test_requests_timeout_is_a_transport_error(fake: Any) -> None:
    from support.fake_service import KEYS, Reply

    fake.script(KEYS, Reply(200, {"keys": []}, delay=1.0))
    transport = RequestsTransport(requests.Session(), timeout=0.2)
    with pytest.raises(TransportError) as caught:
        transport.request("GET", fake.base_url + KEYS, name="keys")
    assert isinstance(caught.value, AuthzError) and caught.value.status is None


def test_http_response_compares_its_fields_and_shows_no_body() -> None:
    from authzkit.client.transport import HttpResponse

    one = HttpResponse(200, {"X": "1"}, b'{"secret": "s3cr3t"}', 1.5)
    assert one == HttpResponse(200, {"X": "1"}, b'{"secret": "s3cr3t"}', 1.5)
    assert one != HttpResponse(200, {"X": "1"}, b'{"secret": "s3cr3t"}', 2.0)
    assert one.body() == {"secret": "s3cr3t"} and one.body() is one.body()
    assert one == HttpResponse(200, {"X": "1"}, b'{"secret": "s3cr3t"}', 1.5)  # parsed or not
    assert repr(one) == "HttpResponse(status=200, elapsed_ms=1.5)"
    assert not hasattr(one, "__dict__")  # slotted
    assert HttpResponse(status=204, headers={}, content=b"").body() is None


@pytest.mark.parametrize("session_type", [FakeHttpSession, FakeFastHttpSession])
def test_a_prepared_authorize_sends_what_authorize_sends(
    sandbox: Any, alice: Subject, session_type: type
) -> None:
    session = session_type()
    sent: list[tuple[Any, ...]] = []
    inner = session.request

    def spy(
        method: str, url: str, name: str | None = None, catch_response: bool = False, **kwargs: Any
    ) -> Any:  # keeps the signature Locust's sessions are known by
        sent.append(
            (method, url, name, kwargs.get("data"), list((kwargs.get("headers") or {}).items()))
        )
        return inner(method, url, name=name, catch_response=catch_response, **kwargs)

    session.request = spy
    with AuthzClient(
        base_url=sandbox.base_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        session=session,
        timeout=4,
    ) as client:
        request: dict[str, Any] = {
            "resource_id": alice.resource_id,
            "subject_token": alice.token,
            "request_hash": "h-1",
        }
        prepared = client.prepare_authorize("show_account_balance_public", **request)
        assert prepared().authorized
        assert prepared.response().status == 200
        assert client.authorize("show_account_balance_public", **request).authorized
        with pytest.raises(UnauthorizedError) as refused:
            client.prepare_authorize(
                "show_account_balance_public",
                resource_id=alice.foreign_resource_id,
                subject_token=alice.token,
            )()
    authorize = [s for s in sent if s[2] == "authorize"]
    assert authorize[0] == authorize[1] == authorize[2]  # same URL, row, bytes and headers
    assert [k for k, _ in authorize[0][4]] == ["Accept", "Content-Type", "Authorization"]
    assert [r[2].verdict for r in session.rows if r[1] == "authorize"] == [
        "success",
        "success",
        "success",
        "failure: HTTP 403 srn:error:unauthorized",
    ]
    assert alice.token not in repr(prepared) and alice.token not in str(refused.value)
    assert sandbox.client_secret not in repr(prepared)
