"""The search's channel when Locust exits under it: the one line says why, in Locust's own
words when it refused its command line, and nothing else of Locust's output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from authzkit.loadtest.capacity.channel import SearchFailed, StepChannel
from authzkit.loadtest.child import OUTPUT_FILE


def exited(code: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", f"raise SystemExit({code})"])
    process.wait(timeout=30)
    return process


def test_a_locust_that_refused_its_command_line_is_named_in_its_own_words(
    tmp_path: Path,
) -> None:
    (tmp_path / OUTPUT_FILE).write_text(
        "[2026-12-03 13:00:00] host/INFO/locust.main: Starting Locust 2.47.0\n"
        "usage: locust [options] [UserClass ...]\n"
        "locust: error: unrecognized arguments: --warm-up 0.3\n"
    )
    channel = StepChannel(tmp_path, exited(2), sleep=lambda _: None)
    with pytest.raises(SearchFailed) as failed:
        channel.wait("ready", None, 5, "every process to be ready")
    assert str(failed.value) == (
        "locust exited (code 2) while the search waited for every process to be ready: "
        "locust: error: unrecognized arguments: --warm-up 0.3: see locust.out and locust.log "
        f"in {tmp_path}"
    )


def test_without_an_error_line_it_points_at_the_files_only(tmp_path: Path) -> None:
    (tmp_path / OUTPUT_FILE).write_text("Starting Locust\nsubject token abc123 refused\n")
    channel = StepChannel(tmp_path, exited(1), sleep=lambda _: None)
    with pytest.raises(SearchFailed) as failed:
        channel.wait("step", 0, 5, "step 1's tally")
    message = str(failed.value)
    assert message.startswith("locust exited (code 1) while the search waited for step 1's tally: ")
    assert "abc123" not in message and message.endswith(f"locust.log in {tmp_path}")
