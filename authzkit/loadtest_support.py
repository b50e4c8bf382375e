"""What the load-test users need that has nothing to do with Locust itself.

Subjects (from a sandbox's world or a ``--subjects`` CSV), ``--wait-time`` parsing and the
``--max-p95-ms`` / ``--max-failure-ratio`` verdict live here, free of locust, so they can
be tested in-process and reused by the CLI (``authzkit/loadtest.py`` is the only module
that imports locust, whose gevent monkey-patching must never reach a test run or a kernel).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from authzkit.errors import ConfigError
from authzkit.redact import Secret

DEFAULT_RESOURCE_TYPE = "srn:resource:account"
DEFAULT_ACTION = "show_account_balance_public"
DEFAULT_CHALLENGE_ACTION = "transfer_funds"
# Columns of a --subjects CSV that hold challenge answers ("totp_secret" = base32 secret
# from which the current code is generated; "totp" = a fixed code, rarely useful).
ANSWER_COLUMNS = ("pin", "login_password", "totp", "totp_secret")
REQUIRED_COLUMNS = ("subject_token", "resource_id")
# Subject session tokens minted by the sandbox must outlive any run.
SANDBOX_SESSION_TTL = 24 * 3600


@dataclass(frozen=True)
class Subject:
    """One subject the users act for: session token, a resource it may act on, its answers."""

    token: Secret = field(repr=False)
    resource_id: str
    resource_type: str = DEFAULT_RESOURCE_TYPE
    answers: Mapping[str, Secret] = field(default_factory=dict, repr=False)
    label: str = ""


def subjects_from_csv(path: str | Path) -> list[Subject]:
    """Subjects from a CSV with a header: ``subject_token``, ``resource_id``, optional
    ``resource_type`` and answer columns (``pin``, ``login_password``, ``totp_secret``…)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            header = [c.strip() for c in reader.fieldnames or []]
            rows = list(reader)
    except FileNotFoundError as exc:
        raise ConfigError(f"--subjects {path}: no such file") from exc
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ConfigError(f"--subjects {path}: the header lacks {', '.join(missing)} "
                          f"(columns: subject_token, resource_id, resource_type, "
                          f"{', '.join(ANSWER_COLUMNS)})")
    subjects = []
    for number, raw in enumerate(rows, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
        if not row.get("subject_token") or not row.get("resource_id"):
            raise ConfigError(f"--subjects {path}:{number}: subject_token and resource_id "
                              f"must not be empty")
        subjects.append(Subject(
            token=Secret(row["subject_token"]), resource_id=row["resource_id"],
            resource_type=row.get("resource_type") or DEFAULT_RESOURCE_TYPE,
            answers={k: Secret(row[k]) for k in ANSWER_COLUMNS if row.get(k)},
            label=f"{path.name}:{number}"))
    if not subjects:
        raise ConfigError(f"--subjects {path}: no subject rows")
    return subjects


def subjects_from_world(world: Mapping[str, Any], mint: Callable[[str], str]) -> list[Subject]:
    """One subject per (sandbox subject, resource it owns); ``mint`` gives session tokens.

    The world's ``totp`` credential is a base32 secret, so it becomes ``totp_secret``.
    """
    subjects = []
    for entry in world.get("subjects", []):
        owned = [r for r in world.get("resources", []) if r.get("owner") == entry.get("id")]
        if not owned:
            continue
        token = Secret(mint(entry["id"]))
        answers = {("totp_secret" if kind == "totp" else kind): Secret(str(value))
                   for kind, value in (entry.get("credentials") or {}).items()}
        for resource in owned:
            subjects.append(Subject(token=token, resource_id=str(resource["id"]),
                                    resource_type=str(resource.get("type")
                                                      or DEFAULT_RESOURCE_TYPE),
                                    answers=answers, label=str(entry["id"])))
    if not subjects:
        raise ConfigError("the sandbox world has no subject that owns a resource")
    return subjects


def resource_server_credentials(world: Mapping[str, Any]) -> tuple[str, Secret]:
    """The first resource_server client of a sandbox world (demo values)."""
    for client in world.get("clients", []):
        if client.get("resource_server"):
            return str(client["client_id"]), Secret(str(client["client_secret"]))
    raise ConfigError("the sandbox world has no resource_server client")


def parse_wait_time(text: str | float | None) -> tuple[float, float]:
    """``"0.5-2"`` → ``(0.5, 2.0)``; ``"1"`` → ``(1.0, 1.0)``; empty → zero (throughput mode)."""
    if text is None or str(text).strip() == "":
        return 0.0, 0.0
    low, sep, high = str(text).strip().partition("-")
    try:
        bounds = (float(low), float(high) if sep else float(low))
    except ValueError:
        raise ConfigError(f"--wait-time must be seconds like 1 or a range like 0.5-2, "
                          f"got {text!r}") from None
    if bounds[0] < 0 or bounds[1] < bounds[0]:
        raise ConfigError(f"--wait-time needs 0 <= low <= high, got {text!r}")
    return bounds


def threshold_problems(*, p95_ms: float, failure_ratio: float, max_p95_ms: float | None,
                       max_failure_ratio: float | None) -> list[str]:
    """Readable lines for every threshold the run broke (empty when it passed)."""
    problems = []
    if max_p95_ms is not None and p95_ms > max_p95_ms:
        problems.append(f"p95 {p95_ms:.0f} ms > --max-p95-ms {max_p95_ms:g}")
    if max_failure_ratio is not None and failure_ratio > max_failure_ratio:
        problems.append(f"failure ratio {failure_ratio:.4f} > --max-failure-ratio "
                        f"{max_failure_ratio:g}")
    return problems


__all__ = [
    "DEFAULT_ACTION", "DEFAULT_CHALLENGE_ACTION", "DEFAULT_RESOURCE_TYPE", "SANDBOX_SESSION_TTL",
    "Subject", "parse_wait_time", "resource_server_credentials", "subjects_from_csv",
    "subjects_from_world", "threshold_problems",
]
