"""What both explorers are made of: the subject / action / resource dropdowns above the
outcome and the exchange, one request per change, a failure shown instead of raised, and
the static copy's heading; each explorer asks and shows in its own dialect.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from authzkit.client.exchanges import Exchange
from authzkit.client.facade import AuthzClient
from authzkit.widgets.display import TextFallback

DROPDOWN = {"style": {"description_width": "70px"}, "layout": {"width": "480px"}}


class ExplorerFrame(TextFallback):
    """The parts the explorers share; a subclass sets the dropdowns, ``_client`` and
    ``_own_client``, and defines :meth:`refresh` and ``_show``."""

    subject: w.Dropdown
    action: w.Dropdown
    resource: w.Dropdown
    outcome: w.HTML
    details: w.HTML
    exchange: Exchange | None
    error: str | None
    _client: AuthzClient
    _own_client: bool

    def refresh(self) -> Any:
        raise NotImplementedError

    def _show(self) -> None:
        raise NotImplementedError

    def _lay_out(self, css_class: str) -> None:
        """Stack the dropdowns over the outcome and the exchange, ask on every change, and
        ask once now."""
        for dropdown in (self.subject, self.action, self.resource):
            dropdown.observe(lambda _change: self._guarded(self.refresh), names="value")
        self.widget = w.VBox([self.subject, self.action, self.resource, self.outcome, self.details])
        self.widget.add_class(css_class)
        self._guarded(self.refresh)

    def _show_error(self) -> None:
        self.outcome.value = f"<b>&#10008; {html.escape(str(self.error))}</b>"

    @property
    def curl(self) -> str:
        """The curl command of the last request sent ("" before one was sent)."""
        return self.exchange.curl() if self.exchange is not None else ""

    def _scrubbed(self, text: str) -> str:
        """``text`` without the secrets this explorer holds (default: it holds none)."""
        return text

    def _guarded(self, call: Callable[[], Any]) -> Any:
        """Run a callback's work; any exception is shown instead of raised."""
        try:
            return call()
        except Exception as exc:
            self.error = self._scrubbed(f"{type(exc).__name__}: {exc}")
            self._show()
            return None

    def _subject_shown(self) -> str:
        return str(self.subject.value)

    def summary_html(self) -> str:
        """The explorer as a reader of an HTML export sees it: the selection, the outcome,
        the exchange and its curl, with no dropdown to pick from."""
        chosen = (
            f"subject <b>{html.escape(self._subject_shown())}</b> &middot; action "
            f"<code>{html.escape(str(self.action.value))}</code> &middot; resource "
            f"{html.escape(str(self.resource.label))}"
        )
        return f"<p>{chosen}</p><div>{self.outcome.value}</div>{self.details.value}"

    def close(self) -> None:
        """Close the recording client this explorer made (never the environment's)."""
        if self._own_client:
            self._client.close()


__all__ = ["DROPDOWN", "ExplorerFrame"]
