"""What the process that starts Locust may use of the recording package: its one face.

The command's process (plan, preflight, roles, driver, capacity search) starts Locust with
:data:`START_MODULE`, names the user class in a locustfile importing :data:`USERS_MODULE`,
and reads back the files the child writes. Everything else in :mod:`authzkit.loadtest.record`
runs inside the Locust process. Importing this module imports hdrh and numpy, never Locust.
"""

from __future__ import annotations

from authzkit.loadtest.record.context import (
    ProcessState,
    build_process_state,
    configured_token_provider,
)
from authzkit.loadtest.record.drift import line_fit, windows_fit
from authzkit.loadtest.record.evaluations import load_requests
from authzkit.loadtest.record.histograms import decode, values_at
from authzkit.loadtest.record.schedule import Step
from authzkit.loadtest.record.steps import CONTROL_FILE, STEPS_FILE
from authzkit.loadtest.record.subjects import LoadSubject, subjects_from_csv
from authzkit.loadtest.record.summary import LIVE_FILE, RECENT_S, build_summary
from authzkit.loadtest.record.workers import (
    MASTER_LOST,
    MASTER_SILENT_S,
    never_connected,
    read_roster,
)

# ``python -m`` this: Locust, with its import made cheaper (the child's entry point).
START_MODULE = "authzkit.loadtest.record.start"
# What a run's locustfile imports its user class from (the only module importing Locust's users).
USERS_MODULE = "authzkit.loadtest.record.users"

_LOCUSTFILE = '''"""Written by `authzkit loadtest`: the user classes it runs, from authzkit."""

from {module} import {names}

__all__ = [{quoted}]
'''
# Locust's own parser on the arguments after ``--`` (``python -c`` this, the arguments after).
CHECK_ARGUMENTS_SCRIPT = (
    "import sys\n"
    f"from {USERS_MODULE} import check_arguments\n"
    "sys.exit(check_arguments(sys.argv[1:]))\n"
)


def locustfile_text(*user_classes: str) -> str:
    """The locustfile that runs ``user_classes`` (a worker's: each one its master may name)."""
    return _LOCUSTFILE.format(
        module=USERS_MODULE,
        names=", ".join(user_classes),
        quoted=", ".join(f'"{name}"' for name in user_classes),
    )


__all__ = [
    "CHECK_ARGUMENTS_SCRIPT",
    "CONTROL_FILE",
    "LIVE_FILE",
    "MASTER_LOST",
    "MASTER_SILENT_S",
    "RECENT_S",
    "START_MODULE",
    "STEPS_FILE",
    "USERS_MODULE",
    "LoadSubject",
    "ProcessState",
    "Step",
    "build_process_state",
    "build_summary",
    "configured_token_provider",
    "decode",
    "line_fit",
    "load_requests",
    "locustfile_text",
    "never_connected",
    "read_roster",
    "subjects_from_csv",
    "values_at",
    "windows_fit",
]
