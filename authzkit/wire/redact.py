"""Keeping secrets out of sight: a string wrapper that never prints, and a masker.

Client secrets, access tokens, subject session tokens and challenge answers must never
appear in a ``repr``, a log line, a recorded exchange or an error message. Wrapping them
in :class:`Secret` makes the safe thing the default; :func:`mask` shortens a value for
display when something must be shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, overload

MASK = "****"

# Keys whose values are secret wherever they appear in a JSON body or a header.
SECRET_KEYS = frozenset(
    {
        "clientsecret",
        "client_secret",
        "accesstoken",
        "access_token",
        "token",
        "authorization",
        "challenge_solution",
        "pin",
        "login_password",
        "password",
        "totp",
        "secret",
        "client_assertion",
        "refresh_token",
        "client_key",
        "client_key_pem",
        "private_key",
    }
)


class Secret:
    """A secret string that shows as ``****`` in ``repr``/``str``; ``reveal()`` gives it."""

    __slots__ = ("_value",)

    def __init__(self, value: str | Secret) -> None:
        if isinstance(value, Secret):
            value = value.reveal()
        if not isinstance(value, str):
            raise TypeError(f"a secret must be a str, not {type(value).__name__}")
        self._value = value

    def reveal(self) -> str:
        """The secret itself, for the one place that must send it."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret('{MASK}')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> Any:  # pickling keeps working (Locust workers, multiprocessing)
        return (Secret, (self._value,))


@overload
def reveal(value: str | Secret) -> str: ...


@overload
def reveal(value: None) -> None: ...


@overload
def reveal(value: str | Secret | None) -> str | None: ...


def reveal(value: str | Secret | None) -> str | None:
    """The plain string of ``value`` whether or not it is wrapped."""
    return value.reveal() if isinstance(value, Secret) else value


def mask(value: str | None) -> str:
    """A display form of a secret: enough to tell two apart, never enough to use."""
    if not value:
        return MASK
    return f"{value[:4]}…{MASK}" if len(value) > 24 else MASK


def mask_mapping(data: Any, extra_keys: Iterable[str] = ()) -> Any:
    """A deep copy of a JSON-like value with every secret-named key's value masked."""
    keys = SECRET_KEYS | {k.lower() for k in extra_keys}
    if isinstance(data, Mapping):
        return {
            k: (mask(v) if isinstance(v, str) else MASK)
            if str(k).lower() in keys and v is not None and not isinstance(v, Mapping | list)
            else mask_mapping(v, keys)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [mask_mapping(v, keys) for v in data]
    return data


def scrub(text: str, secrets: Iterable[str | Secret | None]) -> str:
    """``text`` with every occurrence of the given secrets replaced by the mask."""
    for secret in secrets:
        plain = reveal(secret)
        if plain and len(plain) >= 3:
            text = text.replace(plain, MASK)
    return text


__all__ = ["MASK", "SECRET_KEYS", "Secret", "mask", "mask_mapping", "reveal", "scrub"]
