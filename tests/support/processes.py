"""What a run leaves running: the live processes whose command line names a path of it."""

from __future__ import annotations

from pathlib import Path


def processes_naming(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (a run's paths)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in words:
            found.append(words)
    return found


__all__ = ["processes_naming"]
