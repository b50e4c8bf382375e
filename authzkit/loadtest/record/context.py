"""What every user of one Locust process shares, built once and free of locust.

:class:`ProcessState`: the settings, one token provider and one key cache, the subjects and
the ``--wait-time``. Free of locust so it is tested in-process and the preflight builds the
same state (docs/internals.md, "What a process shares").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests

from authzkit.client.credentials import default_client_auth
from authzkit.client.discovery import KeyCache
from authzkit.client.facade import AuthzClient
from authzkit.client.token import TokenProvider
from authzkit.loadtest.record.subjects import LoadSubject, subjects_from_csv, subjects_from_world
from authzkit.wire.actions import action_setting
from authzkit.wire.config import Settings
from authzkit.wire.errors import AuthzError, ConfigError, TlsError
from authzkit.wire.jwe import ClientKey
from authzkit.wire.spec import (
    AUTHZEN,
    OIDC_CONFIGURATION_PATH,
    SANDBOX_REALM_PATH,
)
from authzkit.wire.tls import TlsSettings
from authzkit.wire.variables import parse_range

if TYPE_CHECKING:
    from authzkit.sandbox.world import World
WORLD_KEYS = ("clients", "subjects", "resources", "actions")
# Subject session tokens minted by the sandbox must outlive any run.
SANDBOX_SESSION_TTL = 24 * 3600


def parse_wait_time(text: str | float | None) -> tuple[float, float]:
    """``"0.5-2"`` → ``(0.5, 2.0)``; ``"1"`` → ``(1.0, 1.0)``; empty → zero (throughput mode)."""
    return parse_range("--wait-time", text, unit="seconds")


@dataclass(frozen=True)
class ProcessState:
    """What every user of one process shares."""

    base_url: str
    auth_url: str
    timeout: float
    token_provider: TokenProvider
    keys: KeyCache
    subjects: tuple[LoadSubject, ...]
    action: str
    challenge_action: str
    wait: tuple[float, float]
    sandbox: bool
    tls: TlsSettings = field(default_factory=TlsSettings)  # every user's trust and client cert


def _sandbox_world(
    base_url: str, timeout: float, tls: TlsSettings
) -> tuple[Any, World, Mapping[str, Any]]:
    """The service's sandbox admin, world and raw world JSON, or a ConfigError if it is no
    sandbox (a TLS failure stays a :class:`~authzkit.wire.errors.TlsError`: the service answered,
    and the line says what TLS said)."""
    from authzkit.sandbox import SandboxAdmin
    from authzkit.sandbox.world import World

    admin = SandboxAdmin(base_url, timeout=timeout, tls=tls)
    try:
        raw = admin.world()
        # The world proper; what a sandbox says beside it (its issuer) is read from ``raw``.
        proper = (
            {k: v for k, v in raw.items() if k in WORLD_KEYS} if isinstance(raw, Mapping) else raw
        )
        world = World.from_json(proper, source=f"{base_url}/sandbox/v1/world")
    except TlsError:
        raise
    except (AuthzError, ValueError) as exc:
        raise ConfigError(
            f"no --subjects FILE (or no client credentials) given and {base_url} "
            f"is not an authzkit sandbox (GET /sandbox/v1/world: {exc}); pass "
            f"--subjects with subject tokens and answers, and the client "
            f"credentials"
        ) from exc
    return admin, world, raw


def _option(options: Any, name: str) -> str:
    """An option's value, ``""`` when unset or absent (namespaces of older locustfiles)."""
    return str(getattr(options, name, "") or "")


@dataclass(frozen=True)
class _Credentials:
    """Who the process's users are at the token endpoint, and how they prove it."""

    client_id: str | None
    secret: str | None = field(default=None, repr=False)
    token: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def complete(self) -> bool:
        """True when nothing has to come from a sandbox world."""
        if not self.client_id:
            return False
        method = default_client_auth(
            self.token.get("client_auth", "draft"),
            issuer=self.token.get("issuer"),
            token_url=self.token.get("token_url"),
            client_key=self.token.get("client_key"),
        )
        return bool(self.token.get("client_key") if method == "private_key_jwt" else self.secret)


def _credentials(options: Any, settings: Settings) -> _Credentials:
    """Credentials and token endpoint from the options, falling back to ``AUTHZKIT_*``."""
    key_file = _option(options, "client_key_file")
    setting = "--client-key-file"
    if not key_file and settings.client_key_file:
        key_file, setting = settings.client_key_file, "AUTHZKIT_CLIENT_KEY_FILE"
    token: dict[str, Any] = {
        "issuer": _option(options, "issuer") or settings.issuer,
        "token_url": _option(options, "token_url") or settings.token_url,
        "client_auth": _option(options, "client_auth") or settings.client_auth,
        "scope": settings.token_scope,
        "resource": settings.token_resource,
    }
    if key_file:
        token["client_key"] = ClientKey.load(
            Path(key_file),
            setting=setting,
            kid=settings.client_key_id,
            kid_setting="AUTHZKIT_CLIENT_KEY_ID",
        )
    secret = _option(options, "client_secret") or (
        settings.client_secret.reveal() if settings.client_secret else None
    )
    return _Credentials(_option(options, "client_id") or settings.client_id, secret, token)


def _sandbox_issuer(admin: Any, raw: Mapping[str, Any]) -> str | None:
    """The sandbox's OpenID Connect issuer: named in its world JSON, or (a sandbox that does
    not name it) its realm, when that serves a discovery document; ``None`` for a sandbox
    speaking the draft."""
    issuer = raw.get("issuer")
    if isinstance(issuer, str) and issuer:
        return issuer
    realm = admin.base_url + SANDBOX_REALM_PATH
    try:
        found = admin.session.get(realm + OIDC_CONFIGURATION_PATH, timeout=admin.timeout)
    except requests.RequestException:
        return None
    return realm if found.status_code == 200 else None


def _demo_credentials(
    admin: Any, world: World, raw: Mapping[str, Any], given: _Credentials
) -> _Credentials:
    """The sandbox's demo client; through its issuer with ``private_key_jwt`` when the
    sandbox has one and exposes the client's key (the published dialect) and nothing else
    was configured for the token endpoint."""
    demo = world.resource_server()
    entry = next(
        (
            c
            for c in raw.get("clients", [])
            if isinstance(c, Mapping) and c.get("client_id") == demo.client_id
        ),
        {},
    )
    pem = entry.get("client_key_pem")
    token = dict(given.token)
    chosen = any(
        token.get(k) not in (None, "", "draft") for k in ("issuer", "token_url", "client_auth")
    )
    if isinstance(pem, str) and pem and not chosen:
        issuer = _sandbox_issuer(admin, raw)
        if issuer is not None:
            token.update(issuer=issuer, client_auth="private_key_jwt", client_key=pem)
    return _Credentials(demo.client_id, getattr(demo, "client_secret", None), token)


def needed_actions(user_classes: Sequence[str]) -> frozenset[str]:
    """The action kinds (``plain``, ``challenge``) the named user classes send: a class
    named ``…Challenge…`` the challenge action, any other the plain one. No class named
    means Locust runs every class of the locustfile: both."""
    if not user_classes:
        return frozenset(("plain", "challenge"))
    return frozenset(
        "challenge" if "challenge" in name.lower() else "plain" for name in user_classes
    )


def _actions(options: Any, settings: Settings, world: World | None) -> tuple[str, str]:
    """``--action`` and ``--challenge-action`` by :meth:`Settings.action`'s one rule: the
    option, else ``AUTHZKIT_*_ACTION``, else the sandbox's demo action, and that only when
    ``world`` (the service's sandbox world, if it has one) knows it. An action the run's user
    classes send must be chosen (else a :class:`ConfigError` naming option and variable);
    the other one stays ``""`` when nothing chooses it."""
    needed = needed_actions(list(getattr(options, "user_classes", None) or ()))
    known = set(world.actions) if world is not None else set()
    chosen = []
    for kind, name in (("plain", "action"), ("challenge", "challenge_action")):
        option = _option(options, name)
        sandbox = action_setting(kind).sandbox_default in known
        chosen.append(
            settings.action(kind, option, sandbox=sandbox)
            if kind in needed
            else settings.chosen_action(kind, option, sandbox=sandbox) or ""
        )
    return chosen[0], chosen[1]


def _unnamed(options: Any, settings: Settings) -> bool:
    """True when an action the user classes send is named by no option and no variable."""
    names = {"plain": "action", "challenge": "challenge_action"}
    return any(
        settings.chosen_action(kind, _option(options, names[kind]), sandbox=False) is None
        for kind in needed_actions(list(getattr(options, "user_classes", None) or ()))
    )


def _auth_url(options: Any, settings: Settings, base_url: str) -> str:
    """The token host: ``--auth-url``, else ``AUTHZKIT_AUTH_URL``, else ``base_url``."""
    explicit_auth = settings.auth_url if settings.auth_url != settings.base_url else None
    return (_option(options, "auth_url") or explicit_auth or base_url).rstrip("/")


def _template(
    base_url: str, auth_url: str, credentials: _Credentials, settings: Settings, **more: Any
) -> AuthzClient:
    """The client whose token provider (and key cache) every user of the process shares."""
    return AuthzClient(
        base_url=base_url,
        auth_url=auth_url,
        client_id=credentials.client_id,
        client_secret=credentials.secret,
        timeout=settings.timeout,
        tls=settings.tls,
        **credentials.token,
        **more,
    )


def configured_token_provider(
    options: Any, settings: Settings, base_url: str
) -> TokenProvider | None:
    """The token provider ``--client-*``/``AUTHZKIT_CLIENT_*`` and the token endpoint
    settings configure, built as the draft's users get theirs; None when no client is
    configured (an AuthZEN PDP is then called without a token)."""
    credentials = _credentials(options, settings)
    if not credentials.client_id:
        return None
    auth_url = _auth_url(options, settings, base_url)
    return _template(base_url, auth_url, credentials, settings, dialect=AUTHZEN).token_provider


def build_process_state(
    options: Any, host: str | None, settings: Settings | None = None
) -> ProcessState:
    """Everything one Locust process shares, from its options, ``host`` and ``AUTHZKIT_*``
    (or ``settings``: the load-test command's preflight builds the very same state).

    Subjects and credentials come from ``--subjects``/``--client-*``/``AUTHZKIT_CLIENT_*``
    when given; whatever is missing comes from the service's sandbox world, and a service
    that is no sandbox is a :class:`ConfigError` that says what to pass instead. So are
    the actions (:func:`_actions`): a demo action only where a sandbox world lists it.
    """
    settings = settings if settings is not None else Settings.from_env()
    base_url = (host or settings.base_url or "").rstrip("/")
    if not base_url:
        raise ConfigError(
            "no service URL: pass --host or set AUTHZKIT_BASE_URL "
            "(`authzkit loadtest` starts a sandbox for you)"
        )
    auth_url = _auth_url(options, settings, base_url)
    credentials = _credentials(options, settings)
    admin, world = None, None
    if not options.subjects or not credentials.complete:
        admin, world, raw = _sandbox_world(base_url, settings.timeout, settings.tls)
        if not credentials.complete:
            credentials = _demo_credentials(admin, world, raw, credentials)
    if options.subjects:
        subjects = subjects_from_csv(options.subjects)
    else:
        assert world is not None and admin is not None  # read above: no --subjects
        subjects = subjects_from_world(
            world, lambda subject: admin.session_token(subject, ttl=SANDBOX_SESSION_TTL)
        )
    known = world
    if known is None and _unnamed(options, settings):
        try:  # an authzkit sandbox reached with subjects and credentials: its world's names
            known = _sandbox_world(base_url, settings.timeout, settings.tls)[1]
        except ConfigError:
            known = None  # no sandbox: nothing is assumed, the action must be named
    action, challenge_action = _actions(options, settings, known)
    template = _template(base_url, auth_url, credentials, settings)
    return ProcessState(
        base_url=base_url,
        auth_url=auth_url,
        timeout=settings.timeout,
        token_provider=template.token_provider,
        keys=template.keys,
        subjects=tuple(subjects),
        action=action,
        challenge_action=challenge_action,
        wait=parse_wait_time(options.wait_time),
        sandbox=world is not None,
        tls=settings.tls,
    )


__all__ = [
    "SANDBOX_SESSION_TTL",
    "ProcessState",
    "build_process_state",
    "configured_token_provider",
    "needed_actions",
    "parse_wait_time",
]
