"""``SandboxAdmin``: a small requests client for the sandbox-only ``/sandbox/v1/*`` endpoints.

For a sandbox started elsewhere, and :class:`ExternalSandbox`, what :func:`authzkit.connect`
makes of one; free of Starlette and uvicorn, so a core install can use it
(docs/internals.md, "A sandbox started elsewhere").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import requests

from authzkit.wire.config import DEFAULT_TIMEOUT
from authzkit.wire.error_table import error_from_response
from authzkit.wire.errors import TlsError, TransportError
from authzkit.wire.identity import cause_of, send
from authzkit.wire.spec import SANDBOX_IDENTITY, SANDBOX_WORLD_PATH
from authzkit.wire.tls import TlsSettings, tls_failure

if TYPE_CHECKING:
    from authzkit.sandbox.received import Received


class SandboxAdmin:
    """Talks to ``/sandbox/v1/*`` of the sandbox at ``base_url`` (over HTTPS with ``tls``:
    the trust store and client certificate of :mod:`authzkit.wire.tls`)."""

    def __init__(
        self,
        base_url: str,
        *,
        session: requests.Session | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        tls: TlsSettings | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.tls = tls or TlsSettings()
        self.session = session or self.tls.session()
        self.timeout = timeout

    def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        url = f"{self.base_url}/sandbox/v1/{path}"
        try:
            response = send(
                self.session, method, url, timeout=self.timeout, tls=self.tls, body=body
            )
        except requests.RequestException as exc:
            failure = tls_failure(exc, url, self.tls)
            if failure is not None:
                raise TlsError(f"sandbox {method} {path}: {failure}") from exc
            name, cause = type(exc).__name__, cause_of(exc)
            why = name if cause == name else f"{name} ({cause})"
            raise TransportError(f"sandbox {method} {path}: {why}") from exc
        if response.status_code != 200:
            raise error_from_response(
                response.status_code, response.content, what=f"sandbox {path}"
            )
        answer: dict[str, Any] = response.json()  # every admin endpoint answers an object
        return answer

    def world(self) -> dict[str, Any]:
        """The loaded world: clients, subjects (with demo credentials), resources, actions."""
        return self._call("GET", "world")

    def session_token(self, subject: str, ttl: float | None = None) -> str:
        """A fresh session token for ``subject``."""
        body: dict[str, Any] = {"subject": subject}
        if ttl is not None:
            body["ttl"] = ttl
        token: str = self._call("POST", "sessions", body)["token"]
        return token

    def stats(self) -> dict[str, Any]:
        """The counters: tokens_issued, keys_served, challenges_issued, authorize outcomes."""
        return self._call("GET", "stats")

    def service_time(self) -> dict[str, Any]:
        """The authorize service time the sandbox measured since the last reset (count,
        min, mean, max in µs, and ``histogram``: the µs HdrHistogram, compressed and
        base64-encoded, ``HdrHistogram.decode`` reads it) and the shape asked
        (``service_time_us``, ``concurrency``); ``measured`` is false without faults."""
        return self._call("GET", "service-time")

    def rotate_keys(self) -> str:
        """Replace the encryption key; returns the new kid."""
        kid: str = self._call("POST", "rotate-keys")["kid"]
        return kid

    def reset(self, record: bool | None = None) -> None:
        """Forget sessions, challenges, counters and the record, restart the faults'
        schedule; ``record`` turns the record of received exchanges on or off."""
        self._call("POST", "reset", {} if record is None else {"record": record})

    def received(self) -> list[Received]:
        """The exchanges the sandbox answered since the last reset (masked)."""
        from authzkit.sandbox.received import Received

        return [Received.from_json(r) for r in self._call("GET", "received")["received"]]

    def __repr__(self) -> str:
        return f"SandboxAdmin({self.base_url!r})"


WORLD_KEYS = ("clients", "subjects", "resources", "actions")


class ExternalSandbox:
    """A sandbox started elsewhere (``authzkit sandbox`` in another terminal), reached
    through ``AUTHZKIT_BASE_URL`` alone: the world, session tokens and demo credentials an
    in-process :class:`~authzkit.sandbox.Sandbox` offers, over ``/sandbox/v1/*``.
    :meth:`stop` only closes the connection: the sandbox is not ours to stop."""

    def __init__(
        self,
        base_url: str,
        document: dict[str, Any],
        *,
        timeout: float,
        tls: TlsSettings | None = None,
    ) -> None:
        from authzkit.sandbox.world import World

        self.base_url = base_url.rstrip("/")
        self.auth_url = self.base_url  # the draft token path sits below the same host
        self.tls = tls or TlsSettings()
        self.admin = SandboxAdmin(self.base_url, timeout=timeout, tls=self.tls)
        identity = document[SANDBOX_IDENTITY]
        self.version = str(identity.get("version", ""))
        self.dialect = str(identity.get("dialect") or "draft")
        self.issuer: str | None = identity.get("issuer") or None
        self.world = World.from_json(
            {k: v for k, v in document.items() if k in WORLD_KEYS},
            source=self.base_url + SANDBOX_WORLD_PATH,
        )
        demo = self.world.resource_server()
        self.client_id = demo.client_id
        self.client_secret = demo.client_secret
        entry = next(
            (
                c
                for c in document.get("clients", [])
                if isinstance(c, dict) and c.get("client_id") == demo.client_id
            ),
            {},
        )
        pem = entry.get("client_key_pem")
        self.client_key_pem: str | None = pem if isinstance(pem, str) and pem else None

    def session_token(self, subject: str, ttl: float | None = None) -> str:
        """A fresh session token for ``subject``, minted by the sandbox."""
        return self.admin.session_token(subject, ttl)

    def stats(self) -> dict[str, Any]:
        return self.admin.stats()

    def reset(self, record: bool | None = None) -> None:
        """``POST /sandbox/v1/reset`` (see :meth:`SandboxAdmin.reset`)."""
        self.admin.reset(record)

    def received(self) -> list[Received]:
        """The exchanges the sandbox answered since the last reset (masked)."""
        return self.admin.received()

    def stop(self) -> None:
        """Close the connection (the sandbox keeps running: someone else started it)."""
        self.admin.session.close()

    def __repr__(self) -> str:
        return (
            f"ExternalSandbox({self.base_url!r}, dialect={self.dialect!r}, "
            f"version={self.version!r})"
        )


__all__ = ["WORLD_KEYS", "ExternalSandbox", "SandboxAdmin"]
