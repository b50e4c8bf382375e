"""The pure parts of ``benchmarks/peer_k6.py`` (the side-by-side comparison with k6): each
arrival's distance from the even grid, drops told from lateness, k6's summary read, the
script it runs, and its bad input refused. The benchmark itself runs in ``.ci/run``."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
PERIOD_NS = 5_000_000  # 200/s
ORIGIN_NS = 7_000_000_123
JITTER_US = (0, 10, 10, 10, 40)  # after its slot, in turn: the grid fits the 10s, not the mean


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(BENCHMARKS))  # peer_ladder imports its neighbours by name
grid = _load("peer_grid")
k6_tool = _load("peer_k6_tool")
ladder = _load("peer_ladder")
wire = _load("peer_wire")
peer = _load("peer_k6")


def arrivals(slots: range, *, late_us: dict[int, int] | None = None) -> list[int]:
    """An arrival per slot, :data:`JITTER_US` after it in turn, some later still."""
    late = late_us or {}
    return [
        ORIGIN_NS + k * PERIOD_NS + JITTER_US[k % 5] * 1000 + late.get(k, 0) * 1000 for k in slots
    ]


def judge(times: list[int]) -> Any:
    return grid.punctuality(times, 200, ORIGIN_NS + 10 * PERIOD_NS, ORIGIN_NS + 990 * PERIOD_NS)


def test_arrivals_on_schedule_read_as_their_jitter_whatever_the_phase() -> None:
    found = judge(arrivals(range(1000)))
    assert (found.arrivals, found.skipped) == (980, 0)
    assert found.deviation_p50_us == pytest.approx(0, abs=0.5)
    assert found.deviation_p99_us == pytest.approx(30, abs=0.5)
    shifted = grid.punctuality(
        [t + 1_234_567 for t in arrivals(range(1000))],
        200,
        ORIGIN_NS + 10 * PERIOD_NS,
        ORIGIN_NS + 990 * PERIOD_NS,
    )
    assert shifted.deviation_p99_us == pytest.approx(found.deviation_p99_us, abs=0.5)


def test_a_dropped_call_is_a_drop_not_every_later_call_late() -> None:
    dropped = {300, 301, 302, 700}
    found = judge([t for k, t in enumerate(arrivals(range(1000))) if k not in dropped])
    assert found.skipped == 4
    assert found.deviation_p99_us == pytest.approx(30, abs=0.5)
    assert found.lateness_p99_us < 100


def test_a_late_burst_is_late_not_dropped() -> None:
    """Slots 500-519 held back and sent together at slot 520's time (a stalled generator
    catching up): no slot is left empty, and the late tail shows."""
    held = {k: (520 - k) * PERIOD_NS // 1000 for k in range(500, 520)}
    found = judge(arrivals(range(1000), late_us=held))
    assert found.skipped == 0
    assert found.lateness_p99_us > 5 * PERIOD_NS / 1000


def test_a_window_without_arrivals_is_refused() -> None:
    with pytest.raises(ValueError, match="0 arrivals in the window"):
        grid.punctuality(arrivals(range(10)), 200, ORIGIN_NS + 10**12, ORIGIN_NS + 2 * 10**12)


def test_lateness_counts_from_the_intended_start_the_grid_fitting_would_hide() -> None:
    """Every arrival 40 µs plus its jitter after its start: the fitted grid reads only the
    jitter, the lateness from the known origin reads the 40 µs too."""
    times = [t + 40_000 for t in arrivals(range(1000))]
    window = (ORIGIN_NS + 10 * PERIOD_NS, ORIGIN_NS + 990 * PERIOD_NS)
    found = grid.lateness(times, ORIGIN_NS, 200, *window, sent=1000)
    assert isinstance(found, grid.Lateness) and found.arrivals == 980
    assert found.p50_us == pytest.approx(40 + sorted(JITTER_US)[2], abs=0.5)
    assert found.p99_us == pytest.approx(40 + max(JITTER_US), abs=0.5)
    assert grid.punctuality(times, 200, *window).deviation_p50_us < 10
    held = arrivals(range(1000), late_us={k: 3 * PERIOD_NS // 1000 for k in range(500, 520)})
    late = grid.lateness(held, ORIGIN_NS, 200, *window, sent=1000)
    assert isinstance(late, grid.Lateness) and late.p99_us >= 3 * PERIOD_NS / 1000


def test_lateness_is_not_guessed_when_arrivals_and_starts_differ_in_number() -> None:
    window = (ORIGIN_NS, ORIGIN_NS + 1000 * PERIOD_NS)
    said = grid.lateness(arrivals(range(999)), ORIGIN_NS, 200, *window, sent=1000)
    assert said == "999 arrivals for 1,000 starts sent: not matched"


def _rung(*, arrivals: int, slots: int, late_p99_us: float) -> Any:
    return grid.Punctuality(arrivals, slots, slots - arrivals, 10.0, 100.0, late_p99_us)


def test_a_rung_is_on_schedule_only_with_every_slot_served_and_a_punctual_tail() -> None:
    assert ladder.on_schedule(_rung(arrivals=8000, slots=8000, late_p99_us=4_999))
    assert ladder.on_schedule(_rung(arrivals=7998, slots=8000, late_p99_us=100))  # edges
    assert not ladder.on_schedule(_rung(arrivals=7997, slots=8000, late_p99_us=100))
    assert not ladder.on_schedule(_rung(arrivals=8000, slots=8000, late_p99_us=5_001))


def test_the_ladder_stops_after_two_misses_in_a_row_and_keeps_the_highest_on_schedule() -> None:
    assert not ladder.ladder_ends([True, False])
    assert not ladder.ladder_ends([True, False, True, False])
    assert not ladder.ladder_ends([False])
    assert ladder.ladder_ends([True, True, False, False])
    assert ladder.ladder_ends([False, False])
    tried = [(1000, True), (1500, True), (2000, False), (3000, True), (4000, False)]
    assert ladder.maximum(tried) == 3000
    assert ladder.maximum([(1000, False), (1500, False)]) == 0
    assert ladder.max_line(4000, 3000) == (
        "on-schedule maximum on one core: k6 4,000/s, authzkit 3,000/s "
        "(M/N = 0.75x, target >= 1.00x)"
    )


# What k6 v1.1.0's handleSummary gave for a run that dropped iterations (trimmed).
K6_DATA = {
    "metrics": {
        "http_reqs": {"type": "counter", "values": {"count": 147, "rate": 73.4}},
        "http_req_failed": {"type": "rate", "values": {"fails": 145, "rate": 0.01, "passes": 2}},
        "dropped_iterations": {"type": "counter", "values": {"count": 54, "rate": 27.0}},
        "http_req_duration": {
            "type": "trend",
            "values": {"med": 1.61, "p(99)": 288.2, "max": 293.4},
        },
        "vus_max": {"type": "gauge", "values": {"value": 3, "min": 3, "max": 3}},
    }
}


def test_k6s_summary_gives_requests_failures_drops_p99_and_vus() -> None:
    assert k6_tool.k6_summary(K6_DATA) == k6_tool.K6Summary(
        requests=147, failed=2, dropped=54, p99_ms=288.2, vus_max=3
    )
    without_drops = {"metrics": {k: v for k, v in K6_DATA["metrics"].items() if "dropped" not in k}}
    assert k6_tool.k6_summary(without_drops).dropped == 0


def test_the_k6_script_sends_the_request_authzkit_sends_at_the_rate() -> None:
    body = b'{"action":{"name":"show \\"it\\""},"subject":{"token":"t.o.k"}}'
    request = k6_tool.AuthorizeRequest(
        "http://127.0.0.1:9/authorize", {"Authorization": "Bearer abc", "Accept": "x"}, body
    )
    script = k6_tool.k6_script(request, 1000, 14, Path("/tmp/summary.json"))
    lines = {
        line.split(" = ")[0]: line.split(" = ", 1)[1]
        for line in script.splitlines()
        if " = " in line
    }
    assert json.loads(lines["const BODY"].rstrip(";")).encode() == body
    assert json.loads(lines["const URL"].rstrip(";")) == request.url
    assert '{ headers: {"Authorization": "Bearer abc", "Accept": "x"} }' in lines["const PARAMS"]
    for setting in (
        "executor: 'constant-arrival-rate'",
        "rate: 1000,",
        "duration: '14s'",
        "preAllocatedVUs: 50,",
        "maxVUs: 1000,",
    ):
        assert setting in script


def _run(generator: str, cpu_us: float, lag_p50_us: float = 40.0) -> Any:
    """A run of 1,000 arrivals at 1,000/s costing ``cpu_us`` each."""
    grid_ = peer.Punctuality(1000, 1000, 0, 10.0, 100.0, 50.0)
    reported = {"lag_p50_us": lag_p50_us, "lag_p99_us": 300.0}
    late = peer.Lateness(1000, lag_p50_us - 5, 250.0) if generator == "authzkit" else None
    return peer.Run(generator, 1000, 1.0, cpu_us / 1e3, 1000, grid_, 1.0, reported, late=late)


def test_a_ratio_is_the_median_of_the_rounds_ratios_not_of_their_medians() -> None:
    """Rounds cost 100, 200, 100 µs for k6 and 90, 150, 120 for authzkit: the rounds'
    ratios are 0.90, 0.75, 1.20 (median 0.90x), where the medians' ratio would read 1.20x."""
    runs = {
        ("k6", 1000): [_run("k6", cpu) for cpu in (100, 200, 100)],
        ("authzkit", 1000): [
            _run("authzkit", cpu, lag) for cpu, lag in ((90, 40), (150, 60), (120, 50))
        ],
    }
    assert "| 1,000/s | 100 / 120 µs (0.90x) |" in peer.table(runs, [1000])[2]
    lines = peer.ratios(runs, [1000])
    assert lines[0].startswith("authzkit / k6, CPU per request: 1,000/s 0.90x (target")
    assert "its own schedule lag p50 50 / p99 300 µs" in lines[-1]
    assert "at the server, p50 45 / p99 250 µs" in lines[-1]


@pytest.mark.parametrize(
    ("argument", "said"),
    [
        (["--rates", "200,fast"], "--rates: must be whole numbers"),
        (["--seconds", "0"], "--seconds"),
        (["--rounds", "0"], "--rounds"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_anything_starts(
    argument: list[str], said: str
) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "peer_k6.py"), *argument],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert said in done.stderr.splitlines()[-1]
    assert done.stdout == ""


def _segment(
    stamp_ns: int,
    payload: bytes = b"",
    *,
    port: int = 40_000,
    seq: int = 1,
    reset: bool = False,
) -> bytes:
    """One captured frame on ``lo`` (Ethernet, IPv4, TCP), its pcap record header first: a
    client's segment to the server (port 8080), or with ``reset`` the server's reset."""
    ports = (8080, port) if reset else (port, 8080)
    flags = 0x04 if reset else 0x18
    tcp = struct.pack("!HHIIBBHHH", *ports, seq, 0, 5 << 4, flags, 512, 0, 0)
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 0, 0, 64, 6, 0, bytes(4), bytes(4)
    )
    frame = bytes(12) + b"\x08\x00" + ip + tcp + payload
    seconds, nanos = divmod(stamp_ns, 1_000_000_000)
    return struct.pack("<IIII", seconds, nanos, len(frame), len(frame)) + frame


def _pcap(*frames: bytes, magic: int = 0xA1B23C4D, link: int = 1) -> bytes:
    return struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, link) + b"".join(frames)


LINE = b"POST /access/v1/authorize "


def test_the_capture_keeps_each_requests_first_segment_once_with_its_kernel_stamp() -> None:
    found = wire.segments(
        _pcap(
            _segment(5_000_000_123, LINE + b"HTTP/1.1\r\n", seq=10),
            _segment(5_000_400_000, b"POST /token HTTP/1.1\r\n", seq=20),  # not authorize
            _segment(5_005_000_456, LINE + b"HTTP/1.1\r\n", seq=30),
            _segment(5_005_300_000, LINE + b"HTTP/1.1\r\n", seq=30),  # a retransmission
            _segment(5_006_000_000, LINE + b"HTTP/1.1\r\n", port=40_001, seq=30),  # another
        ),
        LINE,
        8080,
    )
    assert found == [5_000_000_123, 5_005_000_456, 5_006_000_000]


def test_a_request_the_server_reset_did_not_arrive_and_its_resend_did() -> None:
    found = wire.segments(
        _pcap(
            _segment(1_000, LINE, port=40_000, seq=1),
            _segment(2_000, LINE, port=40_001, seq=1),  # on a connection closed meanwhile
            _segment(2_100, port=40_001, reset=True),  # refused at once
            _segment(2_500, LINE, port=40_002, seq=1),  # written again, a new connection
            _segment(3_000, LINE, port=40_000, seq=99),
            _segment(3_000 + 2 * wire.REFUSED_WITHIN_NS, port=40_000, reset=True),  # long after
        ),
        LINE,
        8080,
    )
    assert found == [1_000, 2_500, 3_000]


@pytest.mark.parametrize(
    ("pcap", "said"),
    [
        (b"short", "shorter than its header"),
        (_pcap(magic=0xA1B2C3D4), "not a nanosecond pcap"),
        (_pcap(link=105), "link type 105"),
    ],
)
def test_a_capture_this_cannot_read_is_refused_by_name(pcap: bytes, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        wire.segments(pcap, b"POST / ", 8080)


def test_a_real_capture_stamps_each_request_between_its_send_and_its_return(
    tmp_path: Path,
) -> None:
    """tcpdump and the kernel: requests sent over loopback are each found once, stamped on
    the monotonic clock inside the send that wrote them."""
    import socket
    import time

    if wire.why_not_captured(tmp_path / "probe") is not None:
        pytest.skip(f"tcpdump cannot capture here: {wire.why_not_captured(tmp_path / 'p2')}")
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        capture = wire.WireCapture.start(tmp_path, port, "/access/v1/authorize", None)
        assert not isinstance(capture, str)
        sends = []
        try:
            with socket.create_connection(("127.0.0.1", port)) as client:
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as HTTP clients
                peer, _ = server.accept()
                for index in range(5):
                    path = "/access/v1/authorize" if index != 2 else "/token"
                    before = time.monotonic_ns()
                    client.sendall(f"POST {path} HTTP/1.1\r\n\r\n".encode())
                    sends.append((before, time.monotonic_ns(), path))
                    time.sleep(0.01)
                wanted = sum(len(f"POST {path} HTTP/1.1\r\n\r\n") for *_, path in sends)
                read = b""
                while len(read) < wanted:  # read, as a server does: closed unread, it resets
                    read += peer.recv(65536)
                peer.close()
            stamps = capture.stop()
        finally:
            capture.kill()
    authorize = [(before, after) for before, after, path in sends if path != "/token"]
    assert len(stamps) == len(authorize) == 4
    for stamp, (before, after) in zip(stamps, authorize, strict=True):
        assert before - 1_000_000 <= stamp <= after + 1_000_000  # the clocks' offset, within 1 ms
