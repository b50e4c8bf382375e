"""What the load-test users need that has nothing to do with Locust itself.

The per-process :class:`Shared` state (settings, one token provider, one key cache, the
subjects from a sandbox's world or a ``--subjects`` CSV), ``--wait-time`` parsing, and the
end-of-run summary with the ``--max-p95-ms`` / ``--max-failure-ratio`` verdict live here,
free of locust, so they are tested in-process (``authzkit/loadtest.py`` is the only module
that imports locust, whose gevent monkey-patching must never reach a test run or a kernel).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from authzkit.answers import answers_from_credentials
from authzkit.client import AuthzClient
from authzkit.config import Settings
from authzkit.discovery import KeyCache
from authzkit.errors import AuthzError, ConfigError
from authzkit.redact import Secret
from authzkit.token import TokenProvider

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

    """
    subjects = []
    for entry in world.get("subjects", []):
        owned = [r for r in world.get("resources", []) if r.get("owner") == entry.get("id")]
        if not owned:
            continue
        token = Secret(mint(entry["id"]))
        answers = answers_from_credentials(entry.get("credentials") or {})
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


@dataclass(frozen=True)
class Shared:
    """What every user of one process shares."""

    base_url: str
    auth_url: str
    timeout: float
    token_provider: TokenProvider
    keys: KeyCache
    subjects: tuple[Subject, ...]
    action: str
    challenge_action: str
    wait: tuple[float, float]
    sandbox: bool


def _sandbox_world(base_url: str, timeout: float) -> tuple[Any, dict[str, Any]]:
    """The service's sandbox admin and world, or a ConfigError if it is no sandbox."""
    from authzkit.sandbox import SandboxAdmin

    admin = SandboxAdmin(base_url, session=requests.Session(), timeout=timeout)
    try:
        world = admin.world()
    except (AuthzError, ValueError) as exc:
        raise ConfigError(f"no --subjects FILE (or no client credentials) given and {base_url} "
                          f"is not an authzkit sandbox (GET /sandbox/v1/world: {exc}); pass "
                          f"--subjects with subject tokens and answers, and the client "
                          f"credentials") from exc
    return admin, world


def build_shared(options: Any, host: str | None) -> Shared:
    """Everything one Locust process shares, from its options, ``host`` and ``AUTHZKIT_*``.

    Subjects and credentials come from ``--subjects``/``--client-*``/``AUTHZKIT_CLIENT_*``
    when given; whatever is missing comes from the service's sandbox world, and a service
    that is no sandbox is a :class:`ConfigError` that says what to pass instead.
    """
    settings = Settings.from_env()
    base_url = (host or settings.base_url or "").rstrip("/")
    if not base_url:
        raise ConfigError("no service URL: pass --host or set AUTHZKIT_BASE_URL "
                          "(`authzkit loadtest` starts a sandbox for you)")
    explicit_auth = settings.auth_url if settings.auth_url != settings.base_url else None
    auth_url = (options.auth_url or explicit_auth or base_url).rstrip("/")
    client_id = options.client_id or settings.client_id
    secret = options.client_secret or (settings.client_secret.reveal()
                                       if settings.client_secret else None)
    admin, world = None, None
    if not options.subjects or not (client_id and secret):
        admin, world = _sandbox_world(base_url, settings.timeout)
    if not (client_id and secret):
        client_id, sandbox_secret = resource_server_credentials(world or {})
        secret = sandbox_secret.reveal()
    if options.subjects:
        subjects = subjects_from_csv(options.subjects)
    else:
        subjects = subjects_from_world(
            world or {}, lambda subject: admin.session_token(subject, ttl=SANDBOX_SESSION_TTL))
    template = AuthzClient(base_url=base_url, auth_url=auth_url, client_id=client_id,
                           client_secret=secret, timeout=settings.timeout)
    return Shared(base_url=base_url, auth_url=auth_url, timeout=settings.timeout,
                  token_provider=template.token_provider, keys=template.keys,
                  subjects=tuple(subjects), action=options.action,
                  challenge_action=options.challenge_action,
                  wait=parse_wait_time(options.wait_time), sandbox=world is not None)


def run_summary(*, requests: int, failures: int, p95_ms: float, errors: list[dict[str, Any]],
                counters: list[dict[str, int]], max_p95_ms: float | None,
                max_failure_ratio: float | None) -> dict[str, Any]:
    """The ``--summary-file`` content: failures, token-provider counters summed over the
    processes (``rejected_401`` from the failures), and the threshold verdict."""
    provider = {key: sum(c.get(key, 0) for c in counters) for key in ("token_calls", "refreshes")}
    provider["processes"] = len(counters)
    provider["rejected_401"] = sum(e["occurrences"] for e in errors if "HTTP 401" in e["error"])
    ratio = failures / requests if requests else (1.0 if failures else 0.0)
    problems = threshold_problems(p95_ms=p95_ms, failure_ratio=ratio, max_p95_ms=max_p95_ms,
                                  max_failure_ratio=max_failure_ratio)
    return {"requests": requests, "failures_total": failures, "failures": errors,
            "token_provider": provider,
            "thresholds": {"max_p95_ms": max_p95_ms, "max_failure_ratio": max_failure_ratio,
                           "p95_ms": p95_ms, "failure_ratio": ratio,
                           "checked": max_p95_ms is not None or max_failure_ratio is not None,
                           "passed": not problems, "problems": problems}}


__all__ = [
    "DEFAULT_ACTION", "DEFAULT_CHALLENGE_ACTION", "DEFAULT_RESOURCE_TYPE", "SANDBOX_SESSION_TTL",
    "Shared", "Subject", "build_shared", "parse_wait_time", "resource_server_credentials",
    "run_summary", "subjects_from_csv", "subjects_from_world", "threshold_problems",
]
