"""Where the client's tokens come from: the draft path below ``auth_url``, an explicit
``token_url``, or an issuer's discovery document, read once and checked (docs/internals.md,
"The token endpoint"). How the client proves who it is there is
:mod:`authzkit.client.credentials`.
"""

from __future__ import annotations

from collections.abc import Mapping

from authzkit.client.retry import Retry, is_retryable
from authzkit.client.transport import Transport
from authzkit.wire.error_table import error_from_response
from authzkit.wire.errors import AuthzError, ConfigError, TokenRequestError
from authzkit.wire.spec import OIDC_CONFIGURATION_PATH, TOKEN_PATH
from authzkit.wire.variables import check_url


class TokenEndpoint:
    """Where tokens come from: the draft path, an explicit URL, or an issuer's discovery
    document (read once, on the first token call, with the client's timeout). ``mtls``:
    the client authenticates with its TLS certificate, so a discovered
    ``mtls_endpoint_aliases`` token endpoint wins (an explicit ``token_url`` still does)."""

    def __init__(
        self,
        *,
        auth_url: str | None = None,
        token_url: str | None = None,
        issuer: str | None = None,
        draft: bool = True,
        mtls: bool = False,
    ) -> None:
        self.mtls = mtls
        self.issuer = check_url("issuer", issuer, exact=True) if issuer else None
        if token_url:
            self._url: str | None = check_url("token_url", token_url)
        elif self.issuer:
            self._url = None
        elif not draft:
            raise ConfigError(
                "an OAuth 2.0 client authentication needs issuer= (OpenID "
                "Connect discovery) or token_url="
            )
        elif auth_url:
            self._url = check_url("auth_url", auth_url) + TOKEN_PATH
        else:
            raise ConfigError("no token endpoint: give auth_url (draft), issuer or token_url")

    @property
    def discovery_url(self) -> str | None:
        """``{issuer}/.well-known/openid-configuration`` (``None`` without an issuer); one
        slash between them, whether or not the issuer ends in one."""
        return self.issuer.rstrip("/") + OIDC_CONFIGURATION_PATH if self.issuer else None

    @property
    def known_url(self) -> str | None:
        """The token endpoint if already known (explicit, draft, or discovered)."""
        return self._url

    def url(self, transport: Transport, retry: Retry) -> str:
        """The token endpoint URL; discovers it on first use (the caller serialises calls)."""
        if self._url is None:
            self._url = discover_token_endpoint(
                self.discovery_url or "", transport, retry, issuer=self.issuer, mtls=self.mtls
            )
        return self._url


def discover_token_endpoint(
    discovery_url: str,
    transport: Transport,
    retry: Retry,
    *,
    issuer: str | None = None,
    mtls: bool = False,
) -> str:
    """``token_endpoint`` of an OpenID Connect discovery document at ``discovery_url``
    (with ``mtls``, its ``mtls_endpoint_aliases.token_endpoint`` when it names one).

    Faults (no answer, 5xx, 429) are retried like any safe GET and then reported as a
    :class:`TokenRequestError` (no token can be had; callers do not retry it again); any
    other failure — a 4xx, not JSON, no ``token_endpoint``, an ``issuer`` other than
    ``issuer`` (OpenID Connect Discovery §4.3: it must be identical) — is a
    :class:`ConfigError`: the issuer is wrong. Both name ``discovery_url``.
    """

    def fetch() -> str:
        response = transport.request("GET", discovery_url, name="openid-configuration")
        if response.status != 200:
            raise error_from_response(
                response.status, response.content, what="OpenID Connect discovery"
            )
        document = response.body()
        if mtls and isinstance(document, Mapping):
            alias = mtls_token_endpoint(document)
            if alias is not None:
                document = {**document, "token_endpoint": alias}
        endpoint = document.get("token_endpoint") if isinstance(document, Mapping) else None
        if not isinstance(endpoint, str) or not endpoint:
            raise ConfigError(
                "the document is not JSON with a token_endpoint"
                if not isinstance(document, Mapping)
                else "the document has no token_endpoint"
            )
        try:
            url = check_url("token_endpoint", endpoint)
        except ConfigError:
            raise ConfigError(f"its token_endpoint is not an http(s) URL: {endpoint!r}") from None
        stated = document.get("issuer")
        if issuer is not None and stated != issuer:
            raise ConfigError(
                f"the document's issuer is {stated!r}, the configured issuer "
                f"{issuer!r}; they must be identical (OpenID Connect Discovery "
                f"§4.3): set AUTHZKIT_ISSUER to the document's issuer if that "
                f"is the provider you mean"
            )
        return url

    try:
        return retry.run(fetch, what="OpenID Connect discovery")
    except AuthzError as exc:
        where = f"OpenID Connect discovery at {discovery_url}"
        if is_retryable(exc):
            raise TokenRequestError(
                f"no token endpoint: {where} failed: {exc}",
                type=exc.type,
                status=exc.status,
                body=exc.body,
            ) from exc
        hint = "" if "issuer" in exc.message else " (is the issuer URL right?)"
        raise ConfigError(
            f"{where}: {exc.message}{hint}", type=exc.type, status=exc.status, body=exc.body
        ) from exc


def mtls_token_endpoint(document: Mapping[str, object]) -> str | None:
    """The token endpoint a mutual-TLS client uses by RFC 8705 §5, when the discovery
    ``document`` names one in ``mtls_endpoint_aliases`` (``None`` otherwise; a value that
    is no http(s) URL is a :class:`ConfigError` naming that field, not the plain
    ``token_endpoint``)."""
    aliases = document.get("mtls_endpoint_aliases")
    alias = aliases.get("token_endpoint") if isinstance(aliases, Mapping) else None
    if alias is None:
        return None
    try:
        return check_url("mtls_endpoint_aliases.token_endpoint", str(alias) if alias else "")
    except ConfigError:
        raise ConfigError(
            f"its mtls_endpoint_aliases.token_endpoint is not an http(s) URL: {alias!r}"
        ) from None


__all__ = ["TokenEndpoint", "discover_token_endpoint", "mtls_token_endpoint"]
