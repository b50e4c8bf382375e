"""``connect()``: one call that gives a ready client, on the sandbox or a real environment.

No ``AUTHZKIT_BASE_URL``: the embedded sandbox; with it, the configured service (AuthZEN when
it says so); a connection setting alone is an error, never the sandbox. Either way the same
:class:`Connection`, so every tool runs the same code (docs/internals.md, "Connecting").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

from authzkit.client.answers import answers_from_credentials
from authzkit.wire.actions import action_setting
from authzkit.wire.config import Settings
from authzkit.wire.errors import ConfigError, TransportError
from authzkit.wire.redact import Secret
from authzkit.wire.spec import (
    AUTHZEN,
    DEFAULT_RESOURCE_TYPE,
    SANDBOX_IDENTITY,
    SANDBOX_WORLD_PATH,
)
from authzkit.wire.tls import TlsSettings

if TYPE_CHECKING:
    import requests

    from authzkit.client.facade import AuthzClient
    from authzkit.client.token import TokenProvider
    from authzkit.sandbox import Sandbox
    from authzkit.sandbox.admin import ExternalSandbox
    from authzkit.sandbox.world import World

# How output names the subject whose session token AUTHZKIT_SUBJECT_TOKEN is: on a real
# environment always, on a sandbox when that variable is set (an explicit setting wins).
TOKEN_HOLDER = "AUTHZKIT_SUBJECT_TOKEN"


class Connection:
    """A client and, on a sandbox, the sandbox it talks to; close it when done.

    :func:`connect` makes one. Its former name ``authzkit.Environment`` (deprecated) read like
    a deployment; this is a connection to one.
    """

    def __init__(
        self,
        client: AuthzClient,
        *,
        settings: Settings,
        sandbox: Sandbox | ExternalSandbox | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self.sandbox = sandbox

    @property
    def is_sandbox(self) -> bool:
        """True on a sandbox: the embedded one, or one started elsewhere that says it is an
        authzkit sandbox (its subjects are no people: their demo data and wrong answers are
        fair game)."""
        return self.sandbox is not None

    @property
    def base_url(self) -> str:
        return self.client.base_url

    @property
    def where(self) -> str:
        """Where flows run, for a line of output: which kind of sandbox, or the URL."""
        if self.sandbox is None:
            return self.base_url
        from authzkit.sandbox.admin import ExternalSandbox

        started = (
            "an authzkit sandbox started elsewhere"
            if isinstance(self.sandbox, ExternalSandbox)
            else "the embedded sandbox"
        )
        return f"{started} at {self.base_url}"

    def action(self, kind: str) -> str:
        """The ``plain`` or ``challenge`` action flows send here, by the one rule of
        :meth:`Settings.action <authzkit.wire.config.Settings.action>`: ``AUTHZKIT_PLAIN_ACTION``/
        ``AUTHZKIT_CHALLENGE_ACTION``, else (a sandbox whose world lists it, as the load
        test's users decide) its demo action; with neither, a :class:`ConfigError` naming
        the option and the variable."""
        listed = self.sandbox is not None and (
            action_setting(kind).sandbox_default in self.sandbox.world.actions
        )
        return self.settings.action(kind, sandbox=listed)

    def world(self) -> Mapping[str, Any]:
        """The sandbox's world JSON (clients, subjects, resources, actions)."""
        return self._sandbox_world().to_json()  # what GET /sandbox/v1/world serves

    def _sandbox_world(self) -> World:
        if self.sandbox is None:
            raise ConfigError(
                "a real environment has no sandbox world; "
                "set AUTHZKIT_SUBJECT_TOKEN, AUTHZKIT_RESOURCE_ID and "
                "AUTHZKIT_ANSWER_<KIND> instead"
            )
        return self.sandbox.world

    @property
    def subject(self) -> str:
        """Who flows act as when no subject is named, for a line of output: the holder of
        ``AUTHZKIT_SUBJECT_TOKEN`` (:data:`~authzkit.shared.connection.TOKEN_HOLDER`) when that is
        set, on a sandbox too, else the sandbox world's default subject
        (:meth:`World.default_subject <authzkit.sandbox.world.World.default_subject>`: the
        first that owns a resource)."""
        if self.sandbox is None or self.settings.subject_token is not None:
            return TOKEN_HOLDER
        return self.sandbox.world.default_subject()

    def _sandbox_subject(self, subject: str | None) -> str:
        """``subject`` checked against the sandbox's world, or its default subject."""
        world = self._sandbox_world()
        return world.subject(subject).id if subject is not None else world.default_subject()

    def subject_token(self, subject: str | None = None) -> str:
        """A session token: for ``subject`` when named (minted by the sandbox); else
        ``AUTHZKIT_SUBJECT_TOKEN`` when set (it wins over the world's, on a sandbox too),
        else one the sandbox mints for its world's default subject."""
        if self.sandbox is not None and (
            subject is not None or self.settings.subject_token is None
        ):
            return self.sandbox.session_token(self._sandbox_subject(subject))
        if self.settings.subject_token is None:
            raise ConfigError(
                "set AUTHZKIT_SUBJECT_TOKEN to a subject's session token "
                "(only the sandbox can mint one)"
            )
        return self.settings.subject_token.reveal()

    def resource(self, subject: str | None = None) -> tuple[str, str]:
        """``(resource_id, resource_type)`` of a resource the subject may act on: the first
        that ``subject`` owns in the sandbox's world when named; else
        ``AUTHZKIT_RESOURCE_ID`` (and ``AUTHZKIT_RESOURCE_TYPE``) when set, on a sandbox
        too, else the first of the world's default subject."""
        if self.sandbox is not None and (subject is not None or not self.settings.resource_id):
            owner = self._sandbox_subject(subject)
            owned = self._sandbox_world().owned_by(owner)
            if not owned:
                raise ConfigError(f"subject {owner!r} owns no resource in the sandbox world")
            return owned[0].id, owned[0].type
        if not self.settings.resource_id:
            raise ConfigError("set AUTHZKIT_RESOURCE_ID (and optionally AUTHZKIT_RESOURCE_TYPE)")
        return self.settings.resource_id, self.settings.resource_type or DEFAULT_RESOURCE_TYPE

    def foreign_resource(self, subject: str | None = None) -> tuple[str, str]:
        """A resource the subject does NOT own (to show ``srn:error:unauthorized``): on a
        sandbox one of another subject than ``subject`` (default: the world's default
        subject), else a random id nobody owns."""
        foreign = (
            self._sandbox_world().foreign_to(self._sandbox_subject(subject))
            if self.sandbox is not None
            else None
        )
        if foreign is not None:
            return foreign.id, foreign.type
        # Nobody owns a random resource id: the service must deny it.
        return "00000000-0000-4000-8000-000000000000", DEFAULT_RESOURCE_TYPE

    def answers(self, subject: str | None = None) -> dict[str, Secret]:
        """The subject's challenge answers, wrapped as secrets so they never print.

        Sandbox: the world's demo credentials of ``subject`` (default: the world's default
        subject), the TOTP as ``totp_secret`` (the client generates the current code from
        it); with no subject named, ``AUTHZKIT_ANSWER_<KIND>`` win over them kind by kind
        (they are the answers of whoever ``AUTHZKIT_SUBJECT_TOKEN`` names). Real
        environment: ``AUTHZKIT_ANSWER_<KIND>``.
        """
        if self.sandbox is None:
            return dict(self.settings.answers)
        world = self._sandbox_world()
        known = answers_from_credentials(world.subject(self._sandbox_subject(subject)).credentials)
        return known if subject is not None else {**known, **self.settings.answers}

    def actions(self) -> list[Mapping[str, Any]]:
        """The sandbox's actions with their required_types (empty in a real environment)."""
        return list(self.world().get("actions", [])) if self.sandbox is not None else []

    def close(self) -> None:
        """Close the client and stop the sandbox, if this connection started one."""
        try:
            self.client.close()
        finally:
            if self.sandbox is not None:
                self.sandbox.stop()

    def __enter__(self) -> Connection:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        where = "sandbox" if self.sandbox is not None else "real environment"
        return f"Connection({where}, base_url={self.base_url!r})"


def connect(
    settings: Settings | None = None,
    *,
    client_options: Mapping[str, Any] | None = None,
    tls_ca_file: str | None = None,
    tls_cert_file: str | None = None,
    tls_key_file: str | None = None,
    **sandbox_options: Any,
) -> Connection:
    """A ready :class:`Connection`: the configured service, or an embedded sandbox.

    With no connection setting it starts the embedded sandbox; with ``AUTHZKIT_BASE_URL``
    alone it uses the authzkit sandbox there (one GET asks), else the real environment the
    settings describe. Close it (or use it as a context manager) when done.

    Args:
        settings: where the service is and who the client is (default: read from
            ``AUTHZKIT_*`` and ``.env`` by :meth:`~authzkit.wire.config.Settings.from_env`).
            A real environment's token endpoint comes from them (``AUTHZKIT_ISSUER``,
            ``AUTHZKIT_TOKEN_URL``, ``AUTHZKIT_CLIENT_AUTH``, ``AUTHZKIT_CLIENT_KEY_FILE``);
            a sandbox speaking the published dialect is reached through its OpenID Connect
            issuer with ``private_key_jwt`` and its demo client key.
        client_options: keyword arguments of :class:`~authzkit.client.facade.AuthzClient`
            (``recorder=``, ``timeout=``, ``clock=``, ...).
        tls_ca_file, tls_cert_file, tls_key_file: in place of ``AUTHZKIT_TLS_CA_FILE``,
            ``AUTHZKIT_TLS_CERT_FILE`` and ``AUTHZKIT_TLS_KEY_FILE``
            (:mod:`authzkit.wire.tls`), for every call, the sandbox's included.
        sandbox_options: keyword arguments of :class:`authzkit.sandbox.Sandbox` for an
            embedded sandbox (``key_size=2048``, ``token_ttl=4``, ``dialect="published"``,
            ...); ignored elsewhere.
    """
    from authzkit.client.facade import AuthzClient

    settings = settings if settings is not None else Settings.from_env()
    settings = _with_tls(settings, tls_ca_file, tls_cert_file, tls_key_file)
    options = dict(client_options or {})
    options.setdefault("timeout", settings.timeout)
    if not any(name.startswith("tls") for name in options):
        options["tls"] = settings.tls
    if not settings.uses_sandbox:
        external = external_sandbox(settings, credentials_needed=False)
        if external is not None:  # the user's credentials when given, else its demo client
            return _on_sandbox(
                external, settings, options, own_credentials=settings.client_id is not None
            )
        if speaks_authzen(settings):  # a PDP needs no credentials
            options["dialect"] = AUTHZEN
        elif settings.client_id is None:
            raise ConfigError(_no_credentials(settings.require_base_url()))
        return Connection(AuthzClient.from_env(settings, **options), settings=settings)

    from authzkit.sandbox import Sandbox

    sandbox = Sandbox(**sandbox_options)
    sandbox.start()
    return _on_sandbox(sandbox, settings, options)


def _with_tls(
    settings: Settings, ca_file: str | None, cert_file: str | None, key_file: str | None
) -> Settings:
    """``settings`` with :func:`connect`'s TLS arguments in place of the variables'."""
    if not (ca_file or cert_file or key_file):
        return settings
    tls = settings.tls
    return replace(
        settings,
        tls=TlsSettings.of(
            ca_file=ca_file or tls.ca_file,
            cert_file=cert_file or (None if key_file else tls.cert_file),
            key_file=key_file or (None if cert_file else tls.key_file),
            insecure=tls.insecure,
            ca_setting="tls_ca_file" if ca_file else tls.ca_setting,
            names=("tls_cert_file", "tls_key_file"),
        ),
    )


class TokenEndpointClient:
    """The token half of a client, for a token endpoint configured without the
    authorization host (``AUTHZKIT_ISSUER``, ``AUTHZKIT_TOKEN_URL`` or ``AUTHZKIT_AUTH_URL``
    alone): ``authzkit token`` checks the credentials against a provider with it."""

    def __init__(self, token_provider: TokenProvider, session: requests.Session) -> None:
        self.token_provider = token_provider
        self._session = session

    def access_token(self) -> str:
        """A token from the configured endpoint (cached like the full client's)."""
        return self.token_provider.token()

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> TokenEndpointClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TokenEndpointClient({self.token_provider!r})"


def connect_token_endpoint(settings: Settings) -> TokenEndpointClient:
    """A :class:`TokenEndpointClient` for the configured token endpoint; a
    :class:`ConfigError` when none is configured (then :func:`connect` is the way)."""
    from authzkit.client.token import TokenProvider
    from authzkit.client.transport import transport_for

    if not settings.has_token_endpoint:
        raise ConfigError(
            "no token endpoint is configured: set AUTHZKIT_ISSUER, "
            "AUTHZKIT_TOKEN_URL or AUTHZKIT_BASE_URL"
        )
    if settings.client_id is None:
        raise ConfigError("AUTHZKIT_CLIENT_ID is not set (the client the token is for)")
    session = settings.tls.session()
    try:
        provider = TokenProvider(
            auth_url=settings.auth_url,
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            transport=transport_for(session, timeout=settings.timeout, tls=settings.tls),
            **settings.token_options(),
        )
    except BaseException:
        session.close()
        raise
    return TokenEndpointClient(provider, session)


def _no_credentials(base_url: str) -> str:
    return (
        f"AUTHZKIT_BASE_URL is set but AUTHZKIT_CLIENT_ID and AUTHZKIT_CLIENT_SECRET are "
        f"not, and {base_url} is no authzkit sandbox (its {SANDBOX_WORLD_PATH} does not say "
        f"so) nor an AuthZEN PDP (set AUTHZKIT_DIALECT=authzen if it is one)"
    )


def external_sandbox(
    settings: Settings, *, credentials_needed: bool = True
) -> ExternalSandbox | None:
    """The authzkit sandbox at ``AUTHZKIT_BASE_URL``, when the service there says it is one
    (one GET of its world); ``None`` for any other service. With ``AUTHZKIT_BASE_URL``
    alone and another service there, a :class:`ConfigError` names the missing credentials
    (unless not ``credentials_needed``: an AuthZEN PDP needs none); no answer at all is
    :func:`~authzkit.wire.identity.identify`'s :class:`TransportError`."""
    from authzkit.wire.identity import identify

    base_url = settings.require_base_url()
    # No answer is one answer, whatever else is set: identify's TransportError names the URL.
    document = identify(base_url, timeout=settings.timeout, tls=settings.tls)
    if document is not None and _identity(document).get("dialect") == AUTHZEN:
        return None  # an AuthZEN sandbox is reached as the PDP it is (speaks_authzen)
    if document is not None:
        from authzkit.sandbox.admin import ExternalSandbox

        return ExternalSandbox(base_url, document, timeout=settings.timeout, tls=settings.tls)
    if settings.client_id is None and credentials_needed:
        raise ConfigError(_no_credentials(base_url))
    return None


def _identity(document: Mapping[str, Any]) -> Mapping[str, Any]:
    found = document.get(SANDBOX_IDENTITY)
    return found if isinstance(found, Mapping) else {}


def speaks_authzen(settings: Settings) -> bool:
    """Whether the service at ``AUTHZKIT_BASE_URL`` (no sandbox) is an AuthZEN PDP:
    ``AUTHZKIT_DIALECT`` when set; else, with no client credentials (``AUTHZKIT_BASE_URL``
    alone), whether it publishes AuthZEN metadata (one GET of its well-known URL; the
    document itself is checked on the client's first call). Credentials without
    ``AUTHZKIT_DIALECT`` mean the service's authorize API, as before."""
    if settings.dialect is not None:
        return settings.dialect == AUTHZEN
    if settings.client_id is not None:
        return False
    from authzkit.client.authzen.exchange import Exchange
    from authzkit.client.authzen.metadata import publishes_metadata
    from authzkit.client.transport import transport_for

    with settings.tls.session() as session:
        transport = transport_for(session, timeout=settings.timeout, tls=settings.tls)
        try:
            return publishes_metadata(Exchange(transport), settings.require_base_url())
        except TransportError:  # unreachable (TLS, refused): the command's own first call
            return False  # says so, naming the URL, as it does for any service


def command_speaks_authzen(given: str | None, settings: Settings) -> bool:
    """Whether a command speaks AuthZEN: its ``--dialect`` when given (None when not),
    else ``AUTHZKIT_DIALECT``, else, at a URL alone, whether the service publishes AuthZEN
    metadata (:func:`speaks_authzen`: one GET). What every command decides the same way."""
    if given is not None or settings.uses_sandbox:
        return (given or settings.dialect) == AUTHZEN
    return speaks_authzen(settings)


def _on_sandbox(
    sandbox: Sandbox | ExternalSandbox,
    settings: Settings,
    options: dict[str, Any],
    *,
    own_credentials: bool = False,
) -> Connection:
    """A :class:`Connection` on ``sandbox``: the settings' credentials when
    ``own_credentials``, else the sandbox's demo client (through its issuer on the published
    dialect). The sandbox is stopped again when no client can be made."""
    from authzkit.client.facade import AuthzClient

    dialect = getattr(sandbox, "dialect", None)
    if dialect == AUTHZEN:  # a PDP: no credentials unless the user gives theirs
        options = {**options, "dialect": AUTHZEN}
    try:
        client = (
            AuthzClient.from_env(settings, **options)
            if own_credentials
            else AuthzClient(base_url=sandbox.base_url, **options)
            if dialect == AUTHZEN
            else AuthzClient(
                base_url=sandbox.base_url,
                auth_url=sandbox.auth_url,
                client_id=sandbox.client_id,
                client_secret=sandbox.client_secret,
                **{**sandbox_token_options(sandbox), **options},
            )
        )
    except BaseException:
        sandbox.stop()
        raise
    return Connection(client, settings=settings, sandbox=sandbox)


def sandbox_token_options(sandbox: Any) -> dict[str, Any]:
    """How a client gets tokens from ``sandbox``: nothing to add for the draft dialect;
    for the published one, its OpenID Connect issuer, ``private_key_jwt`` and the demo
    client's private key (a sandbox exposes it like the demo secret)."""
    if getattr(sandbox, "dialect", "draft") != "published" or not sandbox.issuer:
        return {}
    if not sandbox.client_key_pem:
        return {"issuer": sandbox.issuer, "client_auth": "client_secret_post"}
    return {
        "issuer": sandbox.issuer,
        "client_auth": "private_key_jwt",
        "client_key": sandbox.client_key_pem,
    }


__all__ = [
    "TOKEN_HOLDER",
    "Connection",
    "TokenEndpointClient",
    "command_speaks_authzen",
    "connect",
    "connect_token_endpoint",
    "sandbox_token_options",
    "speaks_authzen",
]


def __getattr__(name: str) -> Any:
    """``DEFAULT_SUBJECT``, deprecated: the subject comes from the world
    (:attr:`Connection.subject`, :meth:`World.default_subject
    <authzkit.sandbox.world.World.default_subject>`), not from a literal; kept importable
    (the packaged world's ``alice``) so code written against earlier versions still runs."""
    if name == "DEFAULT_SUBJECT":
        from authzkit.wire.deprecation import deprecated

        deprecated(
            f"{__name__}.{name}",
            "Connection.subject, or World.default_subject() (the first subject that owns a "
            "resource)",
        )
        globals()[name] = "alice"
        return "alice"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
