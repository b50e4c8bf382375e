"""Who a load-test user acts as: a subject session token, a resource, the answers.

Read from a ``--subjects`` CSV (a real environment: the tester's own subjects), or minted
from a sandbox's world (one per subject and resource it owns). Free of locust: the command
checks a subjects file with it before any process starts, and the preflight asks once per
distinct subject.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from authzkit.client.answers import TOTP_SECRET, answers_from_credentials
from authzkit.wire.errors import ConfigError
from authzkit.wire.redact import Secret
from authzkit.wire.spec import CREDENTIAL_KINDS, DEFAULT_RESOURCE_TYPE

if TYPE_CHECKING:
    from authzkit.sandbox.world import World

# Columns of a --subjects CSV that hold challenge answers ("totp_secret" = base32 secret
# from which the current code is generated; "totp" = a fixed code, rarely useful).
ANSWER_COLUMNS = (*CREDENTIAL_KINDS, TOTP_SECRET)
REQUIRED_COLUMNS = ("subject_token", "resource_id")


@dataclass(frozen=True)
class LoadSubject:
    """Who a load-test user acts as: a session token, a resource it may act on, its answers
    (a row of ``--subjects``, or a sandbox subject with one of its resources)."""

    token: Secret = field(repr=False)
    resource_id: str
    resource_type: str = DEFAULT_RESOURCE_TYPE
    answers: Mapping[str, Secret] = field(default_factory=dict, repr=False)
    label: str = ""


def subjects_from_csv(path: str | Path) -> list[LoadSubject]:
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
        raise ConfigError(
            f"--subjects {path}: the header lacks {', '.join(missing)} "
            f"(columns: subject_token, resource_id, resource_type, "
            f"{', '.join(ANSWER_COLUMNS)})"
        )
    subjects = []
    for number, raw in enumerate(rows, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
        if not row.get("subject_token") or not row.get("resource_id"):
            raise ConfigError(
                f"--subjects {path}:{number}: subject_token and resource_id must not be empty"
            )
        subjects.append(
            LoadSubject(
                token=Secret(row["subject_token"]),
                resource_id=row["resource_id"],
                resource_type=row.get("resource_type") or DEFAULT_RESOURCE_TYPE,
                answers={k: Secret(row[k]) for k in ANSWER_COLUMNS if row.get(k)},
                label=f"{path.name}:{number}",
            )
        )
    if not subjects:
        raise ConfigError(f"--subjects {path}: no subject rows")
    return subjects


def subjects_from_world(world: World, mint: Callable[[str], str]) -> list[LoadSubject]:
    """One subject per (sandbox subject, resource it owns); ``mint`` gives session tokens."""
    subjects = []
    for entry in world.subjects.values():
        owned = world.owned_by(entry.id)
        if not owned:
            continue
        token = Secret(mint(entry.id))
        answers = answers_from_credentials(entry.credentials)
        subjects += [
            LoadSubject(
                token=token,
                resource_id=resource.id,
                resource_type=resource.type,
                answers=answers,
                label=entry.id,
            )
            for resource in owned
        ]
    if not subjects:
        raise ConfigError("the sandbox world has no subject that owns a resource")
    return subjects


__all__ = [
    "ANSWER_COLUMNS",
    "REQUIRED_COLUMNS",
    "LoadSubject",
    "subjects_from_csv",
    "subjects_from_world",
]
