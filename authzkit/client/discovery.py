"""Public-key discovery: the ``use=enc`` key for challenge solutions, cached.

SPEC: the key for encrypting solutions is the one whose ``use`` is ``enc`` — never "the
last key" or "the only key". It is fetched once and kept; when a solution comes back
``srn:error:unrecognized_key`` (the provider rotated its keys) the cache is re-fetched once,
single-flight, exactly like the token cache, and shareable between clients the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from authzkit.client.retry import Retry
from authzkit.client.token import TokenProvider
from authzkit.client.transport import Transport, name_endpoint
from authzkit.wire.clock import Clock, system_clock
from authzkit.wire.error_table import error_from_response
from authzkit.wire.errors import UnexpectedResponseError
from authzkit.wire.jwe import PublicKey
from authzkit.wire.locks import LazilyLocked
from authzkit.wire.spec import DISCOVERY_PATH

ENCRYPTION_USE = "enc"


@dataclass(frozen=True)
class KeySet:
    """The discovery document: every published key, and the parsed ``use=enc`` one."""

    encryption_key: PublicKey
    keys: tuple[Mapping[str, Any], ...] = field(repr=False)
    fetched_at: float = 0.0

    @property
    def kids(self) -> tuple[str, ...]:
        """Every published kid, in the order the document lists them."""
        return tuple(str(k.get("kid")) for k in self.keys)

    @classmethod
    def from_json(cls, body: Any, *, fetched_at: float = 0.0) -> KeySet:
        """Parse the discovery document and pick the ``use=enc`` key (never "the last key")."""
        keys = body.get("keys") if isinstance(body, Mapping) else None
        if not isinstance(keys, list):
            raise UnexpectedResponseError(
                "the discovery document has no 'keys' array", status=200, body=body
            )
        entries = tuple(k for k in keys if isinstance(k, Mapping))
        for entry in entries:
            if entry.get("use") == ENCRYPTION_USE:
                return cls(PublicKey.from_jwk(entry), entries, fetched_at)
        uses = sorted({str(k.get("use")) for k in entries})
        raise UnexpectedResponseError(
            f"the discovery document has no key with use=enc (uses: {', '.join(uses) or 'none'})",
            status=200,
            body=body,
        )


class KeyCache(LazilyLocked):
    """Fetches the discovery document on first use and on rotation; counts ``fetches``.

    ``max_age`` (seconds, ``None`` = until a rotation is detected) bounds how long a key
    set is trusted without a rotation signal.
    """

    def __init__(
        self,
        *,
        base_url: str,
        transport: Transport,
        clock: Clock | None = None,
        max_age: float | None = None,
        token_provider: TokenProvider | None = None,
        retry: Retry | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + DISCOVERY_PATH
        self._transport = transport
        self._token_provider = token_provider
        self._clock = clock or system_clock
        self.max_age = max_age
        self._keys: KeySet | None = None
        self.retry = retry if retry is not None else Retry()
        self.fetches = 0

    def _usable(self, keys: KeySet | None) -> bool:
        return keys is not None and (
            self.max_age is None or self._clock() - keys.fetched_at < self.max_age
        )

    def key_set(self, transport: Transport | None = None) -> KeySet:
        """The cached key set, fetched by one caller when missing or too old."""
        keys = self._keys
        if self._usable(keys):
            return keys  # type: ignore[return-value]
        with self._lock:
            if not self._usable(self._keys):
                self._keys = self._fetch(transport)
            return self._keys  # type: ignore[return-value]

    def encryption_key(self, transport: Transport | None = None) -> PublicKey:
        """The ``use=enc`` public key to encrypt solutions with (fetched when missing)."""
        return self.key_set(transport).encryption_key

    def refresh(
        self, stale_kid: str | None = None, transport: Transport | None = None
    ) -> PublicKey:
        """Re-fetch after a rotation, unless another caller already replaced ``stale_kid``."""
        with self._lock:
            keys = self._keys
            if stale_kid is None or keys is None or keys.encryption_key.kid == stale_kid:
                self._keys = keys = self._fetch(transport)
            return keys.encryption_key

    def _fetch(self, transport: Transport | None) -> KeySet:
        """GET the discovery document, retried with backoff on faults (a GET is safe to
        repeat); nothing is cached from a failure."""
        send = transport or self._transport
        return self.retry.run(lambda: self._fetch_once(send), what="key discovery")

    def _fetch_once(self, send: Transport) -> KeySet:
        """One GET; SPEC says every call is authenticated, so with a token provider the
        access token goes along (one refresh and retry on a 401)."""
        fetched_at = self._clock()
        self.fetches += 1
        provider = self._token_provider
        if provider is None:
            response = send.request("GET", self.url, name="keys")
        else:
            token = provider.token(send)
            response = send.request(
                "GET", self.url, name="keys", headers={"Authorization": "Bearer " + token}
            )
            if response.status == 401:
                token = provider.refresh_after_rejection(token, send)
                response = send.request(
                    "GET", self.url, name="keys", headers={"Authorization": "Bearer " + token}
                )
        if response.status != 200:
            raise name_endpoint(
                error_from_response(response.status, response.content, what="key discovery"),
                "key discovery",
                self.url,
            )
        return KeySet.from_json(response.json(), fetched_at=fetched_at)

    def __repr__(self) -> str:
        kid = self._keys.encryption_key.kid if self._keys else None
        return f"KeyCache(url={self.url!r}, kid={kid!r}, fetches={self.fetches})"


__all__ = ["ENCRYPTION_USE", "KeyCache", "KeySet"]
