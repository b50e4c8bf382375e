"""The package surface: a complete sorted __all__, and an import that stays light."""

from __future__ import annotations

import subprocess
import sys

import authzkit


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert authzkit.__all__ == sorted(authzkit.__all__)
    for name in authzkit.__all__:
        assert getattr(authzkit, name) is not None, name


def test_design_names_are_exported() -> None:
    for name in (
        "AuthzClient",
        "Sandbox",
        "AuthzError",
        "Authorized",
        "ChallengeRequired",
        "connect",
        "request_hash",
    ):
        assert name in authzkit.__all__


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        authzkit.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_stays_light() -> None:
    heavy = ("starlette", "uvicorn", "pandas", "locust", "gevent", "matplotlib", "ipywidgets")
    code = (
        "import sys, authzkit\n"
        "authzkit.AuthzClient; authzkit.AuthzError; authzkit.connect\n"
        f"loaded = [m for m in {heavy!r} if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "", f"heavy modules imported: {result.stdout.strip()}"


def test_the_client_layer_offers_the_facade() -> None:
    """``authzkit.client`` is the client layer's package; its face offers the facade's names
    (the deprecated former homes and the import hook's end: tests/core/test_deprecation.py)."""
    from authzkit.client import AuthzClient, EncryptedSolution

    assert AuthzClient is authzkit.AuthzClient
    assert EncryptedSolution.__module__ == "authzkit.client.facade"
