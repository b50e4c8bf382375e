"""Files the sandbox writes for another process to read: the ready file and the demo
client's private key, each written atomically (a reader never sees half a file)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_ready_file(path: Path, content: dict[str, Any]) -> None:
    """Write ``content`` so a reader never sees a half-written file (rename is atomic)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def write_private_file(path: Path, text: str) -> None:
    """Write ``text`` readable by its owner only (0600 from the first byte, atomically)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), 0o600)  # an existing partial file kept its old mode
        file.write(text)
    os.replace(partial, path)


__all__ = ["write_private_file", "write_ready_file"]
