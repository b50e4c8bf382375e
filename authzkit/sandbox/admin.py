"""``SandboxAdmin``: a small requests client for the sandbox-only ``/sandbox/v1/*`` endpoints.

For a sandbox started elsewhere (``authzkit sandbox`` in another terminal, a load-test
controller): the same world, session tokens, counters and rotation that ``Sandbox`` offers
in-process. It imports neither Starlette nor uvicorn.
"""

from __future__ import annotations

from typing import Any

import requests

from authzkit.errors import TransportError, error_from_response


class SandboxAdmin:
    """Talks to ``/sandbox/v1/*`` of the sandbox at ``base_url``."""

    def __init__(self, base_url: str, *, session: requests.Session | None = None,
                 timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.timeout = timeout

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = f"{self.base_url}/sandbox/v1/{path}"
        try:
            response = self.session.request(method, url, json=body, timeout=self.timeout,
                                            headers={"Accept": "application/json"})
        except requests.RequestException as exc:
            raise TransportError(f"sandbox {method} {path}: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise error_from_response(response.status_code, response.content,
                                      what=f"sandbox {path}")
        return response.json()

    def world(self) -> dict[str, Any]:
        """The loaded world: clients, subjects (with demo credentials), resources, actions."""
        return self._call("GET", "world")

    def session_token(self, subject: str, ttl: float | None = None) -> str:
        """A fresh session token for ``subject``."""
        body: dict[str, Any] = {"subject": subject}
        if ttl is not None:
            body["ttl"] = ttl
        return self._call("POST", "sessions", body)["token"]

    def stats(self) -> dict[str, Any]:
        """The counters: tokens_issued, keys_served, challenges_issued, authorize outcomes."""
        return self._call("GET", "stats")

    def rotate_keys(self) -> str:
        """Replace the encryption key; returns the new kid."""
        return self._call("POST", "rotate-keys")["kid"]

    def __repr__(self) -> str:
        return f"SandboxAdmin({self.base_url!r})"


__all__ = ["SandboxAdmin"]
