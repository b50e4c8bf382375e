"""Notebooks executed by nbclient over a kernel reached through IPC sockets in a private dir.

A kernel's TCP ports are picked free by the parent and bound later by the kernel: two
pytest-xdist workers starting kernels at the same moment can pick the same ports, and a test
then reads another test's notebook. Sockets in the test's own directory cannot collide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def execute_notebook(notebook: Any, *, cwd: Path, sockets: Path, **options: Any) -> None:
    """Run every cell of ``notebook`` (an nbformat node) in place, in the working directory
    ``cwd``, the kernel's sockets in ``sockets`` (a directory of the test's own); ``options``
    go to :class:`nbclient.NotebookClient`.

    A cell's stdout is kept as ONE output, as a reader sees it: the kernel flushes its
    stdout on a timer, so on a busy machine two ``print`` calls of one cell could arrive as
    two outputs, and a test reading the text across them saw a line break that is not
    there (notebook 05's "SPEC types provoked … missing …" failed two full runs in nine
    with the suite's three workers)."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    sockets.mkdir(parents=True, exist_ok=True)
    manager = KernelManager(
        kernel_name="python3",
        transport="ipc",
        ip=str(sockets / "kernel"),
        connection_file=str(sockets / "kernel.json"),  # else a tmp*.json left in /tmp
    )
    options.setdefault("coalesce_streams", True)
    client = NotebookClient(
        notebook,
        km=manager,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        **options,
    )
    client.execute()
