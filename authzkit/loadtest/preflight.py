"""The preflight of ``authzkit loadtest``: one authorize per distinct subject, before any load.

Why: a run whose every call is refused would flood somebody's environment with failures.
Every subject refused for good: exit 2; some: their rows dropped; anything else is left
to the run. Counted apart, in ``preflight.json`` (docs/internals.md, "The preflight").
"""

from __future__ import annotations

import argparse
import csv
import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from authzkit.client.exchanges import Recorder
from authzkit.client.facade import AuthzClient
from authzkit.client.outcomes import Authorized, ChallengeRequired
from authzkit.loadtest.record.face import LoadSubject, ProcessState, build_process_state
from authzkit.wire.actions import ActionSetting, action_setting
from authzkit.wire.config import Settings
from authzkit.wire.errors import (
    AccessTokenRejectedError,
    AuthzError,
    ClientNotPermittedError,
    TlsError,
    TokenRequestError,
    TransportError,
    UnauthenticatedError,
    UnauthorizedError,
)

CAP = 20  # distinct subjects asked at most; the others are kept unasked
USER_AGENT = "authzkit-preflight"
EXPECTED = {"plain": "authorized", "challenge": "challenge_required"}
UNFIXABLE_TYPES = frozenset(
    {
        "srn:error:unauthorized",
        "srn:error:unauthenticated",
        "srn:error:invalid_client",
        "srn:error:not_resource_server",
        "invalid_client",
        "unauthorized_client",
    }
)
UNFIXABLE_ERRORS = (
    TokenRequestError,
    TransportError,
    ClientNotPermittedError,
    AccessTokenRejectedError,
    UnauthenticatedError,
    UnauthorizedError,
)
# Failures of the client or the host, not of one subject: after one, nobody else is asked.
NOT_PER_SUBJECT = (
    TokenRequestError,
    TransportError,
    ClientNotPermittedError,
    AccessTokenRejectedError,
)
SHOWN_ROWS = 8
NO_ANSWER = "no answer"  # what a check got when nothing answered (refused, unreachable)


def unfixable(error: AuthzError) -> bool:
    """True for an answer a load run cannot change (a 5xx never is: it may pass)."""
    if error.status is not None and error.status >= 500:
        return False
    return isinstance(error, UNFIXABLE_ERRORS) or error.type in UNFIXABLE_TYPES


@dataclass(frozen=True)
class SubjectCheck:
    """What the preflight call of one distinct subject got; ``rows`` are the subject rows
    sharing it (``subjects.csv:3``, or a sandbox subject's id)."""

    rows: tuple[str, ...]
    answer: str  # challenge_required, authorized, the service's error type, or a class name
    status: int | None
    verdict: str  # pass, refused (unfixable) or failed (left for the run)


def _rows_text(rows: Sequence[str]) -> str:
    shown = ", ".join(rows[:SHOWN_ROWS])
    return shown + (f" and {len(rows) - SHOWN_ROWS} more" if len(rows) > SHOWN_ROWS else "")


def _answer_text(check: SubjectCheck) -> str:
    return check.answer + (f" (HTTP {check.status})" if check.status else "")


@dataclass(frozen=True)
class Preflight:
    """The preflight of one run: its action, one check per distinct subject asked."""

    kind: str
    action: str
    checks: tuple[SubjectCheck, ...]
    unasked: tuple[str, ...] = ()
    requests: Mapping[str, int] = field(default_factory=dict)

    @property
    def fatal(self) -> bool:
        """Every subject asked was refused: a load run would fail every call."""
        return bool(self.checks) and all(c.verdict == "refused" for c in self.checks)

    @property
    def dropped(self) -> tuple[str, ...]:
        """The rows to leave out of the run: refused while others passed."""
        if self.fatal:
            return ()
        return tuple(row for c in self.checks if c.verdict == "refused" for row in c.rows)

    def _by_answer(self, verdict: str) -> list[str]:
        grouped: dict[str, list[str]] = {}
        for check in self.checks:
            if check.verdict == verdict:
                grouped.setdefault(_answer_text(check), []).extend(check.rows)
        return [f"{answer} for {_rows_text(rows)}" for answer, rows in grouped.items()]

    def error_message(self) -> str:
        """The one message of a fatal preflight: action, rows, the service's type, a hint."""
        setting = action_setting(self.kind)
        hints = {_hint(c.answer, self.action, setting) for c in self.checks}
        return (
            f"preflight: {self.kind} action {self.action!r} failed for every subject "
            f"asked: {'; '.join(self._by_answer('refused'))}. No load was sent. "
            + " ".join(sorted(hints))
        )

    def warnings(self) -> list[str]:
        """Lines about the rows dropped and the failures left for the run."""
        lines = []
        if self.dropped:
            lines.append(
                f"preflight: dropping subject rows refused {self.action!r}: "
                f"{'; '.join(self._by_answer('refused'))}"
            )
        lines += [
            f"preflight: kept, for the run to measure: {text}" for text in self._by_answer("failed")
        ]
        return lines

    def summary(self, where: str = "preflight.json") -> str:
        """One line: what was asked, what came back, how many requests (kept apart)."""
        answers = Counter(c.answer for c in self.checks)
        got = ", ".join(f"{n} {answer}" for answer, n in answers.items()) or "nothing"
        sent = sum(self.requests.values())
        rows = ", ".join(f"{name} {n}" for name, n in self.requests.items())
        unasked = f" ({len(self.unasked)} more unasked)" if self.unasked else ""
        return (
            f"preflight: {len(self.checks)} subjects{unasked} x {self.action!r}: {got}; "
            f"{sent} requests ({rows}), not in the run's statistics -> {where}"
        )

    def to_json(self) -> dict[str, Any]:
        """``preflight.json``: no secret (rows are labels, answers are types)."""
        return {
            "kind": self.kind,
            "action": self.action,
            "expected": EXPECTED[self.kind],
            "fatal": self.fatal,
            "dropped": list(self.dropped),
            "unasked": list(self.unasked),
            "requests": dict(self.requests),
            "checks": [asdict(c) for c in self.checks],
        }


def _hint(answer: str, action: str, setting: ActionSetting) -> str:
    """What to look at, for one kind of refusal."""
    choose = f"the action with {setting.option} NAME or {setting.variable}"
    if answer == "srn:error:unauthorized":
        return (
            f"Does the service know {action!r}, and may these subjects perform it? Choose {choose}."
        )
    if answer in ("authorized", "challenge_required"):
        return f"The {setting.kind} action must be {setting.meaning}: choose {choose}."
    if answer == "srn:error:unauthenticated":
        return "The subject tokens are no valid sessions: refresh the --subjects file."
    if answer == "srn:error:not_resource_server":
        return "The client is not flagged resource_server."
    if answer == NO_ANSWER:
        return (
            "No answer from the service: check AUTHZKIT_BASE_URL (and AUTHZKIT_AUTH_URL "
            "or the issuer) and the network."
        )
    return (
        "The token endpoint refused the client: check AUTHZKIT_CLIENT_ID, "
        "AUTHZKIT_CLIENT_SECRET (or the client key) and the token endpoint settings."
    )


def _distinct(subjects: Sequence[LoadSubject]) -> list[list[LoadSubject]]:
    """Subjects grouped by what a call sends (token, resource), in file order."""
    groups: dict[tuple[str, str, str], list[LoadSubject]] = {}
    for subject in subjects:
        key = (subject.token.reveal(), subject.resource_id, subject.resource_type)
        groups.setdefault(key, []).append(subject)
    return list(groups.values())


def _judge(
    rows: tuple[str, ...], kind: str, result: Authorized | ChallengeRequired | AuthzError
) -> SubjectCheck:
    if isinstance(result, AuthzError):
        answer = result.type or (NO_ANSWER if result.status is None else type(result).__name__)
        return SubjectCheck(
            rows, answer, result.status, "refused" if unfixable(result) else "failed"
        )
    answer = "challenge_required" if isinstance(result, ChallengeRequired) else "authorized"
    status = 403 if isinstance(result, ChallengeRequired) else 200
    # The other outcome than the scenario's can be no passing phase of the service either.
    return SubjectCheck(rows, answer, status, "pass" if answer == EXPECTED[kind] else "refused")


def run_preflight(shared: ProcessState, *, kind: str, cap: int = CAP) -> Preflight:
    """Ask once per distinct subject of ``shared`` (at most ``cap``) with its ``kind``
    action; a failure of the client or the host ends the asking (it would repeat)."""
    action = shared.action if kind == "plain" else shared.challenge_action
    groups = _distinct(shared.subjects)
    recorder = Recorder(limit=None)
    client = AuthzClient(
        base_url=shared.base_url,
        auth_url=shared.auth_url,
        timeout=shared.timeout,
        token_provider=shared.token_provider,
        keys=shared.keys,
        recorder=recorder,
        tls=shared.tls,
    )
    checks: list[SubjectCheck] = []
    stop: AuthzError | None = None
    try:
        for group in groups[:cap]:
            rows = tuple(s.label for s in group)
            if stop is not None:
                checks.append(_judge(rows, kind, stop))
                continue
            subject = group[0]
            try:
                result: Authorized | ChallengeRequired | AuthzError = client.authorize(
                    action,
                    resource_id=subject.resource_id,
                    resource_type=subject.resource_type,
                    subject_token=subject.token,
                    user_agent=USER_AGENT,
                )
            except TlsError:
                raise  # the service answered, TLS failed: its one line, before any load
            except AuthzError as exc:
                result = exc
                stop = exc if isinstance(exc, NOT_PER_SUBJECT) else None
            checks.append(_judge(rows, kind, result))
    finally:
        client.close()
    unasked = tuple(s.label for group in groups[cap:] for s in group)
    return Preflight(
        kind, action, tuple(checks), unasked, dict(Counter(e.name for e in recorder.exchanges))
    )


def write_subjects_without(source: Path, rows: Sequence[str], target: Path) -> int:
    """Copy the ``--subjects`` CSV ``source`` to ``target`` without the ``rows`` labelled
    ``name:number`` (numbered as :func:`~authzkit.loadtest.record.subjects.subjects_from_csv`
    numbers them); ``target`` is readable by its owner only (it holds session tokens).
    Returns the number of subject rows kept."""
    numbers = {
        int(label.rpartition(":")[2]) for label in rows if label.rpartition(":")[0] == source.name
    }
    with source.open(newline="", encoding="utf-8") as handle:
        records = [r for r in csv.reader(handle) if r]  # blank lines: skipped, unnumbered
    kept = [r for number, r in enumerate(records[1:], start=2) if number not in numbers]
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([records[0], *kept])
    return len(kept)


def check_before_load(
    settings: Settings,
    *,
    host: str,
    kind: str,
    actions: Mapping[str, str | None],
    user_class: str,
    subjects: Path | None,
    options: Mapping[str, str],
    out: Path,
    private: Path,
) -> tuple[Preflight, Path | None]:
    """The command's preflight: the users' state built as a Locust process builds it (from
    ``settings``, ``host``, ``subjects`` and the users' credential ``options``), asked, and
    written to ``out/preflight.json``. Returns it and the subjects file locust gets: a copy
    without the dropped rows in ``private`` (never the run directory: it holds session
    tokens), else ``subjects``. Printing is the caller's."""
    namespace = argparse.Namespace(
        subjects=str(subjects or ""),
        wait_time="0",
        action=actions.get("plain") or "",
        challenge_action=actions.get("challenge") or "",
        user_classes=[user_class],
        **dict(options),
    )
    result = run_preflight(build_process_state(namespace, host, settings), kind=kind)
    (out / "preflight.json").write_text(
        json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8"
    )
    if result.dropped and subjects is not None:
        target = private / subjects.name
        write_subjects_without(subjects, result.dropped, target)
        return result, target
    return result, subjects


__all__ = [
    "CAP",
    "EXPECTED",
    "USER_AGENT",
    "Preflight",
    "SubjectCheck",
    "check_before_load",
    "run_preflight",
    "unfixable",
    "write_subjects_without",
]
