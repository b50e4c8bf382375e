"""A plain authorize the schedule writes itself: ended at a wake of the schedule when its
answer is a 200 (one row, timed from its intended start to the answer's arrival), handed
to a greenlet of its own otherwise (a refusal judged, a timeout a failed row, a call let go
read as usual), and counted among the calls in flight throughout. In a child process (the
suite never imports gevent), against a server that answers as each case says."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
REFUSED = b'HTTP/1.1 403 Forbidden\r\ncontent-length: 29\r\n\r\n{"type": "srn:error:denied"}\n'
SILENT = b""  # no answer at all
CLOSE = b"close"  # the connection closed after the first answer, a new one answered
HELD_S = 0.3  # how long the child's schedule does not wake after the write

CHILD = """
from gevent import monkey; monkey.patch_all()
import json, sys, time
import gevent
from dataclasses import dataclass
import requests
from authzkit.client.transport import RequestsTransport
from authzkit.loadtest.record.collect import COLLECTOR
from authzkit.loadtest.record.timing import OpenAuthorize

@dataclass
class Token:
    value: str = "t"
    serial: int = 1

class Provider:
    credentials = None
    def access_token(self, transport=None): return Token()
    def fresh(self): return Token()

def case(url, how, held):
    rows, told = [], []

    class Calls:
        def answered(self, sent, answer):
            told.append("answered")
            sent.tell(answer)  # its row at once (held rows: test_held_rows)
        def go_on(self, sent, outcome):
            told.append(f"go_on:{outcome}")
            def finish():
                try:
                    response = call.finish(sent, outcome)
                    told.append(f"finished:{None if response is None else response.status}")
                except Exception as exc:
                    told.append(f"failed:{type(exc).__name__}")
            gevent.spawn(finish)

    call = OpenAuthorize(
        base_url=url, request={"resource_id": "r1", "subject_token": "s"}, action="read",
        token_provider=Provider(), transport=RequestsTransport(requests.Session(), timeout=1),
        fire=lambda **row: rows.append(row), timeout=0.2 if how == "late" else 2, tls=None,
        secrets=list)
    call(None)  # a first call opens the kept-alive connection
    rows.clear()
    now = time.perf_counter()
    COLLECTOR.collect(now + 0.01, now)  # the schedule wakes again soon
    intended = time.perf_counter() - 0.005
    wired = []
    sent = call.send_now(intended, lambda at, on: wired.append(on - at), Calls())
    gevent.sleep(held)  # no wake of the schedule meanwhile
    before = list(told)
    now, woke_at = time.perf_counter(), time.time()
    if how == "let_go":
        COLLECTOR.release()
    else:
        COLLECTOR.collect(now + 0.01, now)
    gevent.sleep(0.2)
    COLLECTOR.release()  # a call sent again meanwhile reads its answer as usual
    gevent.sleep(0.3)
    return {
        "sent": sent, "wired": wired, "before": before, "told": told, "held_s": held,
        "woke_at": woke_at,
        "rows": [{"ms": r["response_time"], "service_ms": r["context"]["authzkit_service_ms"],
                  "answered_at": r["context"].get("authzkit_answered_at"),
                  "failure": None if r["exception"] is None else str(r["exception"])}
                 for r in rows],
    }

cases, held = json.loads(sys.argv[1]), float(sys.argv[2])
print(json.dumps({name: case(url, how, held) for name, (url, how) in cases.items()}))
"""

# Each case: how the server answers a connection's second request, and how the child's
# schedule ends the call that sent it.
CASES = {
    "ok": (OK, "wake"),
    "refused": (REFUSED, "wake"),
    "late": (SILENT, "late"),
    "closed": (CLOSE, "wake"),
    "let_go": (OK, "let_go"),
}


def _serve(listening: socket.socket, second: bytes) -> None:
    """Answer a connection's first request with a 200 and its second with ``second``
    (``SILENT``: never; ``CLOSE``: close it, then answer on a new one), a few ms after it
    came."""
    answers = [OK, second] if second != CLOSE else [OK]
    while answers:
        try:
            conn, _ = listening.accept()
        except OSError:
            return
        with conn:
            for answer in answers:
                if not conn.recv(65536):
                    return
                threading.Event().wait(0.01)
                if answer:
                    conn.sendall(answer)
            if second != CLOSE:
                threading.Event().wait(2)
                return
        second, answers = OK, [OK]  # the kept-alive connection closed: a new one


@pytest.fixture(scope="module")
def seen() -> Iterator[dict[str, dict[str, Any]]]:
    """Every case, run one after the other by one child process, as it saw them."""
    servers, urls = [], {}
    for name, (second, how) in CASES.items():
        listening = socket.create_server(("127.0.0.1", 0))
        servers.append(listening)
        threading.Thread(target=_serve, args=(listening, second), daemon=True).start()
        urls[name] = (f"http://127.0.0.1:{listening.getsockname()[1]}", how)
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, json.dumps(urls), str(HELD_S)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        yield json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        for listening in servers:
            listening.close()


def test_a_200_ends_at_the_wake_timed_from_its_intended_start_to_its_arrival(
    seen: dict[str, Any],
) -> None:
    seen = seen["ok"]
    assert seen["sent"] is True and len(seen["wired"]) == 1
    assert seen["before"] == []  # nothing ended between the schedule's wakes
    assert seen["told"] == ["answered"]  # no greenlet was needed
    (row,) = seen["rows"]
    assert row["failure"] is None
    # timed when the answer came (~10 ms), not when the wake read it (HELD_S later)
    assert row["service_ms"] < seen["held_s"] * 1000 / 2
    assert seen["woke_at"] - row["answered_at"] > seen["held_s"] / 2  # and counted then
    assert row["ms"] >= row["service_ms"] + 4  # from the intended start, 5 ms before


def test_a_refusal_goes_on_in_a_greenlet_and_is_returned_for_judging(seen: dict[str, Any]) -> None:
    seen = seen["refused"]
    assert seen["told"] == ["go_on:0", "finished:403"]
    (row,) = seen["rows"]
    assert row["service_ms"] < seen["held_s"] * 1000 / 2


def test_a_call_past_its_time_at_a_wake_is_a_failed_row(seen: dict[str, Any]) -> None:
    seen = seen["late"]
    assert seen["told"] == ["go_on:2", "failed:TransportError"]
    (row,) = seen["rows"]
    assert row["failure"] is not None and "TimeoutError" in row["failure"]


def test_a_connection_the_server_closed_while_idle_is_replaced(seen: dict[str, Any]) -> None:
    seen = seen["closed"]
    assert seen["told"] == ["go_on:0", "finished:None"]  # read once more, on a new one
    (row,) = seen["rows"]
    assert row["failure"] is None


def test_a_call_let_go_reads_its_answer_as_usual(seen: dict[str, Any]) -> None:
    seen = seen["let_go"]
    assert seen["told"] == ["go_on:1", "finished:None"]
    (row,) = seen["rows"]
    assert row["failure"] is None


POOL = """
from gevent import monkey; monkey.patch_all()
import json
import gevent
from authzkit.loadtest.record.prompt import PromptPool

pool, seen = PromptPool(2), {}
pool.hold(); pool.hold()
seen["full_when_two_held"] = pool.full()
pool.let_go()
seen["len_after_let_go"] = len(pool)
ended = []
pool.adopt(lambda: (gevent.sleep(0.05), ended.append(1)))
seen["len_after_adopt"] = len(pool)
seen["joined"] = pool.join(timeout=2)
seen["adopted_ran"] = ended == [1]
seen["len_at_end"] = len(pool)
print(json.dumps(seen))
"""


def test_held_calls_take_places_in_the_pool_until_they_end() -> None:
    done = subprocess.run([sys.executable, "-c", POOL], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "full_when_two_held": True,
        "len_after_let_go": 1,
        "len_after_adopt": 1,
        "joined": True,
        "adopted_ran": True,
        "len_at_end": 0,
    }
