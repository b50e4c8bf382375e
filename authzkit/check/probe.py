"""The checker's HTTP plumbing: every probe goes through the client's recording transport.

Rows judge raw answers (a ``diff`` needs the body as it came), so authorize calls are sent
here rather than through :meth:`AuthzClient.authorize`, with the body the client builds and
the access token it holds. Missing inputs and broken prerequisites become :class:`Skip`,
so one breakage fails only the rows it concerns.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from authzkit.check.results import Skip
from authzkit.client.answers import TOTP_SECRET, totp_now
from authzkit.client.authorize import build_body
from authzkit.client.exchanges import Exchange, Recorder
from authzkit.client.outcomes import ChallengeRequired
from authzkit.client.transport import HttpResponse
from authzkit.shared.connection import Connection
from authzkit.shared.consent import WrongAnswerPolicy
from authzkit.wire import jwe
from authzkit.wire.clock import ManualClock
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.redact import reveal
from authzkit.wire.spec import (
    AUTHORIZE_PATH,
    DISCOVERY_PATH,
    is_challenge,
)

log = logging.getLogger(__name__)

# JWK members that only a private key has (RFC 7518 §6.3.2, §6.4): never to be published.
PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "oth", "k")
USER_AGENT = "authzkit-check"


class Probe:
    """One environment under check: its inputs, its recorded exchanges, its clocks."""

    def __init__(
        self,
        connection: Connection,
        *,
        recorder: Recorder,
        allow_wrong_answers: bool | None,
        clocks: tuple[ManualClock, ManualClock] | None = None,
    ) -> None:
        self.connection = connection
        self.client = connection.client
        self.transport = connection.client.transport
        self.recorder = recorder
        self.settings = connection.settings
        # authzkit.shared.consent's one rule: a sandbox authzkit started, --allow-wrong-answers, or
        # AUTHZKIT_ALLOW_WRONG_ANSWERS. False or None (the flag not given) leaves the
        # decision to the environment variable, as on demo and trace.
        self.wrong_answers = WrongAnswerPolicy.for_connection(
            connection, consent=allow_wrong_answers or None
        )
        self.clocks = clocks  # (service, client) when authzkit started the sandbox
        self._token_error: AuthzError | None = None
        self._token_exchange: Exchange | None = None
        self._keys: tuple[HttpResponse, Exchange] | None = None
        self._key: jwe.PublicKey | None = None

    # -- inputs -------------------------------------------------------------------------
    @property
    def is_sandbox(self) -> bool:
        return self.connection.is_sandbox

    def plain_action(self) -> str:
        return self._action("plain")

    def challenge_action(self) -> str:
        return self._action("challenge")

    def _action(self, kind: str) -> str:
        """The action of ``kind`` by the one rule (--action/--challenge-action, then
        AUTHZKIT_*_ACTION, then the sandbox's demo name); a row that needs one the run was
        not given is skipped, naming the option and the variable."""
        try:
            return self.connection.action(kind)
        except ConfigError as exc:
            raise Skip(str(exc)) from None

    def action_for_kind(self, kind: str) -> str:
        """An action whose challenge accepts ``kind`` (sandbox: from its world)."""
        if not self.is_sandbox:
            return self.challenge_action()
        for action in self.connection.actions():
            if list(action.get("required_types", [])) == [kind]:
                return str(action["name"])
        raise Skip(f"the sandbox world has no action asking for {kind} alone")

    def other_challenge_action(self) -> str:
        """A second action that demands a challenge (to send a solution to the wrong one)."""
        mine = self.challenge_action()
        if self.is_sandbox:
            for action in self.connection.actions():
                if action.get("required_types") and action.get("name") != mine:
                    return str(action["name"])
        if self.is_sandbox:
            raise Skip("the sandbox world has no second action that demands a challenge")
        raise Skip("only on a sandbox (needs a second action that demands a challenge)")

    def subject_token(self) -> str:
        try:
            return self.connection.subject_token()
        except ConfigError:
            raise Skip("set AUTHZKIT_SUBJECT_TOKEN") from None

    def resource(self) -> tuple[str, str]:
        try:
            return self.connection.resource()
        except ConfigError:
            raise Skip("set AUTHZKIT_RESOURCE_ID") from None

    def foreign_resource(self) -> str:
        """A resource the subject may not touch."""
        if self.is_sandbox:
            return self.connection.foreign_resource()[0]
        if not self.settings.foreign_resource_id:
            raise Skip("set AUTHZKIT_FOREIGN_RESOURCE_ID (a resource the subject may not touch)")
        return self.settings.foreign_resource_id

    def other_resource(self) -> str:
        """Another resource than the checked one: on a sandbox, its owner's second one when
        the world gives that owner two (whoever the subject is: the world's default
        subject, or the resource AUTHZKIT_RESOURCE_ID names); else a foreign one."""
        if self.is_sandbox:
            mine = self.resource()[0]
            resources = list(self.connection.world().get("resources", []))
            owner = next((r["owner"] for r in resources if r["id"] == mine), None)
            others = [r["id"] for r in resources if r["owner"] == owner and r["id"] != mine]
            if others:
                return str(others[0])
        return self.foreign_resource()

    def answer(self, kind: str) -> str:
        """The correct answer of ``kind`` (a TOTP computed on the client's clock)."""
        answers = self.connection.answers()
        value = answers.get(kind)
        if value is not None and reveal(value) != "":
            return str(reveal(value))
        if kind == "totp" and answers.get(TOTP_SECRET):
            return totp_now(answers[TOTP_SECRET], self.clocks[1] if self.clocks else None)
        raise Skip(f"set AUTHZKIT_ANSWER_{kind.upper()}")

    @property
    def wrong_answers_allowed(self) -> bool:
        return self.wrong_answers.allowed

    def wrong_answer(self, kind: str) -> str:
        """An answer of ``kind`` that is not the right one (only when allowed)."""
        if not self.wrong_answers.allowed:
            raise Skip(self.wrong_answers.skip_message())
        right = self.answer(kind) if kind in self.connection.answers() or kind == "totp" else ""
        return next(v for v in ("000000", "111111") if v != right)

    # -- time ---------------------------------------------------------------------------
    def advance(self, seconds: float, *, client: bool = True) -> None:
        """Move the sandbox's time (and the client's); a real environment cannot."""
        if self.clocks is None:
            raise Skip("only on a sandbox this command starts (time must move)")
        self.clocks[0].advance(seconds)
        if client:
            self.clocks[1].advance(seconds)

    def sync_client_clock(self) -> None:
        """Bring the client's clock to the sandbox's after a service-only advance."""
        if self.clocks is not None:
            service, client = self.clocks
            client.advance(service() - client())

    # -- token --------------------------------------------------------------------------
    def token_exchange(self) -> Exchange:
        """The client's first token call as recorded (made once, lazily)."""
        if self._token_exchange is None and self._token_error is None:
            start = len(self.recorder)
            try:
                self.client.access_token()
            except AuthzError as exc:
                self._token_error = exc
            calls = [e for e in self.recorder.exchanges[start:] if e.name == "token"]
            self._token_exchange = calls[-1] if calls else None
        if self._token_exchange is None:
            raise Skip(f"no token call was recorded: {self._token_error}")
        return self._token_exchange

    def access_token(self) -> str:
        """The client's access token, or a skip naming the token row that failed."""
        exchange = self.token_exchange()
        if self._token_error is not None:
            raise Skip(
                "needs token.request_style" if exchange.status != 200 else "needs token.fields"
            )
        return self.client.access_token()

    # -- keys ---------------------------------------------------------------------------
    def keys_response(self) -> tuple[HttpResponse, Exchange]:
        """The discovery document, fetched once with the bearer token."""
        if self._keys is None:
            url = self.client.base_url + DISCOVERY_PATH
            response = self.send(
                "GET", url, "check:keys", headers={"Authorization": "Bearer " + self.access_token()}
            )
            self._keys = (response, self.recorder.exchanges[-1])
        return self._keys

    def enc_entries(self) -> list[Mapping[str, Any]]:
        response, _ = self.keys_response()
        body = response.body() if response.status == 200 else None
        keys = body.get("keys") if isinstance(body, Mapping) else None
        if not isinstance(keys, list):
            raise Skip("needs keys.one_enc_rsa_key")
        return [k for k in keys if isinstance(k, Mapping) and k.get("use") == "enc"]

    def key(self) -> jwe.PublicKey:
        """The ``use=enc`` key, public members only (a published private member fails its
        own row, not every row that encrypts)."""
        if self._key is None:
            entries = self.enc_entries()
            if not entries:
                raise Skip("needs keys.one_enc_rsa_key")
            public = {k: v for k, v in entries[0].items() if k not in PRIVATE_MEMBERS}
            try:
                self._key = jwe.PublicKey.from_jwk(public)
            except AuthzError:
                raise Skip("needs keys.one_enc_rsa_key") from None
        return self._key

    def encrypt(self, payload: Mapping[str, Any], key: jwe.PublicKey | None = None) -> str:
        return jwe.encrypt(key or self.key(), dict(payload))

    # -- authorize ----------------------------------------------------------------------
    def send(
        self,
        method: str,
        url: str,
        name: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
    ) -> HttpResponse:
        """One raw request through the recording transport."""
        return self.transport.request(method, url, name=name, headers=headers, json_body=body)

    def authorize(
        self,
        action: str,
        *,
        name: str = "check:authorize",
        resource_id: str | None = None,
        solution: str | None = None,
        bearer: str | None = None,
        subject_token: str | None = None,
        **fields: Any,
    ) -> HttpResponse:
        """POST an authorization request; ``bearer=""`` sends none."""
        rid, rtype = self.resource()
        body = build_body(
            action,
            resource_id=resource_id or rid,
            resource_type=rtype,
            subject_token=subject_token or self.subject_token(),
            user_agent=USER_AGENT,
            challenge_solution=solution,
            **fields,
        )
        token = self.access_token() if bearer is None else bearer
        headers = {"Authorization": "Bearer " + token} if token else {}
        return self.send(
            "POST", self.client.base_url + AUTHORIZE_PATH, name, headers=headers, body=body
        )

    def challenge(self, action: str | None = None) -> ChallengeRequired:
        """A fresh challenge for ``action`` (the challenge action by default)."""
        response = self.authorize(action or self.challenge_action(), name="check:challenge")
        body = response.body()
        if response.status != 403 or not is_challenge(body):
            raise Skip("needs challenge.object")
        try:
            return ChallengeRequired.from_json(body)
        except AuthzError:
            raise Skip("needs challenge.object") from None

    def solve(
        self,
        challenge: ChallengeRequired,
        kind: str,
        value: str,
        *,
        action: str | None = None,
        resource_id: str | None = None,
        name: str = "check:solution",
    ) -> HttpResponse:
        """Send ``value`` of ``kind`` for ``challenge`` (encrypted for the published key)."""
        solution = self.encrypt({"challenge_id": challenge.challenge_id, kind: value})
        return self.authorize(
            action or self.challenge_action(), name=name, resource_id=resource_id, solution=solution
        )

    def answerable_kind(self, challenge: ChallengeRequired) -> tuple[str, str]:
        """``(kind, correct answer)`` of the first kind of ``challenge`` we can answer."""
        for kind in challenge.required_types:
            try:
                return kind, self.answer(kind)
            except Skip:
                continue
        kinds = ", ".join(challenge.required_types) or "none"
        raise Skip(
            f"no answer for the kinds the challenge asks ({kinds}): set AUTHZKIT_ANSWER_<KIND>"
        )


__all__ = ["PRIVATE_MEMBERS", "USER_AGENT", "Probe"]
