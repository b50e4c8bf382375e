"""The answer form itself: its widgets and the submit round trip (how it reads without a
widget frontend is :mod:`authzkit.widgets.readout`, the notebook's closing step
:mod:`authzkit.widgets.closing`)."""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as w

from authzkit.client.answers import TOTP_SECRET, totp_now
from authzkit.client.facade import EncryptedSolution
from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.shared.connection import Connection
from authzkit.widgets.attempt import TYPED, Attempt, attempt_html, label
from authzkit.widgets.display import TextFallback
from authzkit.widgets.readout import summary_html, summary_text
from authzkit.wire.clock import Clock
from authzkit.wire.errors import AuthzError
from authzkit.wire.jwe import protected_header
from authzkit.wire.redact import Secret, scrub

USER_AGENT = "authzkit-notebook/1.0"
PASSWORD_KINDS = frozenset({"pin", "login_password"})


class ChallengeForm(TextFallback):
    """An answer form for one :class:`ChallengeRequired`; display it as a cell's last line.

    ``action``, ``resource`` and ``subject_token`` must be those of the request that got
    the challenge (a challenge is bound to subject, action and resource); ``resource`` and
    ``subject_token`` default to the environment's for ``subject`` (None: the
    environment's own, :attr:`Connection.subject <authzkit.shared.connection.Connection.subject>`,
    so a world of its own serves as the demo one does). ``auto_submit`` defaults to
    ``connection.settings.auto_submit``.
    """

    def __init__(
        self,
        connection: Connection,
        challenge: ChallengeRequired,
        *,
        action: str,
        subject: str | None = None,
        resource: tuple[str, str] | None = None,
        subject_token: str | None = None,
        user_agent: str = USER_AGENT,
        user_ip: str | None = None,
        auto_submit: bool | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.connection = connection
        self.action = action
        self.subject = subject  # None: the environment's own (see the class docstring)
        self.resource_id, self.resource_type = resource or connection.resource(subject)
        self._subject_token = Secret(subject_token or connection.subject_token(subject))
        self.user_agent = user_agent
        self.user_ip = user_ip
        self.clock = clock
        self.auto_submit = connection.settings.auto_submit if auto_submit is None else auto_submit
        self.attempts: list[Attempt] = []
        self.done = False
        self._on_done: list[Callable[[ChallengeForm], None]] = []
        self._known = self._known_answers()

        self.title = w.HTML()
        self.fields: dict[str, w.Text | w.Password] = {}
        self.rows = w.VBox()
        self.submit_button = w.Button(description="Submit", button_style="primary", icon="lock")
        self.submit_button.add_class("authzkit-submit")
        self.submit_button.on_click(lambda _button: self._guarded(self.submit))
        self.restart_button = w.Button(description="New challenge", layout={"display": "none"})
        self.restart_button.on_click(lambda _button: self._guarded(self.restart))
        self.result = w.HTML()
        self.result.add_class("authzkit-outcome")
        self.widget = w.VBox(
            [self.title, self.rows, w.HBox([self.submit_button, self.restart_button]), self.result]
        )
        self.widget.add_class("authzkit-challenge-form")
        self._adopt(challenge)

        if self.auto_submit and self._known_kind() is not None:
            self._guarded(lambda: self.submit(automatic=True))

    # -- state --------------------------------------------------------------------------

    @property
    def outcome(self) -> Authorized | ChallengeRequired | None:
        """The last outcome the service sent (``None`` before a successful exchange)."""
        return self.attempts[-1].outcome if self.attempts else None

    @property
    def error(self) -> Exception | None:
        """The last submission's error, if it failed."""
        return self.attempts[-1].error if self.attempts else None

    @property
    def protected_header(self) -> Mapping[str, Any] | None:
        """The decoded protected header of the last solution sent."""
        return self.attempts[-1].header if self.attempts else None

    def on_done(self, callback: Callable[[ChallengeForm], None]) -> None:
        """Call ``callback(form)`` once the form is finished (now, if it already is)."""
        if self.done:
            self._guarded(lambda: callback(self))
        else:
            self._on_done.append(callback)

    def _known_answers(self) -> dict[str, tuple[Secret, str]]:
        """kind -> (answer, where it comes from), from the world or AUTHZKIT_ANSWER_*."""
        known: dict[str, tuple[Secret, str]] = {}
        # The variables win over the world's answers when no subject is named.
        given = self.connection.settings.answers if self.subject is None else {}
        for kind, value in self.connection.answers(self.subject).items():
            if value:
                world = self.connection.is_sandbox and kind not in given
                origin = "the sandbox world" if world else f"AUTHZKIT_ANSWER_{kind.upper()}"
                known[kind] = (Secret(value), origin)
        return known

    def _known_kind(self) -> str | None:
        for kind in self.challenge.required_types:
            if kind in self._known or (kind == "totp" and TOTP_SECRET in self._known):
                return kind
        return None

    # -- building -----------------------------------------------------------------------

    def _adopt(self, challenge: ChallengeRequired) -> None:
        """Show the fields ``challenge`` asks for (on creation and on a new challenge)."""
        self.challenge = challenge
        kinds = ", ".join(label(k) for k in challenge.required_types) or "nothing"
        self.title.value = (
            f"<b>Challenge</b> for <code>{html.escape(self.action)}</code> "
            f"(id <code>{html.escape(str(challenge.challenge_id))}</code>): "
            f"answer with any one of: {html.escape(kinds)}"
        )
        self.fields = {}
        rows = []
        for kind in challenge.required_types:
            rows.append(self._row(kind))
        self.rows.children = tuple(rows)
        self.submit_button.disabled = False
        self.restart_button.layout.display = "none"

    def _row(self, kind: str) -> w.Widget:
        known = self._known.get(kind)
        if known is not None:
            hint = f"pre-filled from {known[1]}"
        elif kind == "totp" and TOTP_SECRET in self._known:
            hint = "generated from the TOTP secret"
        else:
            hint = f"type the {label(kind)}"
        options: dict[str, Any] = {
            "description": label(kind),
            "placeholder": hint,
            "style": {"description_width": "120px"},
            "layout": {"width": "440px"},
        }
        box = w.Password(**options) if kind in PASSWORD_KINDS else w.Text(**options)
        box.add_class(f"authzkit-answer-{kind}")
        self.fields[kind] = box
        if kind == "totp" and TOTP_SECRET in self._known:
            generate = w.Button(
                description="Generate from secret", icon="clock", layout={"width": "auto"}
            )
            generate.on_click(lambda _button: self._guarded(self.generate_totp))
            return w.HBox([box, generate])
        return box

    def generate_totp(self) -> None:
        """Fill the TOTP field with the current code of the known secret."""
        secret = self._known.get(TOTP_SECRET)
        if secret is None or "totp" not in self.fields:
            self._note("No TOTP secret is known here; type the code from the authenticator.")
            return
        self.fields["totp"].value = totp_now(secret[0], self.clock)

    # -- submitting ---------------------------------------------------------------------

    def _take_answer(self) -> tuple[str, Secret, str] | None:
        """The first typed value, else the first known answer; clears every field."""
        typed = None
        for name, box in self.fields.items():
            if typed is None and box.value.strip():
                typed = (name, Secret(box.value.strip()), TYPED)
            box.value = ""
        if typed is not None:
            return typed
        kind = self._known_kind()
        if kind is None:
            return None
        if kind in self._known:
            value, origin = self._known[kind]
            return kind, value, origin
        return (
            kind,
            Secret(totp_now(self._known[TOTP_SECRET][0], self.clock)),
            "generated from the TOTP secret",
        )

    def submit(self, *, automatic: bool = False) -> Attempt | None:
        """Encrypt the answer, send it, show and return the :class:`Attempt` (never raises)."""
        if self.done:
            self._note("This challenge is finished; use New challenge to start again.")
            return None
        try:
            answer = self._take_answer()
        except AuthzError as exc:
            answer = None
            self._note(str(exc))
            return None
        if answer is None:
            kinds = " or ".join(label(k) for k in self.challenge.required_types)
            self._note(f"Type the {kinds} first.")
            return None
        kind, value, source = answer
        self.submit_button.disabled = True
        self.submit_button.description = "Sending…"
        try:
            attempt = self._send(kind, value, source, automatic)
        finally:
            self.submit_button.description = "Submit"
            self.submit_button.disabled = False
        self.attempts.append(attempt)
        if isinstance(attempt.outcome, ChallengeRequired):
            self._adopt(attempt.outcome)
        self.result.value = attempt_html(attempt, self._secrets())
        if attempt.final:
            self._finish(restartable=not attempt.authorized)
        return attempt

    def _send(self, kind: str, value: Secret, source: str, automatic: bool) -> Attempt:
        """One solution sent through the client (which re-encrypts once after a key
        rotation); the protected header of the last one encrypted is kept for the form."""
        headers: list[Mapping[str, Any]] = []

        def seen(encrypted: EncryptedSolution) -> None:
            if encrypted.solution is not None:
                headers.append(protected_header(encrypted.solution))

        try:
            outcome = self.connection.client.send_solution(
                self.action,
                self.challenge,
                kind,
                value,
                on_encrypted=seen,
                resource_id=self.resource_id,
                resource_type=self.resource_type,
                subject_token=self._subject_token.reveal(),
                user_agent=self.user_agent,
                user_ip=self.user_ip,
            )
        except Exception as exc:  # shown in the form, never raised from a callback
            return Attempt(
                kind,
                source,
                error=exc,
                header=headers[-1] if headers else None,
                automatic=automatic,
            )
        return Attempt(
            kind,
            source,
            outcome=outcome,
            header=headers[-1] if headers else None,
            automatic=automatic,
        )

    def restart(self) -> None:
        """Ask again without a solution, to get a fresh challenge for the same request."""
        outcome = self.connection.client.authorize(
            self.action,
            resource_id=self.resource_id,
            resource_type=self.resource_type,
            subject_token=self._subject_token.reveal(),
            user_agent=self.user_agent,
            user_ip=self.user_ip,
        )
        self.done = False
        if isinstance(outcome, ChallengeRequired):
            self._adopt(outcome)
            self._note("A new challenge was issued.")
        else:
            self.attempts.append(Attempt("no answer", "no challenge needed", outcome=outcome))
            self.result.value = attempt_html(self.attempts[-1], self._secrets())
            self._finish(restartable=False)

    def _finish(self, *, restartable: bool) -> None:
        self.done = True
        self.submit_button.disabled = True
        for box in self.fields.values():
            box.disabled = True
        self.restart_button.layout.display = None if restartable else "none"
        callbacks, self._on_done = self._on_done, []
        for callback in callbacks:
            self._guarded(functools.partial(callback, self))

    # -- showing ------------------------------------------------------------------------

    def _secrets(self) -> list[Any]:
        return [self._subject_token, *(value for value, _ in self._known.values())]

    def _note(self, text: str) -> None:
        self.result.value = f"<i>{html.escape(scrub(text, self._secrets()))}</i>"

    def _guarded(self, call: Callable[[], Any]) -> Any:
        """Run a callback's work; any exception is shown in the form instead of raised."""
        try:
            return call()
        except Exception as exc:
            self._note(f"{type(exc).__name__}: {exc}")
            return None

    def _field_states(self) -> list[tuple[str, str]]:
        """(kind, where its answer comes from) for each field; never the answer itself."""
        states = []
        for kind in self.challenge.required_types:
            if kind in self._known:
                states.append((kind, f"pre-filled from {self._known[kind][1]} (hidden)"))
            elif kind == "totp" and TOTP_SECRET in self._known:
                origin = self._known[TOTP_SECRET][1]
                states.append((kind, f"generated from the TOTP secret ({origin})"))
            else:
                states.append((kind, "waiting to be typed"))
        return states

    def summary(self) -> str:
        """Plain-text state of the form (what a notebook shows without a widget frontend)."""
        return summary_text(
            self.action, self.challenge, self._field_states(), self.attempts, self._secrets()
        )

    def summary_html(self) -> str:
        """The form as a reader of an HTML export sees it: the challenge, each field's
        state and every attempt's outcome line, with no input to type into."""
        return summary_html(self.title.value, self._field_states(), self.attempts, self._secrets())


__all__ = ["Attempt", "ChallengeForm"]
