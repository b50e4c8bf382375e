"""Each side's face: the names its ``__init__`` offers (``__all__``), held like httpx's
``test_exported_members``: each once, every one resolves, none private, and importing the face
stays light (what a name needs is imported when the name is first used)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

# face -> libraries its import must not bring (the names resolve lazily)
FACES = {
    "authzkit": ("pandas", "matplotlib", "starlette", "uvicorn", "locust", "gevent"),
    "authzkit.client": ("pandas", "starlette", "locust", "gevent"),
    "authzkit.check": ("pandas", "matplotlib", "locust", "gevent"),
    "authzkit.sandbox": ("pandas", "matplotlib", "locust", "gevent"),
    "authzkit.loadtest": ("pandas", "matplotlib", "locust", "gevent"),
    "authzkit.loadtest.read": ("pandas", "matplotlib", "locust", "gevent"),
    "authzkit.loadtest.capacity": ("pandas", "matplotlib", "locust", "gevent"),
    "authzkit.wire.jwe": ("pandas", "starlette", "locust", "gevent"),
    "authzkit.cli": ("pandas", "matplotlib", "starlette", "locust", "gevent"),
}


@pytest.mark.parametrize("face", sorted(FACES))
def test_every_name_of_a_face_resolves_and_none_is_private(face: str) -> None:
    module = importlib.import_module(face)
    names = list(module.__all__)
    assert len(names) == len(set(names)), face  # ruff keeps them sorted
    for name in names:
        assert not name.startswith("_"), (face, name)
        assert getattr(module, name) is not None, (face, name)


@pytest.mark.parametrize("face", sorted(FACES))
def test_importing_a_face_stays_light(face: str) -> None:
    heavy = FACES[face]
    code = f"import sys, {face}\nprint(','.join(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "", (face, done.stdout)
