"""Client-credentials access tokens: cached, refreshed ahead of expiry, single-flight.

One :class:`TokenProvider` may be shared by many clients, threads and greenlets: all of
them crossing the refresh point cause one token call; the hot path is one clock read and
one compare (docs/internals.md, "Tokens").
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from authzkit.client.credentials import (
    ASSERTION_METHODS,
    TLS_METHODS,
    ClientCredentials,
    KeySource,
    default_client_auth,
)
from authzkit.client.issuer import TokenEndpoint
from authzkit.client.retry import Retry
from authzkit.client.transport import Transport
from authzkit.client.unauthenticated import SubjectSessions
from authzkit.wire.clock import Clock, system_clock
from authzkit.wire.error_table import error_from_response
from authzkit.wire.errors import (
    AuthzError,
    ConfigError,
    TlsError,
    TokenRequestError,
    UnexpectedResponseError,
)
from authzkit.wire.locks import LazilyLocked
from authzkit.wire.redact import Secret, scrub
from authzkit.wire.tls import CERT_FILE, KEY_FILE, TlsSettings

log = logging.getLogger(__name__)

MAX_MARGIN = 60.0
REFUSAL_STATUSES = (400, 401, 403)


def is_refusal(error: AuthzError) -> bool:
    """True when a token endpoint refused the request itself (RFC 6749 §5.2: 400, or 401
    for ``invalid_client``; the draft's 401/400/403 ``srn:error:*``), not when the address
    answered like no token endpoint at all (404, 405, an HTML page…), whatever its body."""
    return error.status in REFUSAL_STATUSES


def client_certificate(transport: Transport) -> tuple[bool, str | None]:
    """Whether ``transport`` says which client certificate it shows on TLS connections,
    and that certificate's file: the ``cert`` of a session of the caller's, else its
    :class:`~authzkit.wire.tls.TlsSettings`. ``(False, None)`` when it cannot tell (a test fake,
    a wrapper): mutual TLS is then taken on trust."""
    own = getattr(getattr(transport, "session", None), "cert", None)
    if own:
        return True, own if isinstance(own, str) else str(own[0])
    tls = getattr(transport, "tls", None)
    if isinstance(tls, TlsSettings):
        return True, tls.cert_file
    return False, None


def refresh_margin(lifetime: float) -> float:
    """Seconds before expiry at which to refresh: ``min(60, lifetime / 4)``."""
    return min(MAX_MARGIN, max(lifetime, 0.0) / 4.0)


def _first(body: Mapping[str, Any], *names: str) -> Any:
    """The value of the first of ``names`` present in ``body`` (either dialect's spelling)."""
    for name in names:
        if name in body:
            return body[name]
    return None


@dataclass(frozen=True)
class AccessToken:
    """One issued access token with its absolute times (seconds since the epoch).

    ``serial`` numbers the tokens a provider issued (1, 2, …): a token with a higher
    serial was issued later, which the ambiguous-401 policy relies on.
    """

    value: str = field(repr=False)
    issued_at: float
    expires_at: float
    refresh_at: float
    expires_in: int | float = 0
    token_type: str = "Bearer"
    serial: int = 0

    @property
    def lifetime(self) -> int | float:
        """``expiresIn``/``expires_in`` as the service sent it (seconds)."""
        return self.expires_in

    @classmethod
    def from_json(cls, body: Any, *, issued_at: float) -> AccessToken:
        """Normalise a token response of either dialect; ``issued_at`` is read before the
        request was sent."""
        if not isinstance(body, Mapping):
            raise UnexpectedResponseError("the token response is not a JSON object", status=200)
        value = _first(body, "accessToken", "access_token")
        lifetime = _first(body, "expiresIn", "expires_in")
        if isinstance(lifetime, str):
            try:
                lifetime = float(lifetime)
            except ValueError:
                lifetime = None
        if not isinstance(value, str) or not value:
            raise UnexpectedResponseError(
                "the token response has no accessToken (access_token)", status=200
            )
        if isinstance(lifetime, bool) or not isinstance(lifetime, int | float) or lifetime <= 0:
            raise UnexpectedResponseError(
                "the token response has no positive expiresIn (expires_in)", status=200
            )
        token_type = _first(body, "tokenType", "token_type")
        if token_type is not None and str(token_type).lower() != "bearer":
            # RFC 6750: the type is case-insensitive; anything but bearer cannot be sent
            # as "Authorization: Bearer".
            raise UnexpectedResponseError(
                f"the token endpoint issued a {token_type!r} token; authzkit sends bearer "
                f"tokens only",
                status=200,
            )
        expires_at = issued_at + float(lifetime)
        return cls(
            value=value,
            issued_at=issued_at,
            expires_at=expires_at,
            refresh_at=expires_at - refresh_margin(float(lifetime)),
            expires_in=int(lifetime) if float(lifetime).is_integer() else lifetime,
            token_type=str(token_type or "Bearer"),
        )


class TokenProvider(LazilyLocked):
    """Issues and caches the access token of one client application.

    Where tokens come from: ``token_url`` if given, else the ``token_endpoint`` of
    ``issuer``'s OpenID Connect discovery document, else the draft path below ``auth_url``.
    How the client authenticates: ``client_auth`` (see :mod:`authzkit.client.credentials`;
    ``"draft"`` with an issuer or token URL becomes ``private_key_jwt`` when ``client_key``
    is given, else ``client_secret_post``).

    ``token_calls`` counts HTTP calls to the token endpoint (retries included);
    ``refreshes`` counts tokens issued to replace an earlier one.
    """

    def __init__(
        self,
        *,
        auth_url: str | None = None,
        client_id: str,
        client_secret: str | Secret | None = None,
        transport: Transport,
        clock: Clock | None = None,
        attempts: int = 3,
        backoff: float = 0.2,
        sleep: Callable[[float], None] | None = None,
        issuer: str | None = None,
        token_url: str | None = None,
        client_auth: str = "draft",
        client_key: KeySource | None = None,
        assertion_audience: str | None = None,
        sessions: SubjectSessions | None = None,
        scope: str | None = None,
        resource: str | None = None,
    ) -> None:
        self._clock = clock or system_clock
        method = default_client_auth(
            client_auth, issuer=issuer, token_url=token_url, client_key=client_key
        )
        self.credentials = ClientCredentials(
            client_id=client_id,
            method=method,
            client_secret=client_secret,
            client_key=client_key,
            assertion_audience=assertion_audience,
            clock=self._clock,
            scope=scope,
            resource=resource,
        )
        self.endpoint = TokenEndpoint(
            auth_url=auth_url,
            token_url=token_url,
            issuer=issuer,
            draft=method == "draft",
            mtls=method in TLS_METHODS,
        )
        self.certificate = self._certificate_for(method, transport)
        self.client_id = client_id
        self._transport = transport
        self.retry = Retry(attempts=max(1, attempts), backoff=backoff, sleep=sleep)
        self.sessions = sessions if sessions is not None else SubjectSessions()
        self._token: AccessToken | None = None
        self._issued = 0
        self.token_calls = 0
        self.refreshes = 0

    @staticmethod
    def _certificate_for(method: str, transport: Transport) -> str | None:
        """The client certificate file ``transport`` shows; for a mutual-TLS ``method``, a
        :class:`ConfigError` before any request when it shows none (the provider would
        only refuse the client)."""
        known, certificate = client_certificate(transport)
        if method in TLS_METHODS and known and certificate is None:
            raise ConfigError(
                f"client_auth {method} needs a client certificate on the connection: "
                f"tls_cert_file= and tls_key_file= ({CERT_FILE}, {KEY_FILE})"
            )
        return certificate

    @property
    def client_auth(self) -> str:
        """How this provider authenticates at the token endpoint (after the default rule)."""
        return self.credentials.method

    @property
    def issuer(self) -> str | None:
        """The OpenID Connect issuer, when one was given."""
        return self.endpoint.issuer

    @property
    def token_url(self) -> str | None:
        """The token endpoint; ``None`` until an issuer's discovery document was read."""
        return self.endpoint.known_url

    @property
    def current(self) -> AccessToken | None:
        """The cached token, if any (fresh or not)."""
        return self._token

    @property
    def lifetime(self) -> int | float | None:
        """``expiresIn`` of the cached token in seconds (``None`` before the first issuance)."""
        token = self._token
        return None if token is None else token.lifetime

    def fresh(self) -> AccessToken | None:
        """The cached token while it needs no refresh, else ``None``: never any I/O."""
        cached = self._token
        return cached if cached is not None and self._clock() < cached.refresh_at else None

    def token(self, transport: Transport | None = None) -> str:
        """A valid access token: the cached one, or a new one fetched by one caller."""
        cached = self._token
        if cached is not None and self._clock() < cached.refresh_at:
            return cached.value
        return self.access_token(transport).value

    def access_token(self, transport: Transport | None = None) -> AccessToken:
        """Like :meth:`token`, with the token's times and ``serial``."""
        cached = self._token
        if cached is not None and self._clock() < cached.refresh_at:
            return cached
        with self._lock:
            cached = self._token
            if cached is not None and self._clock() < cached.refresh_at:
                return cached
            return self._fetch(transport)

    def refresh_after_rejection(self, rejected: str, transport: Transport | None = None) -> str:
        """A new token after ``rejected`` got a 401, unless another caller already replaced it."""
        return self.replace_rejected(rejected, transport).value

    def replace_rejected(self, rejected: str, transport: Transport | None = None) -> AccessToken:
        """Like :meth:`refresh_after_rejection`, with the token's times and ``serial``."""
        with self._lock:
            cached = self._token
            if (
                cached is not None
                and cached.value != rejected
                and self._clock() < cached.refresh_at
            ):
                return cached
            return self._fetch(transport)

    def invalidate(self, rejected: str | None = None) -> None:
        """Forget the cached token (only if it is still ``rejected``, when given)."""
        with self._lock:
            if self._token is not None and (rejected is None or self._token.value == rejected):
                self._token = None

    def _fetch(self, transport: Transport | None) -> AccessToken:
        """One issuance with bounded retries and exponential backoff; the caller holds the
        lock. The request is built afresh for every attempt (a new assertion ``jti``)."""
        send = transport or self._transport
        url = self.endpoint.url(send, self.retry)

        def issue() -> AccessToken:
            request = self.credentials.request(url, issuer=self.endpoint.issuer)
            issued_at = self._clock()
            self.token_calls += 1
            response = send.request(
                "POST", url, name="token", headers=request.headers or None, json_body=request.fields
            )
            if response.status != 200:
                error = error_from_response(response.status, response.content, what="token")
                clean = scrub(error.message, request.secrets())  # an endpoint may echo them
                error.message, error.args = clean, (clean,)
                raise error
            return self._store(AccessToken.from_json(response.json(), issued_at=issued_at))

        return self.retry.run(
            issue,
            what="token endpoint",
            give_up=self._final_error,
            secrets=self.credentials.secrets(),
        )

    def _store(self, token: AccessToken) -> AccessToken:
        if self._token is not None:
            self.refreshes += 1
        self._issued += 1
        token = dataclasses.replace(token, serial=self._issued)
        self._token = token
        log.debug(
            "access token issued: lifetime %.0f s, refresh after %.1f s",
            token.lifetime,
            token.refresh_at - token.issued_at,
        )
        return token

    def _final_error(self, last: AuthzError, attempts: int) -> AuthzError:
        """One clear error: a refusal of the credentials (with what providers match in an
        assertion), an address that is no token endpoint, or what kept failing; a TLS
        failure as it is (its line already names the URL and the setting that fixes it)."""
        if isinstance(last, TlsError):
            return last
        secrets = self.credentials.secrets()
        url = self.token_url or self.endpoint.discovery_url
        if is_refusal(last):
            facts = ""
            if last.type == "invalid_client" and self.client_auth in ASSERTION_METHODS:
                facts = "; " + self.credentials.assertion_facts(self.endpoint.issuer or url or "")
            if last.type == "invalid_client" and self.client_auth in TLS_METHODS:
                facts = "; " + self.credentials.certificate_facts(self.certificate)
            return TokenRequestError(
                f"the token endpoint {url} refused client {self.client_id!r} "
                f"({self.client_auth}): {scrub(last.message, secrets)}{facts}",
                type=last.type,
                status=last.status,
                field=last.field,
                body=last.body,
            )
        if last.status is not None and 400 <= last.status < 500 and last.status != 429:
            return TokenRequestError(
                f"no token endpoint at {url} (HTTP {last.status}): "
                f"{scrub(last.message, secrets)} (is the URL right?)",
                type=last.type,
                status=last.status,
                field=last.field,
                body=last.body,
            )
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        return TokenRequestError(
            f"no access token from {self.token_url} after {tries}: {scrub(str(last), secrets)}",
            type=last.type,
            status=last.status,
            body=last.body,
        )

    def _repr_html_(self) -> str:
        """A notebook's view: the token masked, when it expires, the token calls so far."""
        from authzkit.client.access_token_display import provider_html

        return provider_html(self, self._clock())

    def __repr__(self) -> str:
        where = self.token_url or self.endpoint.discovery_url
        return (
            f"TokenProvider(token_url={where!r}, client_id={self.client_id!r}, "
            f"client_auth={self.client_auth!r}, token_calls={self.token_calls}, "
            f"refreshes={self.refreshes})"
        )


__all__ = [
    "MAX_MARGIN",
    "REFUSAL_STATUSES",
    "AccessToken",
    "TokenProvider",
    "is_refusal",
    "refresh_margin",
]
