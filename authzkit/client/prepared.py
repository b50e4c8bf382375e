"""One authorize request built once and sent again and again: a load-test user's call.

:meth:`authzkit.client.facade.AuthzClient.prepare_authorize` builds it; it sends what
``client.authorize`` sends for the same arguments through the same transport, token
provider and 401 policy, without rebuilding the body or the headers per call (the
generator's CPU per request is what a load test pays for every decision).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from authzkit.client.authorize import parse_outcome
from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.client.token import TokenProvider
from authzkit.client.transport import (
    HttpResponse,
    PreparedSender,
    Transport,
    name_endpoint,
    request_headers,
)
from authzkit.client.unauthenticated import resend_after_401
from authzkit.wire.errors import AuthzError
from authzkit.wire.redact import Secret, scrub


def scrub_error(error: AuthzError, secrets: list[Any]) -> None:
    """Remove any secret from ``error``'s message in place (the service might echo one)."""
    clean = scrub(error.message, secrets)
    if clean != error.message:
        error.message = clean
        error.args = (clean,)


class PreparedAuthorize:
    """One authorize request built once (:meth:`AuthzClient.prepare_authorize`) and sent
    as often as asked: what ``client.authorize`` sends for the same arguments (the same
    body bytes, headers, URL, row name and transport), with the same token provider and
    401 policy (one refresh and one resend after an expired access token), without
    rebuilding anything per call.

    The body is encoded once; the headers are built once per access token (the complete
    headers when the transport is authzkit's own, which then sends them as they are).
    :meth:`response` is the answer after the 401 policy, unread; calling the object parses
    it into an outcome as ``client.authorize`` does. Errors are scrubbed of the subject's
    token and the client's secrets as ``client.authorize``'s are. The repr holds no secret.
    """

    __slots__ = (
        "_auth",
        "_body",
        "_client_secrets",
        "_complete",
        "_provider",
        "_send",
        "_subject_token",
        "_transport",
        "_url",
    )

    def __init__(
        self,
        *,
        url: str,
        body: bytes,
        subject_token: str | Secret,
        transport: Transport,
        token_provider: TokenProvider,
        secrets: Callable[[], list[Any]],
    ) -> None:
        self._url = url
        self._body = body
        self._subject_token = subject_token
        self._transport = transport
        self._provider = token_provider
        self._client_secrets = secrets  # the client's secrets, read when an error is scrubbed
        # A transport that sends prepared requests (authzkit's own) takes the complete
        # headers and the encoded body as they are; any other (a recorder, a test's fake)
        # gets what client.authorize gives it.
        self._send: Callable[[str, str, str, Mapping[str, str], bytes], HttpResponse]
        if isinstance(transport, PreparedSender):
            self._send, self._complete = transport.send, True
        else:
            self._send, self._complete = self._request, False
        self._auth: tuple[str, Mapping[str, str]] = ("", {})  # (access token, its headers)

    def _request(
        self, method: str, url: str, name: str, headers: Mapping[str, str], data: bytes
    ) -> HttpResponse:
        return self._transport.request(method, url, name=name, headers=headers, json_body=data)

    def _post(self, token: str) -> HttpResponse:
        auth = self._auth  # one read: another thread may replace it (token and headers)
        if auth[0] != token:
            own = {"Authorization": "Bearer " + token}
            auth = (token, request_headers(own, True) if self._complete else own)
            self._auth = auth
        return self._send("POST", self._url, "authorize", auth[1], self._body)

    def response(self) -> HttpResponse:
        """Send the request: the answer once the 401 policy is applied, not parsed."""
        provider = self._provider
        try:
            access = provider.access_token(self._transport)
            response = self._post(access.value)
            if response.status == 401:
                response = resend_after_401(
                    response,
                    provider=provider,
                    access=access,
                    subject_token=self._subject_token,
                    transport=self._transport,
                    resend=self._post,
                )
            return response
        except AuthzError as exc:
            scrub_error(exc, self._secrets())
            raise

    def __call__(self) -> Authorized | ChallengeRequired:
        """Send the request and parse the answer, as ``client.authorize`` does."""
        response = self.response()
        try:
            return parse_outcome(response)
        except AuthzError as exc:
            name_endpoint(exc, "authorize", self._url)
            scrub_error(exc, self._secrets())
            raise

    def _secrets(self) -> list[Any]:
        return [self._subject_token, *self._client_secrets()]

    def __repr__(self) -> str:
        return f"PreparedAuthorize(url={self._url!r}, body_bytes={len(self._body)})"


__all__ = ["PreparedAuthorize", "scrub_error"]
