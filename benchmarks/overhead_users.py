"""Locustfile of ``benchmarks/locust_overhead.py``: authzkit's users next to bare ones.

``BareHttpUser`` / ``BareFastHttpUser`` post the very bytes ``AuthorizeUser`` sends (same
body, same headers, a token fetched once) with nothing of authzkit in the request path: a
run of bare classes only also detaches authzkit's request listener (the µs histograms and
the timeline), which importing authzkit's users registers for every class of the process.
What authzkit's users cost is then measured against Locust alone, recording included.
``--cpu-file`` records this process's CPU time (user + sys, from ``resource``), its request
count and each row's over a window that opens one second after all users are spawned
(start-up, imports and the one-time token/world calls stay outside) and closes when the test
stops. Besides the overhead benchmark, ``generator_capacity.py`` runs every user class here.
"""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

import gevent
from locust import HttpUser, events, task
from locust.contrib.fasthttp import FastHttpUser

from authzkit.client.authorize import build_body, request_hash
from authzkit.client.transport import encode_body
from authzkit.loadtest.record.listeners import _record_latency
from authzkit.loadtest.record.users import (  # noqa: F401 - the users under test, selected by name
    AuthorizeUser,
    ChallengeUser,
    FastAuthorizeUser,
    FastChallengeUser,
    OpenAuthorizeUser,
    shared,
)
from authzkit.wire.spec import AUTHORIZE_PATH

WARM_UP_S = 1.0
_window: dict[str, Any] = {}


@events.init_command_line_parser.add_listener
def _arguments(parser: Any) -> None:
    parser.add_argument("--cpu-file", default="", include_in_web_ui=False,
                        help="write CPU seconds and requests of the measured window here")


def _mark(environment: Any) -> dict[str, Any]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_s": usage.ru_utime + usage.ru_stime,
            "requests": environment.stats.total.num_requests,
            "rows": {f"{method} {name}": entry.num_requests
                     for (name, method), entry in environment.stats.entries.items()}}


@events.spawning_complete.add_listener
def _open_window(user_count: int, **_: Any) -> None:
    environment = _window["environment"]
    gevent.spawn_later(WARM_UP_S, lambda: _window.setdefault("start", _mark(environment)))


@events.init.add_listener
def _remember(environment: Any, **_: Any) -> None:
    _window["environment"] = environment
    chosen = getattr(environment.parsed_options, "user_classes", None) or []
    if chosen and all(name.startswith("Bare") for name in chosen):
        environment.events.request.remove_listener(_record_latency)  # Locust alone


@events.test_stop.add_listener
def _close_window(environment: Any, **_: Any) -> None:
    start = _window.get("start")
    path = environment.parsed_options.cpu_file
    if start is None or not path:
        return
    end = _mark(environment)
    rows = {row: count - start["rows"].get(row, 0) for row, count in end["rows"].items()}
    Path(path).write_text(json.dumps({"cpu_s": end["cpu_s"] - start["cpu_s"],
                                      "requests": end["requests"] - start["requests"],
                                      "rows": rows}))


class _Bare:
    """The same POST as AuthorizeUser, prebuilt once, sent with no authzkit code involved."""

    environment: Any
    host: str | None

    def on_start(self) -> None:
        state = shared(self.environment, self.host)  # the same subjects and credentials
        subject = state.subjects[0]
        token = state.token_provider.token()  # once, outside the measured path
        body = build_body(state.action, resource_id=subject.resource_id,
                          resource_type=subject.resource_type,
                          subject_token=subject.token.reveal(), user_agent="authzkit-locust",
                          request_hash=request_hash("locust user 0"))
        self.body = encode_body(body)
        self.headers = {"Accept": "application/json", "Content-Type": "application/json",
                        "Authorization": "Bearer " + token}


class BareHttpUser(_Bare, HttpUser):
    @task
    def authorize(self) -> None:
        self.client.post(AUTHORIZE_PATH, data=self.body, headers=self.headers, name="authorize")


class BareFastHttpUser(_Bare, FastHttpUser):
    @task
    def authorize(self) -> None:
        # geventhttpclient sends bytes as they are (Locust's annotation names str and dict only)
        self.client.post(AUTHORIZE_PATH, data=self.body, headers=self.headers,  # type: ignore[arg-type]
                         name="authorize")


