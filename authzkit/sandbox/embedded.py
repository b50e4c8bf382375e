"""``Sandbox``, the embedded sandbox: the reference service as a real HTTP server on a
background thread of the caller's process.

This module assembles the service (keys, world, the app and its middlewares: faults,
request ids, recording) and gives tests and notebooks its controls; serving it on a daemon
thread, on a socket bound before it starts, is :mod:`authzkit.sandbox.server_thread`.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, Unpack

from authzkit.sandbox.faults import FaultOptions, Faults
from authzkit.sandbox.injector import FAULTED_ENDPOINTS, FaultInjector
from authzkit.sandbox.pause import HeldResponse
from authzkit.sandbox.received import Received, ReceivedLog, RecordingMiddleware
from authzkit.sandbox.server_thread import ServerThread, ServerTls, server_tls
from authzkit.sandbox.service_time import Served, service_time_document
from authzkit.sandbox.world import World
from authzkit.wire.clock import Clock, system_clock
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import AUTHZEN, DIALECTS, OIDC_TOKEN_PATH, SANDBOX_REALM_PATH, TOKEN_PATH


class Sandbox:
    """The whole service of the draft plus ``/sandbox/v1/*``, on ``base_url``.

    ``with Sandbox() as sb:`` is ready on entry and stopped on exit; ``start()`` and
    ``stop()`` do the same by hand. ``clock`` drives every expiry (tokens, challenges,
    TOTP, client assertions), so tests pass a :class:`authzkit.wire.clock.ManualClock` instead
    of sleeping.

    ``dialect="published"`` answers as the provider's published API does (docs/dialects.md; see
    :mod:`authzkit.sandbox.dialects`): an OpenID Connect issuer at ``sb.issuer`` replaces
    the draft's token endpoint, and the authorize bodies are the published ones. The
    default world's demo client gets an RSA key pair at start, for ``private_key_jwt``: its
    private key is ``sb.client_key_pem`` (a demo value, like ``sb.client_secret``).

    Fault injection (SPEC endpoints only): the keywords are the ten fields of
    :class:`~authzkit.sandbox.faults.Faults`, each defined there once with its check and
    meaning (``latency_ms=5`` or ``"50-200"``, ``error_rate=0.2, fault_seed=7``,
    ``pause_every=5, pause_ms=500`` …); the time-based ones count on ``clock``. With any
    fault on, the sandbox measures each authorize request's time from arrival to response
    (:meth:`service_time`, :meth:`served`).

    ``tls_cert`` and ``tls_key`` (PEM files, both or neither, checked here) serve HTTPS:
    ``base_url`` and every URL the sandbox publishes (issuer, discovery, keys, token
    endpoint) are then ``https://``; a client trusts the CA that signed the certificate
    (``AUTHZKIT_TLS_CA_FILE``).

    ``dialect="authzen"`` serves the OpenID AuthZEN Authorization API 1.0 instead
    (:mod:`authzkit.sandbox.authzen`): ``world`` is then an AuthZEN world (``"certification"``,
    the default, ``"todo"``, a JSON file or a mapping), there is no token endpoint, key or
    challenge (so no ``token_outage``/``rotate_keys_every``), and ``bearer_token``, when
    given, is required as ``Authorization: Bearer …`` on its API endpoints.

    ``record=True`` keeps what the service answered (``received()``, secrets masked), and
    ``reset(sessions=True, faults=True)`` forgets everything a test could leave behind;
    the pytest plugin (``authzkit.pytest_plugin``) relies on both.
    """

    def __init__(
        self,
        *,
        world: World | str | Path | Mapping[str, Any] | None = None,
        token_ttl: int = 900,
        key_size: int = 4096,
        challenge_ttl: float = 300,
        max_attempts: int = 3,
        clock: Clock | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        dialect: str = "draft",
        announce: bool = True,
        record: bool = False,
        tls_cert: str | Path | None = None,
        tls_key: str | Path | None = None,
        bearer_token: str | None = None,
        **faults: Unpack[FaultOptions],
    ) -> None:
        # announce=False: the world document does not say "an authzkit sandbox", so a client
        # reaching it by URL applies every real-environment rule (a rehearsal).
        self.announce = announce
        if dialect not in DIALECTS:
            raise ConfigError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
        if not isinstance(token_ttl, int) or isinstance(token_ttl, bool) or token_ttl < 1:
            raise ConfigError(
                f"token_ttl must be a whole number of seconds >= 1, got {token_ttl!r}"
            )
        if not challenge_ttl > 0:
            raise ConfigError(f"challenge_ttl must be positive, got {challenge_ttl!r}")
        if not isinstance(max_attempts, int) or max_attempts < 1:
            raise ConfigError(f"max_attempts must be >= 1, got {max_attempts!r}")
        if not 0 <= port <= 65535:
            raise ConfigError(f"port must be 0..65535, got {port!r}")
        self.tls: ServerTls | None = server_tls(tls_cert, tls_key)
        self.faults = Faults.of(**faults)
        self.dialect = dialect
        self._bearer_token = bearer_token
        if dialect == AUTHZEN:
            from authzkit.sandbox.authzen.embedded import authzen_settings

            self._world: Any = authzen_settings(world, self.faults, bearer_token)
        else:
            if bearer_token is not None:
                raise ConfigError("bearer_token applies to the authzen dialect only")
            self._world = World.coerce(world)
            self._resource_server = self._world.resource_server()
        self.token_ttl = token_ttl
        self.key_size = key_size
        self.challenge_ttl = challenge_ttl
        self.max_attempts = max_attempts
        self._clock: Clock = clock or system_clock
        self.host = host
        self.port = port
        self._service: Any = None
        self._injector: Any = None
        self._server: ServerThread | None = None
        self._received = ReceivedLog(enabled=record)

    # ------------------------------------------------------------------ life
    def start(self) -> Sandbox:
        """Generate keys, bind the socket and serve; returns once requests are answered."""
        if self._server is not None:
            return self
        server = ServerThread(self.host, self.port)
        self.port = server.port
        try:
            app, rotate_keys = (
                self._authzen_app() if self.dialect == AUTHZEN else self._authorize_app()
            )
        except BaseException:
            server.stop()
            raise
        if self.faults.active:
            app = self._injector = FaultInjector(
                app, self.faults, clock=self._clock, rotate_keys=rotate_keys, dialect=self.dialect
            )
        if self.dialect == "published":
            from authzkit.sandbox.dialects import RequestIds

            app = RequestIds(app)  # outside faults: injected 503s carry an x-request-id too
        if self.dialect == AUTHZEN:
            from authzkit.sandbox.authzen.request_id import EchoRequestId

            app = EchoRequestId(app)  # outside faults, likewise
        endpoints = FAULTED_ENDPOINTS[self.dialect]
        app = RecordingMiddleware(
            app,
            self._received,
            base_url=self.base_url,
            name_of=lambda path: endpoints.get(path, path),
        )
        try:
            server.serve(app, name=f"authzkit-sandbox:{self.port}", url=self.base_url, tls=self.tls)
        except BaseException:
            server.stop()
            raise
        self._server = server
        return self

    def _authzen_app(self) -> tuple[Any, Any]:
        """The AuthZEN service's app (no keys to rotate)."""
        from authzkit.sandbox.authzen.app import build_authzen_app
        from authzkit.sandbox.authzen.decisions import AuthzenService

        self._service = AuthzenService(self._world)
        app = build_authzen_app(
            self._service,
            base_url=self.base_url,
            bearer_token=self._bearer_token,
            announce=self.announce,
            reset=self._reset_over_http,
            received=self.received,
            service_time=self.service_time if self.faults.active else None,
            fault_counts=self.fault_counts if self.faults.active else None,
        )
        return app, None

    def _authorize_app(self) -> tuple[Any, Any]:
        """The authorize API's app (draft or published) and its key ring's rotation."""
        from authzkit.sandbox.decisions import Service
        from authzkit.sandbox.endpoints import build_app
        from authzkit.sandbox.keys import KeyRing

        # The clients' own key pairs are made while the key ring makes the service's.
        with ThreadPoolExecutor(max_workers=1) as pool:
            keyed_world = pool.submit(self._world.with_generated_keys)
            try:
                keys = KeyRing(size=self.key_size, spare=self.faults.rotate_keys_every is not None)
            except ValueError as exc:
                raise ConfigError(str(exc)) from exc
            self._world = keyed_world.result()
        self._resource_server = self._world.resource_server()
        self._service = Service(
            world=self._world,
            keys=keys,
            clock=self._clock,
            token_ttl=self.token_ttl,
            challenge_ttl=self.challenge_ttl,
            max_attempts=self.max_attempts,
        )
        app: Any = build_app(
            self._service,
            dialect=self.dialect,
            base_url=self.base_url,
            fault_counts=self.fault_counts if self.faults.active else None,
            service_time=self.service_time if self.faults.active else None,
            announce=self.announce,
            reset=self._reset_over_http,
            received=self.received,
        )
        return app, keys.rotate

    def stop(self) -> None:
        """Stop serving and wait for the thread (idempotent)."""
        server, self._server = self._server, None
        if server is None:
            return
        if self._injector is not None:
            self._injector.stop()  # a pause must not outlast the server
        server.stop()

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """True while the server thread is serving."""
        return self._server is not None and self._server.running

    # ------------------------------------------------------------- addresses
    @property
    def base_url(self) -> str:
        """``http://host:port`` of the authorization and discovery endpoints
        (``https://`` when serving TLS)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if host in ("0.0.0.0", "[::]"):
            host = "127.0.0.1" if host == "0.0.0.0" else "[::1]"
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{host}:{self.port}"

    @property
    def auth_url(self) -> str:
        """The draft token endpoint's host: the same server."""
        return self.base_url

    @property
    def issuer(self) -> str | None:
        """The OpenID Connect issuer URL of the published dialect
        (``{base_url}/auth/realms/authzkit``); None in the draft, which has no issuer."""
        return self.base_url + SANDBOX_REALM_PATH if self.dialect == "published" else None

    @property
    def token_url(self) -> str:
        """The full URL of this dialect's token endpoint (the OIDC realm's when published)."""
        issuer = self.issuer
        return issuer + OIDC_TOKEN_PATH if issuer is not None else self.auth_url + TOKEN_PATH

    def _demo_client(self) -> Any:
        if self.dialect == AUTHZEN:
            raise ConfigError("an AuthZEN sandbox has no OAuth client (no token endpoint)")
        return self._resource_server

    @property
    def client_id(self) -> str:
        """The demo resource_server client's id."""
        return str(self._demo_client().client_id)

    @property
    def client_secret(self) -> str | None:
        """The demo resource_server client's secret (never shown in ``repr``); None for a
        world whose resource_server client only has a key."""
        secret: str | None = self._demo_client().client_secret
        return secret

    @property
    def client_key_pem(self) -> str | None:
        """The demo resource_server client's RSA private key (PEM) for ``private_key_jwt``,
        made at start (a demo value; never shown in ``repr``); None when the world gives
        that client no private key."""
        client = self._demo_client()
        if client.generate_key and client.client_key_pem is None:
            raise ConfigError(
                "the demo client's key pair is made at start; use 'with Sandbox() as sb:'"
            )
        pem: str | None = client.client_key_pem
        return pem

    @property
    def world(self) -> World:
        """The world this sandbox serves (clients, subjects, resources, actions; on the
        authzen dialect its :class:`~authzkit.sandbox.authzen.world.AuthzenWorld`)."""
        found: World = self._world
        return found

    @property
    def clock(self) -> Clock:
        """The clock every expiry reads (tokens, challenges, TOTP)."""
        return self._clock

    @property
    def service(self) -> Any:
        """The running :class:`authzkit.sandbox.decisions.Service` (benchmarks, deep tests)."""
        return self._running_service()

    # --------------------------------------------------------------- sandbox
    def _running_service(self) -> Any:
        if self._service is None:
            raise ConfigError("the sandbox is not started; use 'with Sandbox() as sb:'")
        return self._service

    def session_token(self, subject: str, ttl: float | None = None) -> str:
        """A session token for ``subject`` (what a front-end would forward as subject.token)."""
        from authzkit.sandbox.decisions import Refusal

        token: str
        try:
            token, _ = self._running_service().mint_session(subject, ttl)
        except Refusal as refusal:
            raise ConfigError(refusal.detail or refusal.type) from None
        return token

    def stats(self) -> dict[str, Any]:
        """The counters, as ``GET /sandbox/v1/stats`` returns them (with ``faults``, the
        :meth:`fault_counts`, when faults are injected)."""
        counters: dict[str, Any] = self._running_service().counters.snapshot()
        if self.faults.active:
            counters["faults"] = self.fault_counts()
        return counters

    def rotate_keys(self) -> str:
        """A new encryption key; returns its kid (the old kid is refused from now on)."""
        kid: str = self._running_service().keys.rotate()
        return kid

    def fault_counts(self) -> dict[str, int]:
        """What fault injection did: ``requests:<endpoint>``, ``delayed:<endpoint>``,
        ``unavailable:<endpoint>``,
        ``token_outage``, ``key_rotations``, ``pauses`` (pauses that held a response) and
        ``held:<endpoint>`` (responses held by a pause); empty when no fault is configured."""
        self._running_service()
        return self._injector.counts.snapshot() if self._injector is not None else {}

    def held_responses(self) -> list[HeldResponse]:
        """The responses a pause held (``pause_every``/``pause_ms``), oldest first, with
        when each was ready, when its pause ended and when it went out; empty otherwise."""
        self._running_service()
        pause = self._injector.pause if self._injector is not None else None
        return pause.held_responses() if pause is not None else []

    def service_time(self) -> dict[str, Any]:
        """What ``GET /sandbox/v1/service-time`` answers: the shape asked
        (``service_time_us``, ``concurrency``) and the measured time from arrival to response
        of every authorize request since the last reset (count, min, mean, max in µs, the
        peak in service, how many waited in line, and the µs HdrHistogram, encoded);
        ``measured`` is False (and the count 0) when no fault is configured."""
        self._running_service()
        gate = self._injector.service if self._injector is not None else None
        return service_time_document(self.faults, gate.record if gate is not None else None)

    def served(self) -> list[Served]:
        """The authorize requests served since the last reset (the newest 10,000), in the
        order their responses went out: when each arrived, entered service and was answered
        (``time.monotonic_ns``); empty when no fault is configured."""
        self._running_service()
        return self._injector.service.record.served() if self._injector is not None else []

    def reset(
        self, *, sessions: bool = False, faults: bool = False, record: bool | None = None
    ) -> None:
        """Forget open challenges and used assertion ids, zero the counters and empty the
        record of :meth:`received`; keys and world stay. ``sessions=True`` also refuses
        every session token minted so far, ``faults=True`` starts the fault injection again
        as if the sandbox started now (token outage, pause schedule, seeded draws, fault
        counts); ``record`` turns the record of received exchanges on or off."""
        service = self._running_service()
        service.counters.clear()
        if self.dialect != AUTHZEN:
            service.challenges.clear()
            service.assertions.clear()
            if sessions:
                service.forget_sessions()
        if faults and self._injector is not None:
            self._injector.restart()
        if record is not None:
            self._received.enabled = record
        self._received.clear()

    def _reset_over_http(self, record: bool | None) -> None:
        """``POST /sandbox/v1/reset``: everything :meth:`reset` can forget."""
        self.reset(sessions=True, faults=True, record=record)

    @property
    def recording(self) -> bool:
        """True while the exchanges the service answers are recorded (``record=True``)."""
        return self._received.enabled

    def received(self) -> list[Received]:
        """The exchanges the service answered since the last reset, oldest first, secrets
        masked (``/sandbox/v1/*`` excluded); empty unless recording
        (``Sandbox(record=True)``, ``reset(record=True)``)."""
        return self._received.snapshot()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        who = (
            f"world={self._world!r}" if self.dialect == AUTHZEN else f"client_id={self.client_id!r}"
        )
        return f"Sandbox({state}, dialect={self.dialect!r}, base_url={self.base_url!r}, {who})"


__all__ = ["Sandbox"]
