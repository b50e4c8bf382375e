"""Client-credentials access tokens: cached, refreshed ahead of expiry, single-flight.

The lifetime is read from ``expiresIn`` on every issuance (SPEC: it may change at any time)
and normalised once into an absolute ``refresh_at``, so the hot path is one clock read and
one compare. The margin is proportional for short lifetimes (``min(60 s, lifetime / 4)``):
a 4-second sandbox token is reused for 3 s, never fetched per call, never left to expire.

One :class:`TokenProvider` may be shared by many clients, threads and gevent greenlets;
all of them crossing the refresh point cause ONE token call. Its lock is created on first
use, so a provider built before gevent monkey-patches still gets a cooperative lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from authzkit.clock import Clock, system_clock
from authzkit.errors import (
    AuthzError,
    TokenRequestError,
    UnexpectedResponseError,
    error_from_response,
)
from authzkit.locks import LazilyLocked
from authzkit.redact import Secret, scrub
from authzkit.retry import Retry
from authzkit.spec import TOKEN_PATH
from authzkit.transport import Transport

log = logging.getLogger(__name__)

MAX_MARGIN = 60.0


def refresh_margin(lifetime: float) -> float:
    """Seconds before expiry at which to refresh: ``min(60, lifetime / 4)``."""
    return min(MAX_MARGIN, max(lifetime, 0.0) / 4.0)


@dataclass(frozen=True)
class AccessToken:
    """One issued access token with its absolute times (seconds since the epoch)."""

    value: str = field(repr=False)
    issued_at: float
    expires_at: float
    refresh_at: float
    expires_in: int | float = 0
    token_type: str = "Bearer"

    @property
    def lifetime(self) -> int | float:
        """``expiresIn`` as the service sent it (seconds)."""
        return self.expires_in

    @classmethod
    def from_json(cls, body: Any, *, issued_at: float) -> AccessToken:
        """Normalise a token response; ``issued_at`` is read before the request was sent."""
        if not isinstance(body, dict):
            raise UnexpectedResponseError("the token response is not a JSON object", status=200)
        value = body.get("accessToken")
        lifetime = body.get("expiresIn")
        if isinstance(lifetime, str):
            try:
                lifetime = float(lifetime)
            except ValueError:
                lifetime = None
        if not isinstance(value, str) or not value:
            raise UnexpectedResponseError("the token response has no accessToken", status=200)
        if isinstance(lifetime, bool) or not isinstance(lifetime, int | float) or lifetime <= 0:
            raise UnexpectedResponseError(
                "the token response has no positive expiresIn", status=200)
        expires_at = issued_at + float(lifetime)
        return cls(value=value, issued_at=issued_at, expires_at=expires_at,
                   refresh_at=expires_at - refresh_margin(float(lifetime)),
                   expires_in=int(lifetime) if float(lifetime).is_integer() else lifetime,
                   token_type=str(body.get("tokenType") or "Bearer"))


class TokenProvider(LazilyLocked):
    """Issues and caches the access token of one client application.

    ``token_calls`` counts HTTP calls to the token endpoint (retries included);
    ``refreshes`` counts tokens issued to replace an earlier one.
    """

    def __init__(self, *, auth_url: str, client_id: str, client_secret: str | Secret,
                 transport: Transport, clock: Clock | None = None, attempts: int = 3,
                 backoff: float = 0.2, sleep: Callable[[float], None] | None = None) -> None:
        self.token_url = auth_url.rstrip("/") + TOKEN_PATH
        self.client_id = client_id
        self._client_secret = Secret(client_secret)
        self._transport = transport
        self._clock = clock or system_clock
        self.retry = Retry(attempts=max(1, attempts), backoff=backoff, sleep=sleep)
        self._token: AccessToken | None = None
        self.token_calls = 0
        self.refreshes = 0

    @property
    def current(self) -> AccessToken | None:
        """The cached token, if any (fresh or not)."""
        return self._token

    @property
    def lifetime(self) -> int | float | None:
        """``expiresIn`` of the cached token in seconds (``None`` before the first issuance)."""
        token = self._token
        return None if token is None else token.lifetime

    def token(self, transport: Transport | None = None) -> str:
        """A valid access token: the cached one, or a new one fetched by one caller."""
        cached = self._token
        if cached is not None and self._clock() < cached.refresh_at:
            return cached.value
        with self._lock:
            cached = self._token
            if cached is not None and self._clock() < cached.refresh_at:
                return cached.value
            return self._fetch(transport).value

    def refresh_after_rejection(self, rejected: str, transport: Transport | None = None) -> str:
        """A new token after ``rejected`` got a 401, unless another caller already replaced it."""
        with self._lock:
            cached = self._token
            if (cached is not None and cached.value != rejected
                    and self._clock() < cached.refresh_at):
                return cached.value
            return self._fetch(transport).value

    def invalidate(self, rejected: str | None = None) -> None:
        """Forget the cached token (only if it is still ``rejected``, when given)."""
        with self._lock:
            if self._token is not None and (rejected is None or self._token.value == rejected):
                self._token = None

    def _fetch(self, transport: Transport | None) -> AccessToken:
        """One issuance with bounded retries and exponential backoff; the caller holds the lock."""
        send = transport or self._transport
        body = {"clientId": self.client_id, "clientSecret": self._client_secret.reveal()}

        def issue() -> AccessToken:
            issued_at = self._clock()
            self.token_calls += 1
            response = send.request("POST", self.token_url, name="token", json_body=body)
            if response.status != 200:
                raise error_from_response(response.status, response.content, what="token")
            return self._store(AccessToken.from_json(response.json(), issued_at=issued_at))

        return self.retry.run(issue, what="token endpoint", give_up=self._final_error,
                              secrets=[self._client_secret])

    def _store(self, token: AccessToken) -> AccessToken:
        if self._token is not None:
            self.refreshes += 1
        self._token = token
        log.debug("access token issued: lifetime %.0f s, refresh after %.1f s",
                  token.lifetime, token.refresh_at - token.issued_at)
        return token

    def _final_error(self, last: AuthzError, attempts: int) -> TokenRequestError:
        """One clear error: a refusal of the credentials, or what kept failing."""
        if last.status is not None and 400 <= last.status < 500 and last.status != 429:
            return TokenRequestError(
                f"the token endpoint refused client {self.client_id!r}: "
                f"{scrub(last.message, [self._client_secret])}",
                type=last.type, status=last.status, field=last.field, body=last.body)
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        return TokenRequestError(
            f"no access token from {self.token_url} after {tries}: "
            f"{scrub(str(last), [self._client_secret])}",
            type=last.type, status=last.status, body=last.body)

    def __repr__(self) -> str:
        return (f"TokenProvider(token_url={self.token_url!r}, client_id={self.client_id!r}, "
                f"token_calls={self.token_calls}, refreshes={self.refreshes})")


__all__ = ["MAX_MARGIN", "AccessToken", "TokenProvider", "refresh_margin"]
