"""The package surface: a complete sorted __all__, and an import that stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

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


FORMER_HOMES = {
    "authzkit.config": "authzkit.wire.config",
    "authzkit.errors": "authzkit.wire.errors",
    "authzkit.jwe": "authzkit.wire.jwe",
    "authzkit.jwe.keys": "authzkit.wire.jwe.keys",
    "authzkit.spec": "authzkit.wire.spec",
    "authzkit.clock": "authzkit.wire.clock",
    "authzkit.openapi": "authzkit.wire.openapi",
    "authzkit.transport": "authzkit.client.transport",
    "authzkit.token": "authzkit.client.token",
    "authzkit.authorize": "authzkit.client.authorize",
    "authzkit.recorder": "authzkit.client.recorder",
    "authzkit.connection": "authzkit.shared.connection",
    "authzkit.consent": "authzkit.shared.consent",
    "authzkit.policy": "authzkit.shared.matrix.plan",
    "authzkit.matrix": "authzkit.shared.matrix",
    "authzkit.options": "authzkit.shared.options",
    # renamed to say what they hold (kept for a release)
    "authzkit.check.model": "authzkit.check.results",
    "authzkit.loadtest.report": "authzkit.loadtest.reporting",
    "authzkit.sandbox.app": "authzkit.sandbox.endpoints",
    "authzkit.sandbox.server": "authzkit.sandbox.embedded",
    "authzkit.sandbox.service": "authzkit.sandbox.decisions",
    "authzkit.sandbox.serving": "authzkit.sandbox.server_thread",
    "authzkit.shared.policy": "authzkit.shared.matrix.plan",
}


def test_moved_names_stay_importable_from_their_former_module() -> None:
    """The child-process helpers moved from the sandbox's process module to the wire layer
    (both sides use them); their former home still offers them, for a release."""
    from authzkit.sandbox import process
    from authzkit.wire import children

    for name in ("PACKAGE_ROOT", "child_env", "free_port", "stop_process"):
        assert getattr(process, name) is getattr(children, name), name


def test_a_moved_module_is_the_same_module_under_its_former_name() -> None:
    import importlib

    for former, home in FORMER_HOMES.items():
        assert importlib.import_module(former) is importlib.import_module(home), former
    from authzkit.jwe import KeyPair  # type: ignore[import-not-found]  # a former home, at run time

    import authzkit
    from authzkit.client import AuthzClient, EncryptedSolution

    assert AuthzClient is authzkit.AuthzClient
    assert EncryptedSolution.__module__ == "authzkit.client.facade"
    assert KeyPair.__module__.startswith("authzkit.wire.jwe")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("authzkit.nothing_of_the_kind")
