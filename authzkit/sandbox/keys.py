"""The sandbox's key ring: one signing key for its JWTs, one current encryption key.

Rotation replaces the encryption key only: a solution encrypted for the old ``kid`` then
meets ``srn:error:unrecognized_key``, exactly what a client must survive when the provider
rotates. The signing key stays, so access and session tokens already handed out keep working.
The discovery document is rendered once per rotation, not once per request.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from authzkit.jwe import KeyPair
from authzkit.spec import KEY_SIZES


class KeyRing:
    """The signing key and the current encryption key (a rotated-out key is forgotten)."""

    def __init__(self, *, size: int = 4096) -> None:
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

    def rotate(self) -> str:
        """Replace the encryption key; returns the new kid. The old kid is never accepted again.

        Readers see either the old pair of (key, discovery body) or the new one: both are
        built first and then swapped in with plain attribute assignments.
        """
        fresh = KeyPair.generate(use="enc", size=self.size)
        discovery = json.dumps({"keys": [self.signing.public_jwk(), fresh.public_jwk()]},
                               separators=(",", ":")).encode()
        self.encryption, self._discovery = fresh, discovery
        return fresh.kid


__all__ = ["KeyRing"]
