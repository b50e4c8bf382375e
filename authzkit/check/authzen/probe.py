"""One AuthZEN PDP under check: its metadata (read once), the URL of each API (``None`` when
the PDP does not offer it) and every request sent through a recording transport, so each row
keeps its exchanges as evidence. Bodies go as they are, malformed ones included."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import requests

from authzkit.client.exchanges import Recorder, RecordingTransport
from authzkit.client.transport import HttpResponse, RequestsTransport
from authzkit.wire import authzen

if TYPE_CHECKING:
    from authzkit.wire.tls import TlsSettings

# Each API the rows call, by the metadata member that names its URL.
APIS = {
    "evaluation": authzen.ACCESS_EVALUATION_ENDPOINT,
    "evaluations": authzen.ACCESS_EVALUATIONS_ENDPOINT,
    **{f"search_{kind}": authzen.SEARCH_ENDPOINTS[kind] for kind in authzen.SEARCH_KINDS},
}
OPTIONAL_APIS = tuple(api for api in APIS if api != "evaluation")
TIMEOUT_S = 10.0


class AuthzenProbe:
    """Requests to ``base_url`` (the PDP's URL), recorded into ``recorder``; ``tls``: the
    trust store and client certificate (``AUTHZKIT_TLS_*``), else the defaults."""

    def __init__(
        self,
        base_url: str,
        *,
        recorder: Recorder,
        token: str | None = None,
        tls: TlsSettings | None = None,
        timeout: float = TIMEOUT_S,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.recorder = recorder
        self.session = requests.Session()
        self.raw = RequestsTransport(self.session, timeout=timeout, tls=tls)
        self.transport = RecordingTransport(self.raw, recorder)
        self.auth = {"Authorization": f"Bearer {token}"} if token else {}
        self._metadata: tuple[HttpResponse] | None = None

    def close(self) -> None:
        self.session.close()

    # -- metadata -------------------------------------------------------------------------
    def metadata_response(self, *, fresh: bool = False) -> HttpResponse:
        """The metadata endpoint's answer (fetched once, or again when ``fresh``: the
        metadata row keeps its own exchange as evidence)."""
        if self._metadata is None or fresh:
            url = authzen.metadata_url(self.base_url)
            self._metadata = (self.transport.request("GET", url, name="authzen:metadata"),)
        return self._metadata[0]

    def metadata(self) -> dict[str, Any] | None:
        """The metadata document, or ``None`` when the PDP publishes none usable."""
        response = self.metadata_response()
        body = response.body()
        if response.status != 200 or authzen.metadata_problem(body, self.base_url):
            return None
        return dict(body)

    def url(self, api: str) -> str | None:
        """Where ``api`` is served; ``None`` when the PDP's metadata does not name it (an
        optional API it does not offer). Without metadata, the default paths."""
        metadata = self.metadata()
        member = APIS[api]
        if metadata is not None and api in OPTIONAL_APIS and not metadata.get(member):
            return None
        return authzen.endpoint_url(self.base_url, member, metadata)

    # -- requests -------------------------------------------------------------------------
    def post(
        self, api: str, body: Any, *, headers: Mapping[str, str] | None = None
    ) -> HttpResponse:
        """``body`` as JSON to ``api`` with a fresh X-Request-ID (unless ``headers`` says)."""
        url = self.url(api) or authzen.endpoint_url(self.base_url, APIS[api])
        sent = {authzen.REQUEST_ID_HEADER: str(uuid.uuid4()), **self.auth, **(headers or {})}
        return self.transport.request(
            "POST", url, name=f"authzen:{api}", headers=sent, json_body=body
        )

    def post_raw(
        self, api: str, text: str, content_type: str, *, request_id: bool = True
    ) -> HttpResponse:
        """``text`` as it is (malformed or empty bodies, other content types), recorded;
        without an X-Request-ID unless ``request_id``."""
        url = self.url(api) or authzen.endpoint_url(self.base_url, APIS[api])
        headers = {
            "Accept": authzen.JSON_CONTENT_TYPE,
            "Content-Type": content_type,
            **({authzen.REQUEST_ID_HEADER: str(uuid.uuid4())} if request_id else {}),
            **self.auth,
        }
        response = self.raw.send("POST", url, f"authzen:{api}", headers, text.encode())
        self.recorder.record(
            "POST",
            url,
            name=f"authzen:{api}",
            started_at=0.0,
            headers=headers,
            json_body=text,
            response=response,
        )
        return response


__all__ = ["APIS", "OPTIONAL_APIS", "AuthzenProbe"]
