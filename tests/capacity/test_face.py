"""The capacity search's face: every name resolves, none is private, and importing it stays
light (no Locust, gevent, pandas or matplotlib: a notebook reads a capacity run with it)."""

from __future__ import annotations

import subprocess
import sys

import authzkit.loadtest.capacity as face

HEAVY = ("pandas", "matplotlib", "locust", "gevent")


def test_every_name_of_the_face_resolves_and_none_is_private() -> None:
    assert len(face.__all__) == len(set(face.__all__))
    for name in face.__all__:
        assert not name.startswith("_") and getattr(face, name) is not None, name


def test_importing_the_face_stays_light() -> None:
    code = (
        "import sys, authzkit.loadtest.capacity\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == ""
