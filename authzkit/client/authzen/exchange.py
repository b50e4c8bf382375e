"""One AuthZEN call: the JSON body sent with a fresh ``X-Request-ID`` (and a Bearer token
when the client has one), the echo checked, a 401 met with one new token and one resend,
and any other failure turned into the :class:`~authzkit.wire.errors.AuthzError` its
status names. A success echoing another id than was sent is a protocol error; a PDP that
echoes nothing is tolerated (``authzkit check`` grades that).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from authzkit.client.transport import HttpResponse, Transport, name_endpoint
from authzkit.wire.authzen import REQUEST_ID_HEADER
from authzkit.wire.error_table import snippet
from authzkit.wire.errors import (
    AccessTokenRejectedError,
    AuthzError,
    BadRequestError,
    ClientNotPermittedError,
    UnexpectedResponseError,
)

if TYPE_CHECKING:
    from authzkit.client.token import TokenProvider

# The error classes of the spec's error statuses (its bodies are a message string).
_STATUS_ERRORS: dict[int, type[AuthzError]] = {
    400: BadRequestError,
    401: AccessTokenRejectedError,
    403: ClientNotPermittedError,
}


def new_request_id() -> str:
    """A request identifier no other call shares (a UUID4)."""
    return str(uuid.uuid4())


def header(headers: Mapping[str, str], name: str) -> str | None:
    """The value of header ``name`` in ``headers``, whatever its case."""
    found = headers.get(name)
    if found is not None:
        return found
    lowered = name.lower()
    return next((v for k, v in headers.items() if k.lower() == lowered), None)


def check_echo(response: HttpResponse, sent: str, what: str) -> None:
    """A :class:`UnexpectedResponseError` when the answer echoes another request id."""
    echoed = header(response.headers, REQUEST_ID_HEADER)
    if echoed is not None and echoed != sent:
        raise UnexpectedResponseError(
            f"{what}: the PDP answered {REQUEST_ID_HEADER} {echoed!r} to request {sent!r} "
            f"(an answer to another request)",
            status=response.status,
            body=response.text,
        )


def _message(response: HttpResponse) -> str:
    """The PDP's error message: a JSON string, an object's message/error/detail, or text."""
    try:
        body = json.loads(response.text) if response.content else None
    except ValueError:
        return snippet(response.text)
    if isinstance(body, str):
        return snippet(body)
    if isinstance(body, Mapping):
        for key in ("message", "error_description", "detail", "error"):
            if isinstance(body.get(key), str) and body[key]:
                return snippet(body[key])
    return snippet(response.text)


def error_of(response: HttpResponse, what: str, url: str) -> AuthzError:
    """The error for a non-200 answer: 400, 401 and 403 by their classes, any other the
    base class (a 5xx naming the call and the URL)."""
    said = _message(response) or "no message"
    error = _STATUS_ERRORS.get(response.status, AuthzError)(
        f"{what} answered HTTP {response.status}: {said}",
        status=response.status,
        body=response.text,
    )
    return name_endpoint(error, what, url)


def json_object(response: HttpResponse, what: str) -> Mapping[str, Any]:
    """A 200 answer's body, which the spec says is a JSON object."""
    body = response.json()
    if not isinstance(body, Mapping):
        raise UnexpectedResponseError(
            f"{what} answered HTTP 200 with JSON that is not an object: {snippet(response.text)!r}",
            status=200,
            body=body,
        )
    return body


class Exchange:
    """Sends AuthZEN calls over ``transport``; ``token_provider`` (optional) gives the
    Bearer token, ``request_id`` each call's identifier."""

    def __init__(
        self,
        transport: Transport,
        *,
        token_provider: TokenProvider | None = None,
        request_id: Callable[[], str] = new_request_id,
    ) -> None:
        self.transport = transport
        self.token_provider = token_provider
        self.request_id = request_id

    def _send(self, method: str, url: str, name: str, body: Any, token: str | None) -> HttpResponse:
        sent = self.request_id()
        headers = {REQUEST_ID_HEADER: sent}
        if token is not None:
            headers["Authorization"] = "Bearer " + token
        response = self.transport.request(method, url, name=name, headers=headers, json_body=body)
        if 200 <= response.status < 300:  # an answer acted on; an error (a gateway's 404
            check_echo(response, sent, name)  # with its own id) is one whatever it echoes
        return response

    def call(self, method: str, url: str, *, name: str, body: Any = None) -> HttpResponse:
        """Send one call (a resend with a new token after a 401 when a token was sent);
        the answer whatever its status, its echo checked."""
        provider = self.token_provider
        token = provider.token(self.transport) if provider is not None else None
        response = self._send(method, url, name, body, token)
        if response.status == 401 and provider is not None and token is not None:
            fresh = provider.replace_rejected(token, self.transport).value
            response = self._send(method, url, name, body, fresh)
        return response

    def post(self, url: str, body: Mapping[str, Any], *, name: str) -> Mapping[str, Any]:
        """POST ``body``; the answer's JSON object, or the error its status names."""
        response = self.call("POST", url, name=name, body=dict(body))
        if response.status != 200:
            raise error_of(response, name, url)
        return json_object(response, name)


__all__ = ["Exchange", "check_echo", "error_of", "header", "json_object", "new_request_id"]
