"""When each request reached the server's socket: the kernel's time, not the server's.

Why: the sandbox stamps a request when its handler starts, after its event loop has woken,
read and parsed it. That adds the server's own delays, up to a millisecond or more at
p99, and they land on every generator alike. A generator whose arrivals are 20 µs from the
grid then reads as late as the server is slow. ``tcpdump`` on the loopback stamps
each request's first segment as the kernel hands it to the server's socket: the arrival
itself.

``WireCapture.start`` runs ``tcpdump`` (Debian's) on ``lo`` for the sandbox's port, keeping
only segments whose payload begins ``POST`` and the server's resets (a BPF filter in the
kernel). ``stop`` returns the first segment of each authorize request the server did not
refuse, on ``time.monotonic_ns``. Where tcpdump is missing or may not capture (it needs
CAP_NET_RAW), ``start`` says why and the benchmark judges by the sandbox's stamps. The pcap
reading is pure (``tests/test_peer_benchmark.py``).
"""

from __future__ import annotations

import shutil
import signal
import struct
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from peer_processes import kill_child, stop_child

SNAPSHOT = 192  # bytes kept of each segment: the headers and the request line
BUFFER_KIB = 32_768  # the capture's kernel buffer: no segment dropped at 6,000/s
READY_WAIT_S = 10
SETTLED_S = 0.2  # the capture file unchanged this long: tcpdump has caught up
SETTLE_WAIT_S = 5
CLOCK_STEP_NS = 1_000_000  # the wall clock moved this much against the monotonic: refused
POST = 0x504F5354  # "POST", the payload's first four bytes
_NANO_MAGIC = 0xA1B23C4D  # a pcap file with nanosecond stamps
_LINK_HEADER = {0: 4, 1: 14, 113: 16, 276: 20}  # link type -> its header's length
_RST = 0x04  # TCP's reset flag
# A reset this soon after a request refused it (the kernel answers a write to a closed
# socket at once); a later one ends a connection whose requests were served.
REFUSED_WITHIN_NS = 10_000_000


def segments(pcap: bytes, request_line: bytes, server_port: int) -> list[int]:
    """The stamps (ns, the capture's clock) of the first segment of every request whose
    payload begins with ``request_line``, in the order captured, but for those the server
    refused: a request written to a connection the server had closed meanwhile is answered
    with a reset at once and never reaches it (the client writes it again). A segment seen
    again (a retransmission: same source port and sequence number) counts once."""
    if len(pcap) < 24:
        raise ValueError("not a pcap file: shorter than its header")
    magic, link = struct.unpack_from("<I", pcap, 0)[0], struct.unpack_from("<I", pcap, 20)[0]
    if magic != _NANO_MAGIC:
        raise ValueError(f"not a nanosecond pcap file (magic {magic:#x})")
    if link not in _LINK_HEADER:
        raise ValueError(f"link type {link} is not one this reads")
    skip, offset = _LINK_HEADER[link], 24
    found: list[int | None] = []
    seen: set[tuple[int, bytes]] = set()
    last_of: dict[int, int] = {}  # client port: the index of its latest request
    while offset + 16 <= len(pcap):
        seconds, nanos, kept, _ = struct.unpack_from("<IIII", pcap, offset)
        frame = pcap[offset + 16 : offset + 16 + kept]
        offset += 16 + kept
        ip = frame[skip:]
        if len(ip) < 20 or ip[0] >> 4 != 4:
            continue
        tcp = ip[(ip[0] & 0x0F) * 4 :]
        if len(tcp) < 20:
            continue
        source, destination = struct.unpack_from("!HH", tcp, 0)
        stamp = seconds * 1_000_000_000 + nanos
        if source == server_port and tcp[13] & _RST:  # the server refused the latest
            refused = last_of.pop(destination, None)
            if refused is not None and stamp - (found[refused] or 0) <= REFUSED_WITHIN_NS:
                found[refused] = None
            continue
        key = (source, tcp[4:8])  # source port, sequence number
        if tcp[(tcp[12] >> 4) * 4 :].startswith(request_line) and key not in seen:
            seen.add(key)
            last_of[source] = len(found)
            found.append(stamp)
    return [stamp for stamp in found if stamp is not None]


def monotonic_offset() -> int:
    """The wall clock minus the monotonic one, now (ns): a wall-clock stamp less this is
    on ``time.monotonic_ns``."""
    return time.time_ns() - time.monotonic_ns()


@dataclass
class WireCapture:
    """A running ``tcpdump`` writing ``pcap``; :meth:`stop` ends it and reads it."""

    process: subprocess.Popen[bytes]
    pcap: Path
    request_line: bytes
    port: int
    offset_ns: int  # wall clock minus monotonic as the capture began

    @classmethod
    def start(
        cls,
        folder: Path,
        port: int,
        path: str,
        preexec: Callable[[], None] | None,
    ) -> WireCapture | str:
        """The capture of requests to ``port`` whose request line is ``POST <path>``, or
        why there is none (tcpdump missing, not allowed to capture, not listening)."""
        tcpdump = shutil.which("tcpdump")
        if tcpdump is None:
            return "tcpdump is not installed (Debian: apt-get install tcpdump)"
        pcap = folder / "arrivals.pcap"
        log = folder / "tcpdump.log"
        command = [tcpdump, "-i", "lo", "-n", "-s", str(SNAPSHOT), "-B", str(BUFFER_KIB)]
        # Each segment handed over and written as it comes (buffered, the last second's
        # would be lost when the capture is stopped; see stop).
        command += ["--immediate-mode", "-U", "--time-stamp-precision=nano", "-w", str(pcap)]
        command += [
            f"(tcp dst port {port} and tcp[((tcp[12:1] & 0xf0) >> 2):4] = {POST:#x}) or "
            f"(tcp src port {port} and tcp[tcpflags] & tcp-rst != 0)"
        ]
        with log.open("wb") as errors:
            process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=errors, preexec_fn=preexec
            )
        deadline = time.monotonic() + READY_WAIT_S
        while b"listening on" not in log.read_bytes():
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                said = log.read_text(errors="replace").strip().splitlines()
                return f"tcpdump cannot capture here ({said[-1] if said else 'no output'})"
            time.sleep(0.02)
        return cls(process, pcap, f"POST {path} ".encode(), port, monotonic_offset())

    def stop(self) -> list[int]:
        """End the capture; each request's arrival on ``time.monotonic_ns``. Raises
        ``RuntimeError`` when the kernel dropped a segment or the wall clock was stepped
        (the stamps would not be every arrival, or not on the run's clock)."""
        self._caught_up()
        stop_child(self.process, signal.SIGINT, "tcpdump")
        said = self.pcap.with_name("tcpdump.log").read_text(errors="replace")
        dropped = [line for line in said.splitlines() if "dropped by kernel" in line]
        if dropped and not dropped[0].startswith("0 "):
            raise RuntimeError(f"the capture lost segments: {dropped[0]}")
        moved = monotonic_offset() - self.offset_ns
        if abs(moved) > CLOCK_STEP_NS:
            raise RuntimeError(f"the wall clock moved {moved / 1e6:+.1f} ms during the capture")
        stamps = segments(self.pcap.read_bytes(), self.request_line, self.port)
        return [stamp - self.offset_ns - moved // 2 for stamp in stamps]

    def _caught_up(self) -> None:
        """Wait until tcpdump has written what the kernel handed it: its file has not grown
        for :data:`SETTLED_S` (at most :data:`SETTLE_WAIT_S`). Stopped, it writes no more,
        and on a busy machine it can be a segment or two behind."""
        deadline = time.monotonic() + SETTLE_WAIT_S
        size = -1
        while time.monotonic() < deadline:
            now = self.pcap.stat().st_size if self.pcap.exists() else 0
            if now == size:
                return
            size = now
            time.sleep(SETTLED_S)

    def kill(self) -> None:
        kill_child(self.process)


def why_not_captured(folder: Path) -> str | None:
    """None when a capture starts here (one is started and ended at once), else why not."""
    folder.mkdir(parents=True, exist_ok=True)
    capture = WireCapture.start(folder, 9, "/", None)  # the discard port: nothing comes
    if isinstance(capture, str):
        return capture
    capture.stop()
    return None


__all__ = ["WireCapture", "monotonic_offset", "segments", "why_not_captured"]
