"""An optional record of every HTTP exchange, safe to print, share and paste as curl.

Secrets are removed at the moment of recording, never later: in request headers and
bodies each secret becomes a shell variable (``$AUTHZKIT_CLIENT_SECRET``, ``$ACCESS_TOKEN``,
``$SUBJECT_TOKEN``, ``$CHALLENGE_SOLUTION``, ``$CLIENT_ASSERTION``, ``$CLIENT_BASIC`` — the
base64 of ``id:secret`` for ``client_secret_basic``), so :meth:`Exchange.curl` is a copy-pasteable
command once those variables are exported; response bodies are masked. A client without
a recorder does none of this work.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from authzkit.client.transport import HttpResponse, Transport, is_form
from authzkit.wire.errors import TransportError
from authzkit.wire.redact import SECRET_KEYS, mask, mask_mapping

# Body keys whose values become shell variables in the recorded request (lower-cased).
SHELL_VARIABLES: Mapping[str, str] = {
    "clientsecret": "AUTHZKIT_CLIENT_SECRET",
    "client_secret": "AUTHZKIT_CLIENT_SECRET",
    "accesstoken": "ACCESS_TOKEN",
    "access_token": "ACCESS_TOKEN",
    "token": "SUBJECT_TOKEN",
    "challenge_solution": "CHALLENGE_SOLUTION",
    "client_assertion": "CLIENT_ASSERTION",
}
_SECRET_HEADERS = {"authorization": "Bearer $ACCESS_TOKEN", "cookie": "$COOKIE"}
# What a response sets is a secret too (a session behind a gateway): masked, not replayed.
_MASKED_HEADERS = {"set-cookie"}
# client_secret_basic: the shell builds the header from the id and the exported secret.
_BASIC = "Basic $CLIENT_BASIC"
_SKIPPED_CURL_HEADERS = {"content-length", "host", "accept-encoding", "connection", "user-agent"}


def _variable(key: str) -> str:
    return "$" + SHELL_VARIABLES.get(key.lower(), f"ANSWER_{key.upper()}")


def placeholders(data: Any) -> Any:
    """A copy of a JSON request body with each secret value replaced by a shell variable."""
    if isinstance(data, Mapping):
        return {
            k: (
                _variable(str(k))
                if str(k).lower() in SECRET_KEYS
                and isinstance(v, str | int | float)
                and not isinstance(v, bool)
                else placeholders(v)
            )
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [placeholders(v) for v in data]
    return data


def _safe_header(key: str, value: str) -> str:
    lower = key.lower()
    if lower == "authorization" and value.startswith("Basic "):
        return _BASIC
    if lower in SECRET_KEYS or lower in _SECRET_HEADERS or lower in _MASKED_HEADERS:
        return _SECRET_HEADERS.get(lower, mask(value))
    return value


def safe_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """A copy of ``headers`` with each secret one a shell variable or masked (idempotent)."""
    return {k: _safe_header(k, v) for k, v in (headers or {}).items()}


_PLACEHOLDER = re.compile(
    r"\$(AUTHZKIT_CLIENT_SECRET|ACCESS_TOKEN|SUBJECT_TOKEN|CHALLENGE_SOLUTION|CLIENT_ASSERTION"
    r"|CLIENT_BASIC|COOKIE|ANSWER_[A-Z0-9_]+)"
)


def _shell(text: str) -> str:
    """Single-quote ``text`` for sh, leaving our ``$VARIABLE`` placeholders expandable."""
    quoted = "'" + text.replace("'", "'\\''") + "'"
    quoted = _PLACEHOLDER.sub(lambda m: "'\"$" + m.group(1) + "\"'", quoted)
    quoted = quoted.removeprefix("''") if len(quoted) > 2 else quoted
    return quoted.removesuffix("''") if len(quoted) > 2 else quoted


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, with secrets already replaced or masked."""

    method: str
    url: str
    name: str
    status: int
    elapsed_ms: float
    started_at: float
    request_headers: Mapping[str, str] = field(default_factory=dict)
    request_body: Any = None
    response_headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    response_body: Any = field(default=None, repr=False)
    error: str | None = None

    def curl(self) -> str:
        """A copy-pasteable curl command; export the ``$VARIABLES`` it names first."""
        parts = ["curl", "-sS", "-X", self.method, _shell(self.url)]
        for key, value in self.request_headers.items():
            if key.lower() not in _SKIPPED_CURL_HEADERS:
                parts += ["-H", _shell(f"{key}: {value}")]
        if self.request_body is not None and is_form(self.request_headers):
            for key, value in dict(self.request_body).items():
                parts += ["--data-urlencode", _shell(f"{key}={value}")]
        elif self.request_body is not None:
            parts += [
                "--data",
                _shell(json.dumps(self.request_body, separators=(",", ":"), ensure_ascii=False)),
            ]
        return " ".join(parts)

    def masked(self) -> Exchange:
        """This exchange with its headers, request body and response body masked again the
        way the recorder masks them (a no-op for what it recorded): what a display shows,
        whoever built the exchange."""
        return dataclasses.replace(
            self,
            request_headers=safe_headers(self.request_headers),
            request_body=placeholders(self.request_body),
            response_headers=safe_headers(self.response_headers),
            response_body=mask_mapping(self.response_body),
        )

    def _repr_html_(self) -> str:
        """A notebook's view: request and response side by side, status, time, curl."""
        from authzkit.client.exchange_display import exchange_html

        return exchange_html(self.masked())

    def summary(self) -> str:
        """One line: name, method, URL, status and milliseconds."""
        status = self.status if self.status else f"no answer ({self.error})"
        return (
            f"{self.name:<20} {self.method:<5} {self.url} -> {status} in {self.elapsed_ms:.1f} ms"
        )


def _response_body(response: HttpResponse) -> Any:
    try:
        return mask_mapping(json.loads(response.content)) if response.content else None
    except ValueError:
        return response.text[:2000]


class Recorder:
    """Keeps the last ``limit`` exchanges; iterate it, index it, or ``clear()`` it."""

    def __init__(self, limit: int | None = 1000) -> None:
        self._exchanges: deque[Exchange] = deque(maxlen=limit)

    def add(self, exchange: Exchange) -> None:
        """Keep an already-safe exchange (for example from another recorder)."""
        self._exchanges.append(exchange)  # deque.append is atomic

    def record(
        self,
        method: str,
        url: str,
        *,
        name: str,
        started_at: float,
        headers: Mapping[str, str] | None,
        json_body: Any,
        response: HttpResponse | None,
        error: str | None = None,
    ) -> Exchange:
        """Build a safe :class:`Exchange` from one request and keep it."""
        if isinstance(json_body, bytes):
            json_body = (
                dict(parse_qsl(json_body.decode())) if is_form(headers) else json.loads(json_body)
            )
        exchange = Exchange(
            method=method,
            url=url,
            name=name,
            status=response.status if response is not None else 0,
            elapsed_ms=response.elapsed_ms if response is not None else 0.0,
            started_at=started_at,
            request_headers=safe_headers(
                {
                    "Accept": "application/json",
                    **({"Content-Type": "application/json"} if json_body is not None else {}),
                    **(headers or {}),
                }
            ),
            request_body=placeholders(json_body),
            response_headers=safe_headers(dict(response.headers)) if response else {},
            response_body=_response_body(response) if response is not None else None,
            error=error,
        )
        self.add(exchange)
        return exchange

    @property
    def exchanges(self) -> list[Exchange]:
        """A snapshot list of the kept exchanges, oldest first."""
        return list(self._exchanges)

    @property
    def last(self) -> Exchange | None:
        """The newest exchange, if any."""
        return self._exchanges[-1] if self._exchanges else None

    def clear(self) -> None:
        """Forget every kept exchange."""
        self._exchanges.clear()

    def __iter__(self) -> Iterator[Exchange]:
        return iter(list(self._exchanges))

    def __len__(self) -> int:
        return len(self._exchanges)

    def __getitem__(self, index: int) -> Exchange:
        return self._exchanges[index]

    def __repr__(self) -> str:
        return f"Recorder({len(self)} exchanges)"

    def _repr_html_(self) -> str:
        """A notebook's view: one line per exchange, each opening to its full view."""
        from authzkit.client.exchange_display import recorder_html

        return recorder_html([exchange.masked() for exchange in self.exchanges])


class RecordingTransport:
    """Wraps a :class:`Transport` and records each exchange into a :class:`Recorder`."""

    def __init__(self, inner: Transport, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def request(
        self,
        method: str,
        url: str,
        *,
        name: str,
        headers: Mapping[str, str] | None = None,
        json_body: Any = None,
    ) -> HttpResponse:
        """Send through the wrapped transport and record the exchange, answered or not."""
        started_at = time.time()
        response: HttpResponse | None = None
        error: str | None = None
        try:
            response = self.inner.request(
                method, url, name=name, headers=headers, json_body=json_body
            )
            return response
        except TransportError as exc:
            error = exc.message
            raise
        finally:
            if response is not None or error is not None:
                self.recorder.record(
                    method,
                    url,
                    name=name,
                    started_at=started_at,
                    headers=headers,
                    json_body=json_body,
                    response=response,
                    error=error,
                )


__all__ = ["Exchange", "Recorder", "RecordingTransport", "placeholders", "safe_headers"]
