"""Settings: the only place that reads ``os.environ`` (``AUTHZKIT_*``) and ``.env``.

No ``AUTHZKIT_BASE_URL``: the embedded sandbox; any connection setting: a service of your
own, never a sandbox fallback. Also picks the actions a command sends and the dialect. The
variables themselves are :mod:`authzkit.wire.variables` (docs/internals.md, "Settings").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from authzkit.wire.actions import action_setting
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import Secret
from authzkit.wire.tls import TlsSettings
from authzkit.wire.variables import (
    ANSWER_PREFIX,
    CONNECTION_VARIABLES,
    allow_wrong_answers,
    authzkit_variables,
    check_dialect,
    check_url,
    default_client_auth,
    json_object,
    parse_bool,
    proof_variable,
    token_variables,
)

DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Settings:
    """Where the service is and who we are; ``base_url=None`` means "use the sandbox"."""

    base_url: str | None = None
    auth_url: str | None = None
    client_id: str | None = None
    client_secret: Secret | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    answers: Mapping[str, Secret] = field(default_factory=dict, repr=False)
    subject_token: Secret | None = field(default=None, repr=False)
    resource_id: str | None = None
    resource_type: str | None = None
    # Notebook answer forms submit themselves when an answer is known (unattended runs);
    # AUTHZKIT_AUTO_SUBMIT=0 makes them wait for a person (the browser test, live demos).
    auto_submit: bool = True
    # The token endpoint of the published dialect (unset: the draft path below auth_url).
    issuer: str | None = None
    token_url: str | None = None
    client_auth: str = "draft"
    client_key_file: str | None = None
    # The assertion's kid when the key file has none (AUTHZKIT_CLIENT_KEY_ID), and what the
    # client-credentials request asks for (AUTHZKIT_TOKEN_SCOPE, AUTHZKIT_TOKEN_RESOURCE).
    client_key_id: str | None = None
    token_scope: str | None = None
    token_resource: str | None = None
    # The CONNECTION_VARIABLES that were set: any of them means "never the sandbox".
    connection: tuple[str, ...] = ()
    # What a real environment must name: an action that needs no challenge, one that
    # demands a challenge (read through `action()`: check, matrix, loadtest, locustfiles,
    # notebooks), and a resource the subject may not touch (check).
    plain_action: str | None = None
    challenge_action: str | None = None
    foreign_resource_id: str | None = None
    # AUTHZKIT_ALLOW_WRONG_ANSWERS: consent to send deliberately wrong answers to a real
    # environment (None: not given; see authzkit.shared.consent).
    allow_wrong_answers: bool | None = None
    # The trust store and client certificate of every connection (AUTHZKIT_TLS_*, else
    # REQUESTS_CA_BUNDLE / SSL_CERT_FILE): see authzkit.wire.tls.
    tls: TlsSettings = field(default_factory=TlsSettings)
    # AUTHZKIT_DIALECT: draft, published or authzen (None: not said; see connect()).
    dialect: str | None = None
    # What an AuthZEN PDP's commands act on when a command line does not say
    # (AUTHZKIT_SUBJECT_ID/_TYPE/_PROPERTIES, AUTHZKIT_RESOURCE_PROPERTIES; the resource's
    # id and type are resource_id and resource_type above).
    subject_id: str | None = None
    subject_type: str | None = None
    subject_properties: Mapping[str, Any] = field(default_factory=dict)
    resource_properties: Mapping[str, Any] = field(default_factory=dict)

    @property
    def effective_client_auth(self) -> str:
        """``client_auth`` after the default rule, the client's own (``default_client_auth``
        of :mod:`authzkit.wire.variables`): "draft" with an issuer or token URL means
        ``private_key_jwt`` with a key file, else ``client_secret_post``."""
        return default_client_auth(
            self.client_auth,
            issuer=self.issuer,
            token_url=self.token_url,
            client_key=self.client_key_file or None,
        )

    def token_options(self) -> dict[str, Any]:
        """The token-endpoint arguments of :class:`~authzkit.client.facade.AuthzClient` (the
        client key loaded here, so a bad file is named as ``AUTHZKIT_CLIENT_KEY_FILE``)."""
        options: dict[str, Any] = {
            "issuer": self.issuer,
            "token_url": self.token_url,
            "client_auth": self.client_auth,
            "scope": self.token_scope,
            "resource": self.token_resource,
        }
        if self.client_key_file:
            from authzkit.wire.jwe import ClientKey

            options["client_key"] = ClientKey.load(
                Path(self.client_key_file),
                setting="AUTHZKIT_CLIENT_KEY_FILE",
                kid=self.client_key_id,
                kid_setting="AUTHZKIT_CLIENT_KEY_ID",
            )
        return options

    @property
    def uses_sandbox(self) -> bool:
        """True when no connection setting is given: then authzkit starts its own sandbox.
        Any one of :data:`CONNECTION_VARIABLES` means a service of the user's, never a
        silent fallback to a sandbox that the user did not ask for."""
        return self.base_url is None and not self.connection

    @property
    def has_token_endpoint(self) -> bool:
        """True when a token endpoint is configured without the authorization host
        (``AUTHZKIT_ISSUER``, ``AUTHZKIT_TOKEN_URL`` or ``AUTHZKIT_AUTH_URL``): enough for
        ``authzkit token``."""
        return bool(self.issuer or self.token_url or self.auth_url)

    def require_base_url(self) -> str:
        """``AUTHZKIT_BASE_URL``, or a :class:`ConfigError` that names it and the connection
        settings that rule the sandbox out."""
        if self.base_url is not None:
            return self.base_url
        given = ", ".join(self.connection)
        raise ConfigError(
            f"AUTHZKIT_BASE_URL is not set, but {given} "
            f"{'is' if len(self.connection) == 1 else 'are'}: set "
            f"AUTHZKIT_BASE_URL to the authorization host (authzkit never falls "
            f"back to the sandbox when a connection setting is given; unset "
            f"them all to use the sandbox)"
        )

    def chosen_action(
        self, kind: str, option: str | None = None, *, sandbox: bool | None = None
    ) -> str | None:
        """The ``plain`` or ``challenge`` action, by ONE rule for every command, locustfile
        and notebook: ``option`` (a command line's ``--action``/``--challenge-action``),
        else ``AUTHZKIT_PLAIN_ACTION``/``AUTHZKIT_CHALLENGE_ACTION``, else, on a sandbox
        only, the sandbox's demo action; ``None`` when none applies. A demo name is never
        assumed elsewhere: sent to an environment that lacks it, every call fails
        ``unauthorized``. ``sandbox`` says whether the service is a sandbox (default:
        :attr:`uses_sandbox`; a locust process reached through ``AUTHZKIT_BASE_URL`` knows
        better)."""
        setting = action_setting(kind)
        given = (option or "").strip()
        if given:
            return given
        configured = self.plain_action if kind == "plain" else self.challenge_action
        if configured:
            return configured
        on_sandbox = self.uses_sandbox if sandbox is None else sandbox
        return setting.sandbox_default if on_sandbox else None

    def action(self, kind: str, option: str | None = None, *, sandbox: bool | None = None) -> str:
        """:meth:`chosen_action`, or a :class:`ConfigError` naming the option and the
        variable that would choose it."""
        found = self.chosen_action(kind, option, sandbox=sandbox)
        if found is None:
            raise ConfigError(action_setting(kind).missing(self.base_url))
        return found

    def with_actions(self, *, plain: str | None = None, challenge: str | None = None) -> Settings:
        """These settings with a command line's actions in place of the variables' (an
        option wins over ``AUTHZKIT_*_ACTION``; ``None`` or empty keeps the variable's)."""
        return replace(
            self,
            plain_action=(plain or "").strip() or self.plain_action,
            challenge_action=(challenge or "").strip() or self.challenge_action,
        )

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, dotenv: Path | None = Path(".env")
    ) -> Settings:
        """Read ``AUTHZKIT_*`` from the environment, with ``.env`` filling the gaps."""
        env = authzkit_variables(environ, dotenv)

        token = token_variables(env)
        connection = tuple(name for name in CONNECTION_VARIABLES if name in env)
        base_url = env.get("AUTHZKIT_BASE_URL")
        if base_url is not None:
            base_url = check_url("AUTHZKIT_BASE_URL", base_url)
        # AUTHZKIT_BASE_URL alone may be an authzkit sandbox started elsewhere, which hands
        # out its demo credentials: connect() finds out (and names what is missing if not).
        # Without AUTHZKIT_BASE_URL the commands that need credentials name them.
        if base_url is not None and connection != ("AUTHZKIT_BASE_URL",):
            method = Settings(**token).effective_client_auth
            needed = ["AUTHZKIT_CLIENT_ID", proof_variable(method)]
            missing = [n for n in needed if n not in env]
            if missing:
                raise ConfigError(
                    f"{connection[0]} is set but {' and '.join(missing)} "
                    f"{'is' if len(missing) == 1 else 'are'} not (a connection setting "
                    f"means your own service; unset them all to use the sandbox)"
                )
        auth_url = env.get("AUTHZKIT_AUTH_URL")
        if auth_url is not None:
            auth_url = check_url("AUTHZKIT_AUTH_URL", auth_url)
        timeout = DEFAULT_TIMEOUT
        if "AUTHZKIT_TIMEOUT" in env:
            try:
                timeout = float(env["AUTHZKIT_TIMEOUT"])
            except ValueError:
                timeout = -1.0
            if not timeout > 0:
                raise ConfigError(
                    f"AUTHZKIT_TIMEOUT must be a positive number of seconds, "
                    f"got {env['AUTHZKIT_TIMEOUT']!r}"
                )
        auto_submit = parse_bool("AUTHZKIT_AUTO_SUBMIT", env.get("AUTHZKIT_AUTO_SUBMIT", "1"))
        secret = env.get("AUTHZKIT_CLIENT_SECRET")
        subject_token = env.get("AUTHZKIT_SUBJECT_TOKEN")
        dialect = env.get("AUTHZKIT_DIALECT")
        subject_properties, resource_properties = (
            json_object(name, env[name]) if name in env else {}
            for name in ("AUTHZKIT_SUBJECT_PROPERTIES", "AUTHZKIT_RESOURCE_PROPERTIES")
        )
        return cls(
            base_url=base_url,
            auth_url=auth_url or base_url,
            client_id=env.get("AUTHZKIT_CLIENT_ID"),
            client_secret=Secret(secret) if secret is not None else None,
            timeout=timeout,
            answers={
                k[len(ANSWER_PREFIX) :].lower(): Secret(v)
                for k, v in env.items()
                if k.startswith(ANSWER_PREFIX)
            },
            subject_token=Secret(subject_token) if subject_token is not None else None,
            resource_id=env.get("AUTHZKIT_RESOURCE_ID"),
            resource_type=env.get("AUTHZKIT_RESOURCE_TYPE"),
            auto_submit=auto_submit,
            plain_action=env.get("AUTHZKIT_PLAIN_ACTION"),
            challenge_action=env.get("AUTHZKIT_CHALLENGE_ACTION"),
            foreign_resource_id=env.get("AUTHZKIT_FOREIGN_RESOURCE_ID"),
            allow_wrong_answers=allow_wrong_answers(env),
            connection=connection,
            tls=TlsSettings.from_env(env, environ),
            dialect=check_dialect("AUTHZKIT_DIALECT", dialect) if dialect else None,
            subject_id=env.get("AUTHZKIT_SUBJECT_ID"),
            subject_type=env.get("AUTHZKIT_SUBJECT_TYPE"),
            subject_properties=subject_properties,
            resource_properties=resource_properties,
            **token,
        )


__all__ = [
    "DEFAULT_TIMEOUT",
    "Settings",
]
