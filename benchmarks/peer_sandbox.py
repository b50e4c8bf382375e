"""``authzkit sandbox``, run as the command runs it, in a process that keeps when every
authorize request arrived and was answered, and writes them to a JSON file when it stops.

    python benchmarks/peer_sandbox.py ARRIVALS.json [authzkit sandbox options]

The sandbox already stamps each authorize request (``time.monotonic_ns``, as it enters
service) for its measured service time (``--service-time-us``); it keeps the newest
10,000 in its process. Here it keeps them all and, on SIGTERM or Ctrl-C, writes
``{"arrived_ns": [...], "answered_ns": [...]}``: nothing of the sandbox changes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

KEPT = 5_000_000  # requests kept (the sandbox's own record keeps 10,000)


def keep_arrivals(out: Path) -> None:
    """Make every sandbox of this process keep all its served requests, and write them to
    ``out`` as it stops."""
    from authzkit.sandbox import embedded, service_time

    service_time.SERVED_KEPT = KEPT  # read as each record is made
    stop = embedded.Sandbox.stop

    def stop_and_write(sandbox: Any) -> None:
        if sandbox.running:
            served = [s for s in sandbox.served() if s.endpoint == "authorize"]
            out.write_text(
                json.dumps(
                    {
                        "arrived_ns": [s.arrived_ns for s in served],
                        "answered_ns": [s.answered_ns for s in served],
                    }
                ),
                encoding="utf-8",
            )
        stop(sandbox)

    setattr(embedded.Sandbox, "stop", stop_and_write)  # noqa: B010 - a method replaced


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: peer_sandbox.py ARRIVALS.json [authzkit sandbox options]", file=sys.stderr)
        return 2
    keep_arrivals(Path(argv[0]))
    from authzkit.cli.main import main as authzkit

    return authzkit(["sandbox", *argv[1:]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
