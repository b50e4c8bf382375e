"""The sandboxes of a test session: the default one (``authz_sandbox``), one per distinct
``@pytest.mark.authz`` configuration, or one started elsewhere (``--authz-url``).

:class:`AuthzSandbox` gives them one face, in process or over ``/sandbox/v1/*``, in any
dialect (docs/internals.md, "The session's sandboxes").
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.testing.settings import sandbox_keywords, settings_key
from authzkit.wire.errors import ConfigError, TlsError, TransportError
from authzkit.wire.spec import AUTHZEN, SANDBOX_IDENTITY

if TYPE_CHECKING:
    from authzkit.client.facade import AuthzClient
    from authzkit.sandbox import Sandbox
    from authzkit.sandbox.admin import ExternalSandbox
    from authzkit.sandbox.authzen.world import AuthzenWorld
    from authzkit.sandbox.received import Received
    from authzkit.sandbox.world import World
    from authzkit.testing.authzen import ExternalPdpSandbox

IDENTIFY_TIMEOUT = 5.0
SESSION_TTL_S = 24 * 3600
"""How long a test's session token lives unless it asks otherwise: longer than any test."""


class AuthzSandbox:
    """A running sandbox for tests: addresses, demo credentials, session tokens, the world,
    its counters, a full :meth:`reset`, and what it :meth:`received` since the last one.
    ``tls_ca`` is the CA bundle its clients trust when it serves HTTPS."""

    def __init__(
        self,
        backend: Sandbox | ExternalSandbox | ExternalPdpSandbox,
        *,
        started_here: bool,
        tls_ca: str | Path | None = None,
    ) -> None:
        self._backend = backend
        self.started_here = started_here
        self.tls_ca = str(tls_ca) if tls_ca is not None else None
        self._key_dir: tempfile.TemporaryDirectory[str] | None = None

    # -- addresses and credentials --------------------------------------------------------
    @property
    def base_url(self) -> str:
        return self._backend.base_url

    @property
    def auth_url(self) -> str:
        """The draft token endpoint's host (the same server)."""
        return self._backend.base_url

    @property
    def issuer(self) -> str | None:
        """The OpenID Connect issuer of the published dialect; None in the draft."""
        return self._backend.issuer

    @property
    def dialect(self) -> str:
        return self._backend.dialect

    @property
    def client_id(self) -> str:
        """The demo client's id (not on AuthZEN: a PDP has no OAuth client)."""
        return self._oauth("OAuth client").client_id

    @property
    def client_secret(self) -> str | None:
        """The demo client's secret (a public demo value)."""
        return self._oauth("OAuth client").client_secret

    @property
    def client_key_pem(self) -> str | None:
        """The demo client's private key for ``private_key_jwt`` (a demo value)."""
        return self._oauth("OAuth client").client_key_pem

    @property
    def world(self) -> World | AuthzenWorld:
        """The world it serves (on AuthZEN an
        :class:`~authzkit.sandbox.authzen.world.AuthzenWorld`)."""
        return self._backend.world

    @property
    def authzen(self) -> bool:
        """True when it is an AuthZEN PDP."""
        return self.dialect == AUTHZEN

    def _oauth(self, what: str) -> Sandbox | ExternalSandbox:
        """The backend, when it has OAuth clients and sessions (not an AuthZEN PDP)."""
        from authzkit.testing.authzen import ExternalPdpSandbox

        backend = self._backend
        if self.authzen or isinstance(backend, ExternalPdpSandbox):
            raise ConfigError(
                f"an AuthZEN sandbox has no {what}: a PEP names the subject in each request "
                "(authz.subject(id), authz.resource(id))"
            )
        return backend

    def session_token(self, subject: str | None = None, ttl: float | None = None) -> str:
        """A fresh session token for ``subject`` (refused after the next reset), living
        ``ttl`` seconds, else :data:`SESSION_TTL_S` (the sandbox's ``token_ttl`` is the access
        token's lifetime, not the subject's session); by default the world's default subject
        (:meth:`~authzkit.sandbox.world.World.default_subject`). Not on AuthZEN."""
        backend = self._oauth("session tokens")
        name = subject if subject is not None else backend.world.default_subject()
        backend.world.subject(name)
        return backend.session_token(name, SESSION_TTL_S if ttl is None else ttl)

    # -- state -----------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """The ``/sandbox/v1/stats`` counters, zeroed by a reset."""
        return self._backend.stats()

    def reset(self) -> None:
        """Forget sessions, challenges, used assertion ids, counters and the record, and
        start the faults' schedule again (keys and world stay)."""
        from authzkit.sandbox import Sandbox

        if isinstance(self._backend, Sandbox):
            self._backend.reset(sessions=True, faults=True, record=True)
        else:
            self._backend.reset(record=True)

    def received(self) -> list[Received]:
        """What the sandbox answered since the last reset, oldest first, secrets masked."""
        return self._backend.received()

    # -- clients -----------------------------------------------------------------------------
    def token_options(self) -> dict[str, Any]:
        """How a client gets tokens here (the published dialect: its issuer and key)."""
        from authzkit.shared.connection import sandbox_token_options

        return sandbox_token_options(self._backend)

    def client(self, **options: Any) -> AuthzClient:
        """A new :class:`~authzkit.AuthzClient` with the demo client's credentials (trusting
        ``tls_ca`` unless ``options`` say otherwise); on AuthZEN a PEP's client, with no
        credentials (``dialect="authzen"``)."""
        from authzkit.client.facade import AuthzClient

        if self.tls_ca is not None and not any(name.startswith("tls") for name in options):
            options["tls_ca_file"] = self.tls_ca
        if self.authzen:
            return AuthzClient(base_url=self.base_url, **{"dialect": AUTHZEN, **options})
        return AuthzClient(
            base_url=self.base_url,
            auth_url=self.auth_url,
            client_id=self.client_id,
            client_secret=self.client_secret,
            **{**self.token_options(), **options},
        )

    def env(self) -> dict[str, str]:
        """``AUTHZKIT_*`` settings that point code reading the environment here
        (:func:`~authzkit.wire.children.child_variables`, as a sandbox process's); on
        AuthZEN the URL, ``AUTHZKIT_DIALECT=authzen`` and the CA bundle only."""
        from authzkit.wire.children import child_variables

        if self.authzen:
            found = {"AUTHZKIT_BASE_URL": self.base_url, "AUTHZKIT_DIALECT": AUTHZEN}
            return found | ({"AUTHZKIT_TLS_CA_FILE": self.tls_ca} if self.tls_ca else {})
        options = self.token_options()
        client_auth = options.get("client_auth")
        return child_variables(
            base_url=self.base_url,
            auth_url=self.auth_url,
            client_id=self.client_id,
            client_secret=self.client_secret,
            tls_ca=self.tls_ca,
            issuer=options.get("issuer"),
            client_auth=client_auth,
            client_key_file=(
                self._key_file(options["client_key"]) if client_auth == "private_key_jwt" else None
            ),
        )

    def _key_file(self, pem: str) -> Path:
        from authzkit.sandbox.files import write_private_file

        if self._key_dir is None:
            self._key_dir = tempfile.TemporaryDirectory(prefix="authz-key-")
        path = Path(self._key_dir.name) / "client_key.pem"
        if not path.exists():
            write_private_file(path, pem)
        return path

    def stop(self) -> None:
        """Stop it if it was started here (else close the connection)."""
        try:
            self._backend.stop()
        finally:
            if self._key_dir is not None:
                self._key_dir.cleanup()
                self._key_dir = None

    def __repr__(self) -> str:
        where = "started here" if self.started_here else "started elsewhere"
        return f"AuthzSandbox({self.base_url!r}, dialect={self.dialect!r}, {where})"


def start_sandbox(settings: Mapping[str, Any]) -> AuthzSandbox:
    """A sandbox with ``settings`` on a free loopback port, recording what it receives
    (over HTTPS with ``tls_cert``/``tls_key``; its clients trust ``tls_ca``)."""
    from authzkit.sandbox import Sandbox

    sandbox = Sandbox(**sandbox_keywords(settings), record=True)
    try:
        sandbox.start()
    except ImportError as exc:
        from authzkit.shared.extras import install_line

        raise ConfigError(
            f"starting a sandbox needs the sandbox extra: {install_line('sandbox')} ({exc})"
        ) from None
    return AuthzSandbox(sandbox, started_here=True, tls_ca=settings.get("tls_ca"))


def reach_sandbox(url: str, tls_ca: str | Path | None = None) -> AuthzSandbox:
    """The authzkit sandbox at ``url`` (trusting ``tls_ca`` over HTTPS); a
    :class:`ConfigError` naming the URL and why not."""
    from authzkit.wire.identity import identify
    from authzkit.wire.tls import TlsSettings
    from authzkit.wire.variables import check_url

    try:
        tls = TlsSettings.of(ca_file=tls_ca, ca_setting="authz_tls_ca") if tls_ca else None
        base_url = check_url("the URL", url)
        document = identify(base_url, timeout=IDENTIFY_TIMEOUT, tls=tls)
    except TlsError as exc:  # its remedy names the variable; the plugin reads an ini key
        raise ConfigError(
            f"--authz-url {url}: {exc} (in pytest: the ini key authz_tls_ca)"
        ) from None
    except (ConfigError, TransportError) as exc:
        raise ConfigError(f"--authz-url {url}: {exc}") from None
    if document is None:
        raise ConfigError(
            f"--authz-url {url}: not an authzkit sandbox (its /sandbox/v1/world does not say so)"
        )
    sandbox = AuthzSandbox(_external(base_url, document, tls), started_here=False, tls_ca=tls_ca)
    try:
        sandbox.reset()
    except Exception as exc:
        raise ConfigError(
            f"--authz-url {url}: the sandbox cannot be reset ({exc}); is it an older authzkit?"
        ) from None
    return sandbox


def _external(
    base_url: str, document: dict[str, Any], tls: Any
) -> ExternalSandbox | ExternalPdpSandbox:
    """The backend of the sandbox that ``document`` (its world, identified) describes."""
    from authzkit.sandbox.admin import ExternalSandbox, SandboxAdmin

    identity = document.get(SANDBOX_IDENTITY)
    if not (isinstance(identity, dict) and identity.get("dialect") == AUTHZEN):
        return ExternalSandbox(base_url, document, timeout=IDENTIFY_TIMEOUT, tls=tls)
    from authzkit.sandbox.authzen.world import AuthzenWorld
    from authzkit.testing.authzen import ExternalPdpSandbox

    world = {k: v for k, v in document.items() if k != SANDBOX_IDENTITY}
    admin = SandboxAdmin(base_url, timeout=IDENTIFY_TIMEOUT, tls=tls)
    return ExternalPdpSandbox(admin, AuthzenWorld.from_json(world, source=base_url))


class SandboxPool:
    """The session's sandboxes: the default one, and one per distinct configuration a
    marker asks for (kept for the session: tests with the same marker share it)."""

    def __init__(self, defaults: Mapping[str, Any], url: str | None) -> None:
        self.defaults = dict(defaults)
        self.url = url
        self._started: dict[tuple[tuple[str, str], ...], AuthzSandbox] = {}
        self._external: AuthzSandbox | None = None

    def default(self) -> AuthzSandbox:
        """``--authz-url``'s sandbox, else one with the session's settings."""
        if self.url:
            if self._external is None:
                self._external = reach_sandbox(self.url, self.defaults.get("tls_ca"))
            return self._external
        return self.configured(self.defaults)

    def configured(self, settings: Mapping[str, Any]) -> AuthzSandbox:
        """The sandbox with exactly these settings (the default one when they are the
        session's), started on first use."""
        if self.url and settings_key(settings) == settings_key(self.defaults):
            return self.default()
        key = settings_key(settings)
        found = self._started.get(key)
        if found is None:
            found = self._started[key] = start_sandbox(settings)
        return found

    def stop(self) -> None:
        started, self._started = list(self._started.values()), {}
        external, self._external = self._external, None
        for sandbox in [*started, *([external] if external else [])]:
            sandbox.stop()


__all__ = ["SESSION_TTL_S", "AuthzSandbox", "SandboxPool", "reach_sandbox", "start_sandbox"]
