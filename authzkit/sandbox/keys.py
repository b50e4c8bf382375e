"""The sandbox's key ring: one signing key for its JWTs, one current encryption key.

Rotation replaces the encryption key only, swapping in a spare generated ahead, so it
never stalls the service (docs/internals.md, "Keys").
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from authzkit.wire.jwe import KeyPair
from authzkit.wire.spec import KEY_SIZES

SPARE_WAIT_SECONDS = 60.0


def made_ahead(make: Callable[[], KeyPair]) -> Future[KeyPair]:
    """``make()`` run in a daemon thread (never delaying the process's exit); its future.

    ``make`` is bound when called, so what generates the key is fixed then."""
    future: Future[KeyPair] = Future()

    def run() -> None:
        try:
            future.set_result(make())
        except BaseException as exc:  # handed to whoever takes the key
            future.set_exception(exc)

    threading.Thread(target=run, name="authzkit-sandbox-spare-key", daemon=True).start()
    return future


class KeyRing:
    """The signing key and the current encryption key (a rotated-out key is forgotten).

    ``spare=True`` keeps the next encryption key ready (for scheduled rotation).
    """

    def __init__(self, *, size: int = 4096, spare: bool = False) -> None:
        if size not in KEY_SIZES:
            raise ValueError(
                f"key size must be one of {', '.join(map(str, KEY_SIZES))}, got {size!r}"
            )
        self.size = size
        # Two RSA key generations at 4096 bits take seconds; OpenSSL does them side by side.
        with ThreadPoolExecutor(max_workers=2) as pool:
            signing = pool.submit(KeyPair.generate, use="sig", size=size)
            encryption = pool.submit(KeyPair.generate, use="enc", size=size)
            self.signing: KeyPair = signing.result()
            self.encryption: KeyPair = encryption.result()
        self._discovery = self._render(self.encryption)
        self._spare = self._order_spare() if spare else None

    def _render(self, encryption: KeyPair) -> bytes:
        return json.dumps(
            {"keys": [self.signing.public_jwk(), encryption.public_jwk()]}, separators=(",", ":")
        ).encode()

    @property
    def discovery_body(self) -> bytes:
        """The ``GET /api/v1/discovery/keys`` body: public parts only, sig key then enc key."""
        return self._discovery

    def signing_key_for(self, kid: str) -> KeyPair | None:
        """The key that verifies a JWT naming ``kid`` (only our signing key)."""
        signing = self.signing
        return signing if kid == signing.kid else None

    def encryption_key_for(self, kid: str) -> KeyPair | None:
        """The private key for a JWE naming ``kid``: the current one only, never a retired one."""
        encryption = self.encryption
        return encryption if kid == encryption.kid else None

    def _order_spare(self) -> Future[KeyPair]:
        return made_ahead(partial(KeyPair.generate, use="enc", size=self.size))

    def rotate(self) -> str:
        """Replace the encryption key; returns the new kid. The old kid is never accepted again.

        With a spare, the spare becomes the key (waiting for it if still being generated;
        generating afresh if generating it failed) and the next spare is ordered. Readers
        see either the old pair of (key, discovery body) or the new one: both are built
        first and then swapped in with plain attribute assignments.
        """
        spare, fresh = self._spare, None
        if spare is not None:
            self._spare = self._order_spare()
            try:
                fresh = spare.result(SPARE_WAIT_SECONDS)
            except Exception:
                fresh = None  # make one now, and let that raise if it must
        if fresh is None:
            fresh = KeyPair.generate(use="enc", size=self.size)
        self.encryption, self._discovery = fresh, self._render(fresh)
        return fresh.kid


__all__ = ["SPARE_WAIT_SECONDS", "KeyRing", "made_ahead"]
