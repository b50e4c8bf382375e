"""The policy explorer: pick a subject, an action and a resource, see what the service says.

Each change sends ONE plain authorize request (never a solution) and shows the outcome, the
masked exchange and its curl; subject tokens stay in Python (docs/internals.md, "The
explorers").
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

import ipywidgets as w

from authzkit.client.exchanges import Exchange, Recorder
from authzkit.client.facade import AuthzClient
from authzkit.shared.connection import Connection
from authzkit.shared.matrix import (
    KIND_COLOURS,
    REAL_SUBJECT,
    MatrixCell,
    MatrixResource,
    ask,
    plan_matrix,
)
from authzkit.widgets.frame import DROPDOWN, ExplorerFrame
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import Secret, scrub
from authzkit.wire.spec import AUTHORIZE_PATH, AUTHZEN

USER_AGENT = "authzkit-explorer"


class PolicyExplorer(ExplorerFrame):
    """Dropdowns subject / action / resource and the live answer; display it as a cell's
    last line. ``actions``/``resources`` default to the sandbox world's (on a real
    environment: ``AUTHZKIT_PLAIN_ACTION``/``_CHALLENGE_ACTION`` and ``AUTHZKIT_RESOURCE_ID``/
    ``AUTHZKIT_FOREIGN_RESOURCE_ID``); a real environment's only subject is the holder of
    ``AUTHZKIT_SUBJECT_TOKEN``. Call :meth:`close` when done (it closes only what it made).
    """

    def __init__(
        self,
        connection: Connection,
        *,
        subjects: Sequence[str] | None = None,
        actions: str | Sequence[str] | None = None,
        resources: str | Sequence[str] | None = None,
        user_agent: str = USER_AGENT,
    ) -> None:
        if connection.client.dialect == AUTHZEN:
            raise ConfigError("PolicyExplorer asks the draft's authorize API; use AuthzenExplorer")
        self.connection = connection
        self.user_agent = user_agent
        world = connection.world() if connection.is_sandbox else None
        plan = plan_matrix(connection.settings, world, actions=actions, resources=resources)
        if world is not None:
            subjects = list(subjects or [s["id"] for s in world.get("subjects", [])])
        else:
            subjects = [REAL_SUBJECT]
        self.resources: dict[str, MatrixResource] = {r.id: r for r in plan.resources}
        self._client, self._own_client = self._recording_client(connection)
        self.recorder: Recorder = self._client.recorder  # type: ignore[assignment]
        self.cell: MatrixCell | None = None
        self.exchange: Exchange | None = None
        self.error: str | None = None
        self._tokens: dict[str, Secret] = {}

        self.subject = w.Dropdown(options=subjects, description="subject", **DROPDOWN)
        self.action = w.Dropdown(options=list(plan.actions), description="action", **DROPDOWN)
        self.resource = w.Dropdown(
            options=[(r.label, r.id) for r in plan.resources], description="resource", **DROPDOWN
        )
        self.outcome = w.HTML()
        self.outcome.add_class("authzkit-explorer-outcome")
        self.details = w.HTML()
        self.details.add_class("authzkit-explorer-exchange")
        self._lay_out("authzkit-policy-explorer")

    @staticmethod
    def _recording_client(connection: Connection) -> tuple[AuthzClient, bool]:
        """The environment's client if it records, else one that does and shares its
        access token and key cache (no extra token request)."""
        if connection.client.recorder is not None:
            return connection.client, False
        client = AuthzClient(
            base_url=connection.client.base_url,
            token_provider=connection.client.token_provider,
            keys=connection.client.keys,
            recorder=Recorder(limit=50),
            timeout=connection.client.timeout,
        )
        return client, True

    # -- asking -------------------------------------------------------------------------

    def _subject_token(self, subject: str) -> Secret:
        # Minted afresh on the sandbox (a kept one would expire in a long-open notebook).
        if self.connection.is_sandbox:
            return Secret(self.connection.subject_token(subject))
        if subject not in self._tokens:
            self._tokens[subject] = Secret(self.connection.subject_token())
        return self._tokens[subject]

    def refresh(self) -> MatrixCell | None:
        """Ask for the current selection (one plain authorize request) and show the answer."""
        self.cell, self.exchange, self.error = None, None, None
        self.outcome.value = "<i>asking…</i>"
        before = self.recorder.last
        try:
            token = self._subject_token(self.subject.value)
            self.cell = ask(
                self._client,
                token.reveal(),
                self.action.value,
                self.resources[self.resource.value],
                user_agent=self.user_agent,
            )
        finally:
            self.exchange = self._authorize_exchange(before)
            self._show()
        return self.cell

    def _authorize_exchange(self, before: Exchange | None) -> Exchange | None:
        """The authorize exchange recorded after ``before`` (a token request may precede
        it); None when this refresh sent none."""
        found = None
        for exchange in reversed(self.recorder.exchanges):
            if exchange is before:
                break
            if found is None and exchange.url.endswith(AUTHORIZE_PATH):
                found = exchange
        return found

    # -- showing ------------------------------------------------------------------------

    def _show(self) -> None:
        if self.cell is not None:
            colour = KIND_COLOURS[self.cell.kind]
            status = f"HTTP {self.cell.status}" if self.cell.status else "no HTTP status"
            self.outcome.value = (
                f"<span style='background:{colour};padding:2px 6px'>"
                f"<b>{html.escape(self.cell.outcome)}</b></span> &mdash; {status}"
            )
        elif self.error is not None:
            self._show_error()
        self.details.value = (
            ""
            if self.exchange is None
            else (
                f"<pre>{html.escape(self._exchange_text())}</pre>"
                f"<b>curl</b> (export the $VARIABLES first):"
                f"<pre style='white-space:pre-wrap'>{html.escape(self.curl)}</pre>"
            )
        )

    def _exchange_text(self) -> str:
        exchange = self.exchange
        if exchange is None:
            return ""
        body = (
            json.dumps(exchange.response_body, indent=2)
            if exchange.response_body is not None
            else "(no body)"
        )
        answered = exchange.status or f"no answer ({exchange.error})"
        return f"{exchange.method} {exchange.url} -> {answered}\n{body}"

    def _scrubbed(self, text: str) -> str:
        return scrub(text, list(self._tokens.values()))

    def summary(self) -> str:
        """Plain-text state (what a notebook shows without a widget frontend)."""
        lines = [
            f"PolicyExplorer: subject {self.subject.value} · action {self.action.value}"
            f" · resource {self.resource.label}"
        ]
        if self.cell is not None:
            lines.append(
                f"  outcome: {self.cell.outcome}"
                + (f" (HTTP {self.cell.status})" if self.cell.status else "")
            )
        if self.error is not None:
            lines.append(f"  failed: {self.error}")
        if self.exchange is not None:
            first, *body = self._exchange_text().splitlines()
            lines += [f"  exchange: {first}", *("    " + line for line in body)]
            lines.append(f"  curl: {self.curl}")
        return "\n".join(lines)


__all__ = ["USER_AGENT", "PolicyExplorer"]
