"""What ``Sandbox(dialect="authzen")`` checks before it starts: the AuthZEN world it
serves, the fault settings that have a meaning there (no token endpoint, no keys: no
token outage, no key rotation) and the optional bearer token.
"""

from __future__ import annotations

from typing import Any

from authzkit.sandbox.authzen.world import AuthzenWorld
from authzkit.wire.errors import ConfigError

# Fault settings with nothing to act on in an AuthZEN sandbox, with why.
NOT_ON_AUTHZEN = {
    "token_outage": "it has no token endpoint",
    "rotate_keys_every": "it has no keys",
}


def authzen_settings(
    world: Any,
    faults: Any,
    bearer_token: str | None,
) -> AuthzenWorld:
    """The world to serve (what :meth:`AuthzenWorld.coerce` takes), once the faults and
    the token are known to apply."""
    for name, why in NOT_ON_AUTHZEN.items():
        if getattr(faults, name, None):
            raise ConfigError(f"{name} does not apply to an AuthZEN sandbox: {why}")
    if bearer_token is not None and (not isinstance(bearer_token, str) or not bearer_token.strip()):
        raise ConfigError("bearer_token must be a non-empty string")
    return AuthzenWorld.coerce(world)


__all__ = ["NOT_ON_AUTHZEN", "authzen_settings"]
