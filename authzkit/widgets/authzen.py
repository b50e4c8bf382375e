"""The AuthZEN explorer: pick a subject, an action and a resource, see the PDP's decision.

The explorer of an AuthZEN PDP, as :class:`~authzkit.widgets.PolicyExplorer` is the
draft's: each change sends ONE evaluation (``POST /access/v1/evaluation``) and shows
``authorized`` or ``denied``, the PDP's context, the exchange and its curl. Entities come
from the AuthZEN sandbox's world, the lists given, or ``AUTHZKIT_SUBJECT_*``/
``AUTHZKIT_RESOURCE_*`` and ``AUTHZKIT_PLAIN_ACTION``; callbacks never raise.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as w

from authzkit.client.exchanges import Exchange, Recorder
from authzkit.client.facade import AuthzClient
from authzkit.client.outcomes import Authorized, Denied
from authzkit.shared.connection import Connection
from authzkit.widgets.frame import DROPDOWN, ExplorerFrame
from authzkit.wire.authzen import EVALUATION_PATH
from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import AUTHZEN

Entity = Mapping[str, Any]
_COLOURS = {"authorized": "#d1f2d9", "denied": "#ffd7d5"}


def _label(entity: Entity) -> str:
    properties = entity.get("properties") or {}
    shown = ", ".join(f"{k}={v}" for k, v in properties.items())
    return f"{entity.get('type')} {entity.get('id')}" + (f" ({shown})" if shown else "")


def _configured(connection: Connection) -> tuple[list[Entity], list[Entity], list[str]]:
    """One subject, resource and action from ``AUTHZKIT_*`` (a PDP authzkit did not start)."""
    settings = connection.settings
    if not (settings.subject_id and settings.resource_id and settings.resource_type):
        raise ConfigError(
            "on a PDP authzkit did not start, give subjects=, resources= and actions= (or set "
            "AUTHZKIT_SUBJECT_ID, AUTHZKIT_RESOURCE_ID, AUTHZKIT_RESOURCE_TYPE and "
            "AUTHZKIT_PLAIN_ACTION)"
        )
    subject: dict[str, Any] = {"type": settings.subject_type or "user", "id": settings.subject_id}
    resource: dict[str, Any] = {"type": settings.resource_type, "id": settings.resource_id}
    if settings.subject_properties:
        subject["properties"] = dict(settings.subject_properties)
    if settings.resource_properties:
        resource["properties"] = dict(settings.resource_properties)
    return [subject], [resource], [connection.action("plain")]


class AuthzenExplorer(ExplorerFrame):
    """Dropdowns subject / action / resource and the PDP's live decision; display it as a
    cell's last line. ``subjects``/``resources`` are AuthZEN entities (``type``, ``id``,
    ``properties``), ``actions`` names. Call :meth:`close` when done."""

    def __init__(
        self,
        connection: Connection,
        *,
        subjects: Sequence[Entity] | None = None,
        actions: Sequence[str] | None = None,
        resources: Sequence[Entity] | None = None,
    ) -> None:
        if connection.client.dialect != AUTHZEN:
            raise ConfigError(
                "AuthzenExplorer needs an AuthZEN PDP; this client speaks "
                f"{connection.client.dialect} (use PolicyExplorer)"
            )
        self.connection = connection
        if connection.sandbox is not None:
            world = connection.world()
            found = (
                list(world.get("subjects", [])),
                list(world.get("resources", [])),
                [a["name"] for a in world.get("actions", [])],
            )
        else:
            found = (
                _configured(connection)
                if not (subjects and actions and resources)
                else ([], [], [])
            )
        self.subjects = list(subjects or found[0])
        self.resources = list(resources or found[1])
        self._client, self._own_client = self._recording_client(connection)
        self.recorder: Recorder = self._client.recorder  # type: ignore[assignment]
        self.decision: Authorized | Denied | None = None
        self.exchange: Exchange | None = None
        self.error: str | None = None

        self.subject = self._dropdown("subject", self.subjects)
        self.action = w.Dropdown(
            options=list(actions or found[2]), description="action", **DROPDOWN
        )
        self.resource = self._dropdown("resource", self.resources)
        self.outcome = w.HTML()
        self.details = w.HTML()
        self._lay_out("authzkit-authzen-explorer")

    @staticmethod
    def _dropdown(name: str, entities: Sequence[Entity]) -> w.Dropdown:
        options = [(_label(e), index) for index, e in enumerate(entities)]
        return w.Dropdown(options=options, description=name, **DROPDOWN)

    @staticmethod
    def _recording_client(connection: Connection) -> tuple[AuthzClient, bool]:
        """The environment's client if it records, else one that does (sharing its token
        method, if it has one)."""
        client = connection.client
        if client.recorder is not None:
            return client, False
        options: dict[str, Any] = {}
        if client.client_id is not None:
            options["token_provider"] = client.token_provider
        made = AuthzClient(
            base_url=client.base_url,
            dialect=AUTHZEN,
            recorder=Recorder(limit=50),
            timeout=client.timeout,
            tls=connection.settings.tls,
            **options,
        )
        return made, True

    def refresh(self) -> Authorized | Denied | None:
        """Ask for the current selection (one evaluation) and show the decision."""
        self.decision, self.exchange, self.error = None, None, None
        before = self.recorder.last
        try:
            self.decision = self._client.evaluate(
                self.action.value,
                subject=self.subjects[self.subject.value],
                resource=self.resources[self.resource.value],
            )
        finally:
            self.exchange = self._evaluation_exchange(before)
            self._show()
        return self.decision

    def _evaluation_exchange(self, before: Exchange | None) -> Exchange | None:
        for exchange in reversed(self.recorder.exchanges):
            if exchange is before:
                break
            if exchange.url.endswith(EVALUATION_PATH):
                return exchange
        return None

    # -- showing ------------------------------------------------------------------------

    def _context(self) -> str:
        context = dict(self.decision.context) if self.decision is not None else {}
        return json.dumps(context, sort_keys=True) if context else ""

    def _show(self) -> None:
        if self.decision is not None:
            status = self.decision.status
            context = self._context()
            said = f" &mdash; context <code>{html.escape(context)}</code>" if context else ""
            self.outcome.value = (
                f"<span style='background:{_COLOURS[status]};padding:2px 6px'><b>{status}</b>"
                f"</span>{said}"
            )
        elif self.error is not None:
            self._show_error()
        self.details.value = (
            ""
            if self.exchange is None
            else f"<pre>{html.escape(self._exchange_text())}</pre><b>curl</b>:"
            f"<pre style='white-space:pre-wrap'>{html.escape(self.curl)}</pre>"
        )

    def _exchange_text(self) -> str:
        exchange = self.exchange
        if exchange is None:
            return ""
        sent = json.dumps(exchange.request_body, indent=2)
        body = json.dumps(exchange.response_body) if exchange.response_body is not None else ""
        answered = exchange.status or f"no answer ({exchange.error})"
        return f"{exchange.method} {exchange.url} -> {answered}\n{sent}\n<- {body}"

    def summary(self) -> str:
        """Plain-text state (what a notebook shows without a widget frontend)."""
        lines = [
            f"AuthzenExplorer: subject {self.subject.label} · action {self.action.value}"
            f" · resource {self.resource.label}"
        ]
        if self.decision is not None:
            context = self._context()
            lines.append(f"  decision: {self.decision.status}" + f" {context}" * bool(context))
        if self.error is not None:
            lines.append(f"  failed: {self.error}")
        if self.exchange is not None:
            first = self._exchange_text().splitlines()[0]
            lines += [f"  exchange: {first}", f"  curl: {self.curl}"]
        return "\n".join(lines)

    def _subject_shown(self) -> str:
        return str(self.subject.label)


__all__ = ["AuthzenExplorer"]
