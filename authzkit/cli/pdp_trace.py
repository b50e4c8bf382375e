"""``authzkit trace FLOW --dialect authzen``: the AuthZEN flows (``evaluation``,
``evaluations``, ``search``, ``errors``) run on a PDP and written like the other traces,
each exchange's ``X-Request-ID`` and its echo shown, a Bearer token as ``$ACCESS_TOKEN``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from authzkit.client.exchanges import Exchange, Recorder
from authzkit.shared import trace
from authzkit.shared.flows import FLOWS, Step
from authzkit.wire.authzen import ACCESS_EVALUATION_ENDPOINT, EXECUTE_ALL, REQUEST_ID_HEADER
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.spec import AUTHZEN
from authzkit.wire.version import __version__

AUTHZEN_FLOWS = ("evaluation", "evaluations", "search", "errors")
ALL_FLOWS = tuple(dict.fromkeys((*FLOWS, *AUTHZEN_FLOWS)))
SEARCH_PAGE = 1  # pages of one result, so the trace shows the paging


def on_authzen(args: argparse.Namespace, settings: Any) -> bool:
    """Whether the trace runs on an AuthZEN PDP; a flow or option the dialect has no use
    for is refused (one line, exit 2) before anything starts."""
    from authzkit.shared.connection import command_speaks_authzen

    if not command_speaks_authzen(args.dialect, settings):
        if args.flow not in FLOWS:
            raise ConfigError(f"the {args.flow} flow is AuthZEN's (add --dialect authzen)")
        return False
    if args.flow not in AUTHZEN_FLOWS:
        raise ConfigError(
            f"the {args.flow} flow is the draft's; on AuthZEN choose one of "
            f"{', '.join(AUTHZEN_FLOWS)}"
        )
    for option, given in (
        ("--challenge-action", args.challenge_action),
        ("--allow-wrong-answers", args.allow_wrong_answers),
    ):
        if given:
            raise ConfigError(f"{option}: the AuthZEN flows send no challenge (drop {option})")
    return True


def _step(title: str, call: Callable[[], Any], summary: Callable[[Any], str]) -> Step:
    started = time.perf_counter()
    try:
        result = call()
    except AuthzError as exc:
        elapsed = (time.perf_counter() - started) * 1000
        return Step(
            title, exc.status, f"error {exc.status}", elapsed, expected=False, detail=str(exc)
        )
    return Step(title, 200, summary(result), (time.perf_counter() - started) * 1000)


def _expect_400(title: str, call: Callable[[], int]) -> Step:
    started = time.perf_counter()
    status = call()
    elapsed = (time.perf_counter() - started) * 1000
    outcome = "400 as the spec says" if status == 400 else f"HTTP {status}, not the spec's 400"
    return Step(title, status, outcome, elapsed, expected=status == 400)


def _decisions(outcomes: Sequence[Any]) -> str:
    return ", ".join(outcome.status for outcome in outcomes)


class PdpFlows:
    """The AuthZEN flows on ``client`` (a fresh discovery each), about ``subject``,
    ``action`` on ``resource`` (and ``actions`` in a batch)."""

    def __init__(self, client: Any, asked: dict[str, Any], actions: Sequence[str]) -> None:
        from authzkit.client.authzen import AuthzenClient

        self.client = AuthzenClient(client.pdp, client.exchange)
        self.asked, self.actions = asked, list(actions)

    def _discover(self) -> Step:
        return _step(
            "discover the PDP's metadata",
            self.client.metadata,
            lambda found: f"{'published' if found.published else 'none: default paths'}",
        )

    def _who(self) -> str:
        s, r = self.asked["subject"], self.asked["resource"]
        return f"{s['type']} {s['id']}, {self.asked['action']['name']}, {r['type']} {r['id']}"

    def evaluation(self) -> Iterator[Step]:
        yield self._discover()
        yield _step(
            f"evaluation: {self._who()}",
            lambda: self.client.evaluate(**self.asked),
            lambda outcome: outcome.status,
        )

    def evaluations(self) -> Iterator[Step]:
        yield self._discover()
        items = [{"action": action} for action in self.actions]
        defaults = {k: v for k, v in self.asked.items() if k != "action"}
        yield _step(
            f"evaluations ({EXECUTE_ALL}): {', '.join(self.actions)}",
            lambda: self.client.evaluations(items, semantic=EXECUTE_ALL, **defaults),
            _decisions,
        )

    def search(self) -> Iterator[Step]:
        yield self._discover()
        subject, resource = self.asked["subject"], self.asked["resource"]
        yield _step(
            f"resource search: {subject['id']}, {self.asked['action']['name']}, "
            f"{resource['type']} "
            f"(pages of {SEARCH_PAGE}, every page)",
            lambda: list(
                self.client.search_resources(
                    subject=subject,
                    action=self.asked["action"],
                    resource=resource["type"],
                    limit=SEARCH_PAGE,
                )
            ),
            lambda found: ", ".join(str(r["id"]) for r in found) or "no result",
        )

    def _raw(self, body: bytes, content_type: str) -> int:
        exchange = self.client.exchange
        headers = {REQUEST_ID_HEADER: exchange.request_id(), "Content-Type": content_type}
        if exchange.token_provider is not None:
            token = exchange.token_provider.token(exchange.transport)
            headers["Authorization"] = "Bearer " + token
        url = self.client.metadata().url(ACCESS_EVALUATION_ENDPOINT)
        response = exchange.transport.request(
            "POST", url, name="evaluation", headers=headers, json_body=body
        )
        return int(response.status)

    def errors(self) -> Iterator[Step]:
        yield self._discover()
        no_subject = {k: v for k, v in self.asked.items() if k != "subject"}
        yield _expect_400(
            "evaluation without a subject",
            lambda: self._raw(json.dumps(no_subject).encode(), "application/json"),
        )
        yield _expect_400(
            "evaluation sent as text/plain",
            lambda: self._raw(json.dumps(self.asked).encode(), "text/plain"),
        )


def _answer(exchange: Exchange) -> str:
    """A response's label in the diagram: the status and what it decided or found."""
    body = exchange.response_body
    if not exchange.status:
        return f"no answer ({exchange.error})"
    if isinstance(body, dict) and isinstance(body.get("decision"), bool):
        return f"{exchange.status} decision {str(body['decision']).lower()}"
    for key, what in (("evaluations", "decisions"), ("results", "results")):
        if isinstance(body, dict) and isinstance(body.get(key), list):
            return f"{exchange.status} {len(body[key])} {what}"
    return str(exchange.status)


def _request_id_line(exchange: Exchange) -> str:
    def found(headers: Any) -> str | None:
        return next((v for k, v in headers.items() if k.lower() == REQUEST_ID_HEADER.lower()), None)

    echoed = found(exchange.response_headers)
    return (
        f"{REQUEST_ID_HEADER}: sent `{found(exchange.request_headers)}`, "
        f"{f'echoed `{echoed}`' if echoed else 'not echoed'}"
    )


def render(
    flow: str, steps: Sequence[Step], exchanges: Sequence[Exchange], *, where: str
) -> trace.Trace:
    """The Markdown of one AuthZEN flow: steps, a sequence diagram, each exchange."""
    out = [
        f"# Flow `{flow}` (AuthZEN)",
        "",
        f"Recorded by authzkit {__version__} against {where}. Each call carries its own "
        f"{REQUEST_ID_HEADER}, shown with the PDP's echo; a Bearer token appears as "
        "`$ACCESS_TOKEN`: export it to replay a curl command.",
        "",
        *trace.steps_section(steps),
    ]
    arrows = [
        trace.Arrow("PDP", f"{e.method} {urlsplit(e.url).path}", _answer(e)) for e in exchanges
    ]
    diagram = trace.mermaid("PEP (authzkit)", ("PDP",), arrows)
    out += ["", "## Sequence", "", "```mermaid", diagram, "```", "", "## Exchanges", ""]
    for number, exchange in enumerate(exchanges, start=1):
        section = trace.exchange_section(number, exchange, str(exchange.status or "no answer"))
        out += [*section[:2], _request_id_line(exchange), "", *section[2:]]
    return trace.Trace("\n".join(out))


def _asked(connection: Any, action: str | None) -> tuple[dict[str, Any], list[str]]:
    """Subject, action and resource (the world's first, or ``AUTHZKIT_*``), and the
    actions of a batch (the world's, or that action)."""
    from authzkit.cli import authzen

    given = argparse.Namespace(
        subject=None,
        subject_type=None,
        subject_property=None,
        resource_id=None,
        resource_type=None,
        resource_property=None,
    )
    asked = {
        "subject": authzen.subject_of(connection, given),
        "action": {"name": authzen.action_of(connection, action)},
        "resource": authzen.resource_of(connection, given),
    }
    world = getattr(connection.sandbox, "world", None) if connection.sandbox else None
    actions = list(getattr(world, "actions", ())) or [asked["action"]["name"]]
    return asked, actions


def trace_on_pdp(args: argparse.Namespace, settings: Any) -> tuple[trace.Trace, list[Step]]:
    """Run the AuthZEN flow ``args.flow``: its Markdown and its steps."""
    from authzkit.shared.connection import connect
    from authzkit.shared.extras import require

    recorder = Recorder()
    started: dict[str, Any] = {"dialect": AUTHZEN}
    if settings.uses_sandbox:
        require("sandbox", "authzkit trace without AUTHZKIT_BASE_URL")
        if args.key_size is not None:
            started["key_size"] = args.key_size
    elif args.key_size is not None:
        raise ConfigError("--key-size applies to the sandbox authzkit starts (drop --key-size)")
    settings = replace(settings.with_actions(plain=args.action, challenge=None), dialect=AUTHZEN)
    with connect(settings, client_options={"recorder": recorder}, **started) as connection:
        asked, actions = _asked(connection, args.action)
        recorder.clear()
        flows = PdpFlows(connection.client.authzen, asked, actions)
        steps = list(getattr(flows, args.flow)())
        document = render(args.flow, steps, recorder.exchanges, where=connection.where)
    return document, steps


__all__ = ["ALL_FLOWS", "AUTHZEN_FLOWS", "PdpFlows", "on_authzen", "render", "trace_on_pdp"]
