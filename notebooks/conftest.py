"""The notebooks are tests: collected through nbval whenever pytest is pointed at them.

``pytest`` (``testpaths``), ``pytest notebooks`` and ``pytest notebooks/06_….ipynb`` all load
this file, which loads nbval (``addopts`` keeps it from loading in every pytest process) and
switches it on (``--nbval``, outputs sanitized by ``sanitize.cfg``): ``pytest tests/core``
never loads it and runs without nbval installed (the ``[sandbox]`` extra and pytest are
enough).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

NBVAL = "nbval.plugin"
pytest_plugins = (NBVAL,) if find_spec("nbval") is not None else ()

SANITIZE = Path(__file__).with_name("sanitize.cfg")


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.hasplugin(NBVAL):
        raise pytest.UsageError(
            'the notebooks are validated by nbval: pip install -c constraints.txt -e ".[dev]"'
        )
    option = config.option
    if not (option.nbval or option.nbval_lax):
        option.nbval = True
    if not option.nbval_sanitize_with:
        option.nbval_sanitize_with = str(SANITIZE)
    _kernels_over_ipc(config)


def _kernels_over_ipc(config: pytest.Config) -> None:
    """nbval's kernels talk over IPC sockets in a directory of this process's own, as the
    suite's other kernels do (``tests/support/kernels.py``): a kernel's TCP ports are picked
    free by its parent and bound later by the kernel, so two pytest-xdist workers starting
    kernels at the same moment could pick the same port, and one kernel died before it
    replied (seen once, when the notebooks ran side by side at the end of the suite)."""
    import nbval.kernel  # type: ignore[import-untyped]
    from jupyter_client.manager import KernelManager

    sockets = Path(tempfile.mkdtemp(prefix="authzkit-nbval-"))
    config.add_cleanup(lambda: shutil.rmtree(sockets, ignore_errors=True))
    numbers = itertools.count(1)

    class IpcKernelManager(KernelManager):
        def __init__(self, **options: Any) -> None:
            number = next(numbers)
            options.setdefault("transport", "ipc")
            options.setdefault("ip", str(sockets / f"kernel-{number}"))
            # its connection file too (by default a tmp*.json in /tmp that nothing removes)
            options.setdefault("connection_file", str(sockets / f"kernel-{number}.json"))
            super().__init__(**options)

        def start_kernel(self, **options: Any) -> None:
            # What a notebook keeps for its reader in the temp dir (06's and 08's work dirs
            # with their reports) is the run's to remove: the kernel's TMPDIR is this one.
            environment = options.get("env") or os.environ
            options["env"] = {**environment, "TMPDIR": str(sockets)}
            super().start_kernel(**options)

    nbval.kernel.KernelManager = IpcKernelManager
