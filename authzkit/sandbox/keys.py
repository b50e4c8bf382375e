"""The sandbox's key ring: one signing key for its JWTs, one current encryption key.

Rotation replaces the encryption key only: a solution encrypted for the old ``kid`` then
meets ``srn:error:unrecognized_key``, exactly what a client must survive when the provider
rotates. The signing key stays, so access and session tokens already handed out keep working.
The discovery document is rendered once per rotation, not once per request.

A ring made for scheduled rotation keeps a *spare* encryption key, generated ahead in a
background thread, so a due rotation is a swap rather than a 4096-bit key generation: a
rotation changes the key under the clients, it does not stall the service for a second
(which would look like a pause in every load test that rotates keys).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from authzkit.jwe import KeyPair
from authzkit.spec import KEY_SIZES

SPARE_WAIT_SECONDS = 60.0


class SpareKey:
    """One encryption key generated in a daemon thread (never delaying the process's exit).

    ``make`` is bound when the spare is ordered, so what generates it is fixed then.
    """

    def __init__(self, make: Callable[[], KeyPair]) -> None:
        self._done = threading.Event()
        self._key: KeyPair | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, args=(make,), name="authzkit-sandbox-spare-key",
                         daemon=True).start()

    def _run(self, make: Callable[[], KeyPair]) -> None:
        try:
            self._key = make()
        except BaseException as exc:  # handed to whoever takes the spare
            self._error = exc
        finally:
            self._done.set()

    def take(self) -> KeyPair:
        """The key, once generated (waits for it); raises what generating it raised."""
        if not self._done.wait(SPARE_WAIT_SECONDS):
            raise TimeoutError(f"no spare encryption key after {SPARE_WAIT_SECONDS:g} s")
        if self._error is not None:
            raise self._error
        assert self._key is not None
        return self._key


class KeyRing:
    """The signing key and the current encryption key (a rotated-out key is forgotten).

    ``spare=True`` keeps the next encryption key ready (for scheduled rotation).
    """

    def __init__(self, *, size: int = 4096, spare: bool = False) -> None:
        if size not in KEY_SIZES:
            raise ValueError(f"key size must be one of {', '.join(map(str, KEY_SIZES))}, "
                             f"got {size!r}")
        self.size = size
        # Two RSA key generations at 4096 bits take seconds; OpenSSL does them side by side.
        with ThreadPoolExecutor(max_workers=2) as pool:
            signing = pool.submit(KeyPair.generate, use="sig", size=size)
            encryption = pool.submit(KeyPair.generate, use="enc", size=size)
            self.signing: KeyPair = signing.result()
            self.encryption: KeyPair = encryption.result()
        self._discovery = self._render()
        self._spare = self._order_spare() if spare else None

    def _render(self) -> bytes:
        return json.dumps({"keys": [self.signing.public_jwk(), self.encryption.public_jwk()]},
                          separators=(",", ":")).encode()

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

    def _order_spare(self) -> SpareKey:
        return SpareKey(partial(KeyPair.generate, use="enc", size=self.size))

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
                fresh = spare.take()
            except Exception:
                fresh = None  # make one now, and let that raise if it must
        if fresh is None:
            fresh = KeyPair.generate(use="enc", size=self.size)
        discovery = json.dumps({"keys": [self.signing.public_jwk(), fresh.public_jwk()]},
                               separators=(",", ":")).encode()
        self.encryption, self._discovery = fresh, discovery
        return fresh.kid


__all__ = ["SPARE_WAIT_SECONDS", "KeyRing", "SpareKey"]
