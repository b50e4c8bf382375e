"""``AuthzClient``: the one client notebooks, locustfiles and the CLI use.

It wires the transport, tokens, keys, bodies, answers and recorder, and owns the 401 and
rotated-key retries; no secret leaves it in a repr or an error. ``dialect="authzen"`` makes
it a PEP of an AuthZEN PDP (docs/internals.md, "The facade").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

from authzkit.client.answers import Answers, choose_answer
from authzkit.client.authorize import build_body, parse_outcome
from authzkit.client.credentials import KeySource
from authzkit.client.discovery import KeyCache
from authzkit.client.exchanges import Recorder, RecordingTransport
from authzkit.client.outcomes import Asked, Authorized, ChallengeRequired
from authzkit.client.prepared import PreparedAuthorize, scrub_error
from authzkit.client.token import TokenProvider
from authzkit.client.transport import (
    HttpResponse,
    Transport,
    encode_body,
    name_endpoint,
    transport_for,
)
from authzkit.client.unauthenticated import resend_after_401
from authzkit.wire import jwe
from authzkit.wire.clock import Clock, system_clock
from authzkit.wire.config import DEFAULT_TIMEOUT, Settings
from authzkit.wire.errors import (
    AuthzError,
    ChallengeRequiredError,
    ConfigError,
    UnrecognizedKeyError,
)
from authzkit.wire.redact import Secret, reveal
from authzkit.wire.spec import AUTHORIZE_PATH, AUTHZEN, DEFAULT_RESOURCE_TYPE, DIALECTS
from authzkit.wire.tls import TlsSettings, fallback_ca
from authzkit.wire.variables import check_url

if TYPE_CHECKING:
    from authzkit.client.authzen import AuthzenClient
    from authzkit.client.outcomes import Denied

_ENCODED_BODIES = 256  # distinct authorize requests whose encoded body is kept


def _tls_options(
    tls: TlsSettings | None,
    ca_file: str | None,
    cert_file: str | None,
    key_file: str | None,
    insecure: bool,
) -> TlsSettings:
    """The client's :class:`TlsSettings`: ``tls`` as given, or built (and checked) from the
    ``tls_*`` keyword arguments, never both."""
    given = ca_file or cert_file or key_file or insecure
    if tls is not None:
        if given:
            raise ConfigError("pass tls= or the tls_* keyword arguments, not both")
        return tls
    ca_setting = "tls_ca_file"
    if ca_file is None:  # as requests, curl and httpx: REQUESTS_CA_BUNDLE, SSL_CERT_FILE
        ca_setting, ca_file = fallback_ca()
    return TlsSettings.of(
        ca_file=ca_file,
        cert_file=cert_file,
        key_file=key_file,
        insecure=insecure,
        ca_setting=ca_setting,
        names=("tls_cert_file", "tls_key_file"),
    )


@dataclass(frozen=True)
class EncryptedSolution:
    """One encryption of a challenge answer: for which kid, the compact JWE (``None`` when
    it failed), how long it took and the error it raised."""

    kid: str
    solution: str | None = field(repr=False)
    elapsed_ms: float
    error: Exception | None = None


class AuthzClient:
    """A resource server's client of the Authorization Decision Service.

    Share ``token_provider`` and ``keys`` between clients of one process (Locust users)
    so they fetch one token and one key set between them; inject ``session`` (requests,
    or Locust's ``HttpSession``/``FastHttpSession``) and ``clock`` for load tests and tests.
    :meth:`from_env` builds one from the ``AUTHZKIT_*`` settings.

    What it speaks:
        ``dialect``: ``draft`` (default) or ``published``, the service's authorize API
        (the token endpoint settings tell them apart), or ``authzen``: a PEP of an AuthZEN
        1.0 PDP at ``base_url`` (:meth:`evaluate`, :meth:`evaluations`,
        :meth:`search_subjects`, :meth:`search_resources`, :meth:`search_actions`), whose
        calls carry a Bearer token only when ``client_id`` (or ``token_provider``) is given.

    Where the service is:
        ``base_url``: the authorization and discovery host. ``auth_url``: the draft's
        token host (default ``base_url``). ``issuer``: an OpenID Connect issuer whose
        discovery document names the token endpoint; ``token_url``: an explicit token
        endpoint (wins over the issuer).

    Who the client is:
        ``client_id`` and ``client_secret`` (kept as a :class:`~authzkit.wire.redact.Secret`,
        never shown). ``client_auth``: ``draft`` (the draft's JSON; with an issuer or token
        URL it means ``private_key_jwt`` given a key, else ``client_secret_post``),
        ``client_secret_post``, ``client_secret_basic``, ``client_secret_jwt``,
        ``private_key_jwt``, ``tls_client_auth`` or ``self_signed_tls_client_auth``.
        ``client_key``: the RSA key of ``private_key_jwt`` (PEM text or bytes, a path, a JWK
        or a loaded key). ``assertion_audience``: an assertion's ``aud`` when not the
        issuer. ``scope`` and ``resource`` (RFC 8707): what the token request asks for.

    How it talks:
        ``timeout``: seconds for every call. ``tls_ca_file``, ``tls_cert_file``,
        ``tls_key_file``, ``tls_insecure``, or one ``tls``
        (:class:`~authzkit.wire.tls.TlsSettings`): the trust store and client certificate of
        every connection. ``session``: the HTTP session to send with. ``recorder``: keeps
        every exchange (:class:`~authzkit.client.exchanges.Recorder`). ``alg``: the JWE key
        algorithm of challenge solutions. ``clock``: the time source (tests).

    Shared between clients:
        ``token_provider`` and ``keys``: one token and one key set for many clients (then
        the token-endpoint arguments belong to the provider, not here).
    """

    def __init__(
        self,
        *,
        base_url: str,
        auth_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | Secret | None = None,
        session: Any = None,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Clock | None = None,
        token_provider: TokenProvider | None = None,
        keys: KeyCache | None = None,
        recorder: Recorder | None = None,
        alg: str = jwe.DEFAULT_ALG,
        issuer: str | None = None,
        token_url: str | None = None,
        client_auth: str = "draft",
        client_key: KeySource | None = None,
        assertion_audience: str | None = None,
        scope: str | None = None,
        resource: str | None = None,
        tls_ca_file: str | None = None,
        tls_cert_file: str | None = None,
        tls_key_file: str | None = None,
        tls_insecure: bool = False,
        tls: TlsSettings | None = None,
        dialect: str = DIALECTS[0],
    ) -> None:
        if dialect not in DIALECTS:
            raise ConfigError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
        self.dialect = dialect
        if not timeout or timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if alg not in jwe.KEY_ALGS:
            raise ConfigError(f"alg must be one of {', '.join(jwe.KEY_ALGS)}, got {alg!r}")
        self.base_url = check_url("base_url", base_url)
        self.auth_url = check_url("auth_url", auth_url) if auth_url else self.base_url
        self.timeout = timeout
        self.alg = alg
        self.recorder = recorder
        self._clock = clock or system_clock
        self.tls = _tls_options(tls, tls_ca_file, tls_cert_file, tls_key_file, tls_insecure)
        self._owns_session = session is None
        self.session = self.tls.session() if session is None else session
        transport: Transport = transport_for(self.session, timeout=timeout, tls=self.tls)
        if recorder is not None:
            transport = RecordingTransport(transport, recorder)
        self.transport = transport
        self._authorize_url = self.base_url + AUTHORIZE_PATH
        self._encoded_bodies: dict[tuple[Any, ...], bytes | None] = {}

        self._authzen: AuthzenClient | None = None
        self._token_provider: TokenProvider | None = None
        self._keys: KeyCache | None = None
        if dialect == AUTHZEN and token_provider is None and not client_id:
            self._client_secret: Secret | None = None
            self.client_id: str | None = None  # no credentials: calls go without a token
            self._authzen = self._authzen_client()
            return
        token_provider = self._token_provider_for(
            token_provider,
            client_id=client_id,
            client_secret=client_secret,
            issuer=issuer,
            token_url=token_url,
            client_auth=client_auth,
            client_key=client_key,
            assertion_audience=assertion_audience,
            scope=scope,
            resource=resource,
        )
        self.client_id = token_provider.client_id
        self._client_secret = Secret(client_secret) if client_secret else None
        self._token_provider = token_provider
        if dialect == AUTHZEN:
            self._authzen = self._authzen_client()
            return
        self._keys = (
            keys
            if keys is not None
            else KeyCache(
                base_url=self.base_url,
                transport=self.transport,
                clock=self._clock,
                token_provider=token_provider,
                retry=token_provider.retry,
            )
        )

    @classmethod
    def from_env(cls, settings: Settings | None = None, **options: Any) -> AuthzClient:
        """A client for the environment ``AUTHZKIT_*`` (or ``.env``) describes.

        Without ``AUTHZKIT_BASE_URL`` there is nothing to connect to; use
        :func:`authzkit.connect`, which starts the embedded sandbox instead.
        """
        settings = settings if settings is not None else Settings.from_env()
        if settings.uses_sandbox:
            raise ConfigError(
                "AUTHZKIT_BASE_URL is not set; authzkit.connect() starts the "
                "embedded sandbox instead"
            )
        options.setdefault("timeout", settings.timeout)
        if settings.dialect is not None:
            options.setdefault("dialect", settings.dialect)
        if not any(name.startswith("tls") for name in options):
            options["tls"] = settings.tls
        return cls(
            base_url=settings.require_base_url(),
            auth_url=settings.auth_url,
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            **{**settings.token_options(), **options},
        )

    def _token_provider_for(
        self,
        shared: TokenProvider | None,
        *,
        client_id: str | None,
        client_secret: str | Secret | None,
        issuer: str | None,
        token_url: str | None,
        client_auth: str,
        client_key: KeySource | None,
        assertion_audience: str | None,
        scope: str | None,
        resource: str | None,
    ) -> TokenProvider:
        """A token provider for these arguments, or the ``shared`` one checked against
        them (the token-endpoint arguments then belong to it)."""
        token_provider = shared
        if token_provider is None:
            if not client_id:
                raise ConfigError("client_id is required (or pass a shared token_provider)")
            token_provider = TokenProvider(
                auth_url=self.auth_url,
                client_id=client_id,
                client_secret=client_secret,
                transport=self.transport,
                clock=self._clock,
                issuer=issuer,
                token_url=token_url,
                client_auth=client_auth,
                client_key=client_key,
                assertion_audience=assertion_audience,
                scope=scope,
                resource=resource,
            )
        else:
            if client_id and client_id != token_provider.client_id:
                raise ConfigError(
                    f"client_id {client_id!r} differs from the shared token "
                    f"provider's {token_provider.client_id!r}"
                )
            if (
                issuer
                or token_url
                or client_key is not None
                or client_auth != "draft"
                or scope
                or resource
            ):
                raise ConfigError(
                    "issuer, token_url, client_auth, client_key, scope and "
                    "resource belong to the shared token_provider; pass them "
                    "when building it"
                )
        return token_provider

    # -- the dialect's parts ------------------------------------------------------------------

    @property
    def token_provider(self) -> TokenProvider:
        """The access tokens' source (shared between clients); an AuthZEN client given no
        credentials has none."""
        if self._token_provider is None:
            raise ConfigError(
                "this AuthZEN client has no token method (give client_id and a secret or "
                "key, or a token_provider, for a Bearer token)"
            )
        return self._token_provider

    @property
    def keys(self) -> KeyCache:
        """The published encryption keys of challenge solutions (not on AuthZEN)."""
        if self._keys is None:
            raise ConfigError(self._not_spoken("challenge solutions"))
        return self._keys

    def _not_spoken(self, what: str) -> str:
        if self.dialect == AUTHZEN:
            return (
                f"{what} belong to the service's authorize API; this client speaks "
                f"authzen (use evaluate, evaluations or the searches)"
            )
        return (
            f"{what} belong to AuthZEN; this client speaks {self.dialect} "
            f"(AuthzClient(..., dialect='authzen'))"
        )

    def _authzen_client(self) -> AuthzenClient:
        from authzkit.client.authzen import AuthzenClient
        from authzkit.client.authzen.exchange import Exchange

        exchange = Exchange(self.transport, token_provider=self._token_provider)
        return AuthzenClient(self.base_url, exchange)

    @property
    def authzen(self) -> AuthzenClient:
        """The AuthZEN calls (``dialect="authzen"`` only): discovery, metadata, search."""
        if self._authzen is None:
            raise ConfigError(self._not_spoken("evaluations and searches"))
        return self._authzen

    # -- AuthZEN ---------------------------------------------------------------------------

    def evaluate(
        self,
        action: str | Mapping[str, Any],
        *,
        subject: Mapping[str, Any],
        resource: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> Authorized | Denied:
        """One AuthZEN decision: may ``subject`` perform ``action`` on ``resource``?
        :class:`Authorized` or :class:`~authzkit.client.outcomes.Denied` (a deny is an
        answer), the PDP's ``context`` kept; see :meth:`AuthzenClient.evaluate
        <authzkit.client.authzen.AuthzenClient.evaluate>`."""
        return self.authzen.evaluate(action, subject=subject, resource=resource, context=context)

    def evaluations(
        self,
        evaluations: Iterable[Mapping[str, Any]],
        *,
        semantic: str | None = None,
        **defaults: Any,
    ) -> list[Authorized | Denied]:
        """Many AuthZEN decisions in one call, in request order: ``semantic`` is
        ``execute_all`` (default), ``deny_on_first_deny`` or ``permit_on_first_permit``;
        ``subject``, ``action``, ``resource`` and ``context`` are the items' defaults."""
        return self.authzen.evaluations(evaluations, semantic=semantic, **defaults)

    def search_subjects(self, **request: Any) -> Iterator[dict[str, Any]]:
        """Every subject (all pages) that may act: see :meth:`AuthzenClient.search_subjects
        <authzkit.client.authzen.AuthzenClient.search_subjects>`."""
        return self.authzen.search_subjects(**request)

    def search_resources(self, **request: Any) -> Iterator[dict[str, Any]]:
        """Every resource (all pages) the subject may act on: see
        :meth:`AuthzenClient.search_resources
        <authzkit.client.authzen.AuthzenClient.search_resources>`."""
        return self.authzen.search_resources(**request)

    def search_actions(self, **request: Any) -> Iterator[dict[str, Any]]:
        """Every action (all pages) the subject may perform on the resource: see
        :meth:`AuthzenClient.search_actions
        <authzkit.client.authzen.AuthzenClient.search_actions>`."""
        return self.authzen.search_actions(**request)

    # -- tokens and keys -------------------------------------------------------------------

    def access_token(self) -> str:
        """The resource server's access token: cached, refreshed ahead of expiry."""
        return self.token_provider.token(self.transport)

    def encryption_key(self) -> jwe.PublicKey:
        """The published ``use=enc`` key (cached; re-fetched after a rotation)."""
        return self.keys.encryption_key(self.transport)

    def build_solution(
        self, challenge_id: int | str, kind: str, value: str | Secret, *, alg: str | None = None
    ) -> str:
        """The compact JWE of ``{"challenge_id": …, kind: value}`` for the current key."""
        return self._encrypt(self.encryption_key(), challenge_id, kind, value, alg)

    def _encrypt(
        self,
        key: jwe.PublicKey,
        challenge_id: int | str,
        kind: str,
        value: str | Secret,
        alg: str | None,
    ) -> str:
        payload = {"challenge_id": challenge_id, kind: reveal(value)}
        return jwe.encrypt(key, payload, alg=alg or self.alg)

    # -- authorize ---------------------------------------------------------------------------

    def authorize(
        self,
        action: str,
        *,
        resource_id: str,
        resource_type: str = DEFAULT_RESOURCE_TYPE,
        subject_token: str | Secret,
        user_agent: str = "authzkit",
        request_hash: str | None = None,
        user_ip: str | None = None,
        challenge_solution: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Authorized | ChallengeRequired:
        """Ask whether the subject may perform ``action`` on the resource.

        Returns :class:`Authorized` or :class:`ChallengeRequired`; every other answer raises
        the :class:`~authzkit.wire.errors.AuthzError` subclass its ``type`` names.
        """
        if self._authzen is not None:
            raise ConfigError(self._not_spoken("authorize"))
        # A resource server (and every Locust user) sends the same request again and
        # again: its encoded body is kept, keyed by the arguments, instead of re-encoding.
        key = (
            None
            if challenge_solution is not None or context
            else (
                action,
                resource_id,
                resource_type,
                subject_token,
                user_agent,
                request_hash,
                user_ip,
            )
        )
        body = self._encoded_bodies.get(key) if key is not None else None
        if body is None:
            body = encode_body(
                build_body(
                    action,
                    resource_id=resource_id,
                    resource_type=resource_type,
                    subject_token=subject_token,
                    user_agent=user_agent,
                    request_hash=request_hash,
                    user_ip=user_ip,
                    challenge_solution=challenge_solution,
                    context=context,
                )
            )
            if key is not None:
                if len(self._encoded_bodies) >= _ENCODED_BODIES:
                    self._encoded_bodies.clear()
                self._encoded_bodies[key] = body
        name = "authorize" if challenge_solution is None else "authorize:solution"
        try:
            outcome = self._send_authorize(body, name, subject_token)
        except AuthzError as exc:
            scrub_error(exc, [subject_token, challenge_solution, *self._secrets()])
            raise
        # What was asked, for the outcome's display (not its repr, not its equality).
        return replace(outcome, asked=Asked(action, resource_id, resource_type))

    def _secrets(self) -> list[Any]:
        """The client's own secrets, scrubbed from any error the service's answer fills."""
        provider = self._token_provider
        return [self._client_secret, *(provider.credentials.secrets() if provider else [])]

    def prepare_authorize(
        self,
        action: str,
        *,
        resource_id: str,
        resource_type: str = DEFAULT_RESOURCE_TYPE,
        subject_token: str | Secret,
        user_agent: str = "authzkit",
        request_hash: str | None = None,
        user_ip: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> PreparedAuthorize:
        """The :meth:`authorize` request for these arguments, built once to be sent again
        and again (a load test's user): see :class:`PreparedAuthorize`. A challenge
        solution is single-use, so it is never prepared."""
        if self._authzen is not None:
            raise ConfigError(self._not_spoken("authorize"))
        body = encode_body(
            build_body(
                action,
                resource_id=resource_id,
                resource_type=resource_type,
                subject_token=subject_token,
                user_agent=user_agent,
                request_hash=request_hash,
                user_ip=user_ip,
                context=context,
            )
        )
        assert body is not None
        return PreparedAuthorize(
            url=self._authorize_url,
            body=body,
            subject_token=subject_token,
            transport=self.transport,
            token_provider=self.token_provider,
            secrets=self._secrets,
        )

    def _post_authorize(self, body: bytes | None, name: str, token: str) -> HttpResponse:
        return self.transport.request(
            "POST",
            self._authorize_url,
            name=name,
            headers={"Authorization": "Bearer " + token},
            json_body=body,
        )

    def _send_authorize(
        self, body: bytes | None, name: str, subject_token: str | Secret
    ) -> Authorized | ChallengeRequired:
        access = self.token_provider.access_token(self.transport)
        response = self._post_authorize(body, name, access.value)
        if response.status == 401:
            response = resend_after_401(
                response,
                provider=self.token_provider,
                access=access,
                subject_token=subject_token,
                transport=self.transport,
                resend=lambda token: self._post_authorize(body, name, token),
            )
        try:
            return parse_outcome(response)
        except AuthzError as exc:
            # A 5xx is reported, not retried: repeating an authorization is not known to be
            # safe (a solution is single-use), so the caller decides.
            name_endpoint(exc, name, self._authorize_url)
            raise

    def send_solution(
        self,
        action: str,
        challenge: ChallengeRequired,
        kind: str,
        value: str | Secret,
        *,
        on_encrypted: Callable[[EncryptedSolution], None] | None = None,
        **request: Any,
    ) -> Authorized | ChallengeRequired:
        """Answer ``challenge`` with ``kind``/``value``: encrypt for the current key and send.

        The rotated-key rule lives here and only here: a solution refused with
        ``srn:error:unrecognized_key`` is re-encrypted, same answer, for freshly fetched keys
        and sent once more; any other refusal raises. ``request`` holds the arguments of
        the request that got the challenge (it is bound to them). ``on_encrypted`` hears of
        every encryption — the load test times it as a row of its own, the answer form
        shows its protected header.
        """
        if "challenge_solution" in request:
            raise ConfigError("send_solution builds challenge_solution itself")
        try:
            try:
                kid, solution = self._observed_solution(challenge, kind, value, on_encrypted)
                return self.authorize(action, challenge_solution=solution, **request)
            except UnrecognizedKeyError:
                self.keys.refresh(stale_kid=kid, transport=self.transport)
                _, solution = self._observed_solution(challenge, kind, value, on_encrypted)
                return self.authorize(action, challenge_solution=solution, **request)
        except AuthzError as exc:
            scrub_error(exc, [value, request.get("subject_token")])
            raise

    def _observed_solution(
        self,
        challenge: ChallengeRequired,
        kind: str,
        value: str | Secret,
        on_encrypted: Callable[[EncryptedSolution], None] | None,
    ) -> tuple[str, str]:
        """``(kid, solution)`` for the current key; only the encryption itself is timed
        (fetching the keys, when needed, is the ``keys`` call's own time)."""
        kid = self.encryption_key().kid
        started = time.perf_counter()
        solution, error = None, None
        try:
            solution = self.build_solution(challenge.challenge_id, kind, value)
            return kid, solution
        except Exception as exc:
            error = exc
            raise
        finally:
            if on_encrypted is not None:
                on_encrypted(
                    EncryptedSolution(
                        kid, solution, (time.perf_counter() - started) * 1000.0, error
                    )
                )

    def authorize_with_challenge(
        self, action: str, *, answers: Answers, **request: Any
    ) -> Authorized:
        """The full round trip: authorize, solve the challenge if one comes, authorize again.

        ``answers`` is a mapping kind → value (``"totp_secret"`` generates the TOTP) or a
        callable given the :class:`ChallengeRequired`. The solution is sent with
        :meth:`send_solution` (one resend after a key rotation); any refusal raises.
        """
        if "challenge_solution" in request:
            raise ConfigError("authorize_with_challenge builds challenge_solution itself")
        outcome = self.authorize(action, **request)
        if isinstance(outcome, Authorized):
            return outcome
        answer = choose_answer(outcome, answers, clock=self._clock)
        result = self.send_solution(action, outcome, answer.kind, answer.value, **request)
        if isinstance(result, ChallengeRequired):
            raise ChallengeRequiredError(
                "the service demanded a new challenge after the solution was sent",
                type=result.type,
                status=403,
                body=dict(result.raw),
            )
        return result

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP session if this client created it."""
        if self._owns_session:
            self.session.close()

    def __enter__(self) -> AuthzClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        provider = self._token_provider
        if provider is None:
            return f"AuthzClient(base_url={self.base_url!r}, dialect={self.dialect!r})"
        dialect = f", dialect={self.dialect!r}" if self.dialect == AUTHZEN else ""
        where = f"issuer={provider.issuer!r}" if provider.issuer else f"auth_url={self.auth_url!r}"
        return (
            f"AuthzClient(base_url={self.base_url!r}, {where}, "
            f"client_id={self.client_id!r}, client_auth={provider.client_auth!r}{dialect})"
        )


__all__ = ["AuthzClient", "EncryptedSolution"]
