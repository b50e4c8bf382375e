"""A failing test's exchanges with the sandbox, written like ``authzkit trace`` writes a
flow: a Mermaid sequence diagram, then each request and response with its curl command.

The sandbox masked every secret as it recorded; here each masked secret of a request becomes
the shell variable the client's recorder would write (``$ACCESS_TOKEN``, ``$SUBJECT_TOKEN``
…, see :mod:`authzkit.client.exchanges`), so the curl commands replay once those are exported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from authzkit.client.exchanges import Exchange, placeholders
from authzkit.shared import trace
from authzkit.shared.trace import Arrow
from authzkit.testing import authzen

if TYPE_CHECKING:
    from authzkit.sandbox.received import Received
    from authzkit.testing.view import Request

_PARTICIPANTS = {"token": "Token", "keys": "Discovery", "authorize": "Authorization"}
_PARTICIPANTS |= {name: "Authorization" for name in authzen.ENDPOINTS}
_PARTICIPANTS[authzen.METADATA] = "Discovery"


def _header(name: str, value: str) -> str:
    if name.lower() == "authorization":
        return "Basic $CLIENT_BASIC" if value.startswith("Basi") else "Bearer $ACCESS_TOKEN"
    if name.lower() == "cookie":
        return "$COOKIE"
    return value


def exchange_of(received: Received) -> Exchange:
    """The :class:`~authzkit.client.exchanges.Exchange` of a recorded request, secrets as shell
    variables in the request and masked in the response."""
    return Exchange(
        method=received.method,
        url=received.url,
        name=received.endpoint,
        status=received.status,
        elapsed_ms=received.elapsed_ms,
        started_at=received.started_at,
        request_headers={k: _header(k, v) for k, v in received.request_headers.items()},
        request_body=placeholders(received.request_body),
        response_headers=dict(received.response_headers),
        response_body=received.response_body,
    )


def _participant(request: Request) -> str:
    return _PARTICIPANTS.get(request.endpoint, "Service")


def mermaid(requests: Sequence[Request]) -> str:
    """A Mermaid ``sequenceDiagram`` of the requests (the code under test on the left)."""
    arrows = [
        Arrow(_participant(r), f"{r.method} {r.path}", f"{r.status} {r.outcome}") for r in requests
    ]
    return trace.mermaid(
        "Code under test", ("Token", "Discovery", "Authorization", "Service"), arrows
    )


def render(test: str, requests: Sequence[Request], *, where: str) -> trace.Trace:
    """The Markdown of what the sandbox received during ``test``."""
    out = [
        f"# Test `{test}`",
        "",
        f"What the sandbox at {where} received during the test. Secrets appear as shell "
        "variables (`$ACCESS_TOKEN`, `$SUBJECT_TOKEN`, …) or masked.",
        "",
    ]
    if not requests:
        return trace.Trace("\n".join([*out, "No request reached the sandbox.", ""]))
    out += ["```mermaid", mermaid(requests), "```", "", "## Exchanges", ""]
    for number, request in enumerate(requests, start=1):
        exchange = exchange_of(request.received)
        out += trace.exchange_section(number, exchange, f"{exchange.status} {request.outcome}")
    return trace.Trace("\n".join(out))


__all__ = ["exchange_of", "mermaid", "render"]
