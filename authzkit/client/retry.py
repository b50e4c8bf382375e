"""Bounded retries with exponential backoff, for calls that are safe to repeat.

Safe to repeat: obtaining a token (client credentials) and fetching the discovery document.
Not an authorization decision: a retried authorize could consume a challenge attempt or
count twice, so it is never retried blindly (the 401 refresh is the one exception, and it
lives in the client). What is worth another try: no answer at all, a 5xx, or a 429.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from authzkit.wire.errors import AuthzError, TlsError, TokenRequestError, TransportError
from authzkit.wire.redact import Secret, scrub

log = logging.getLogger(__name__)
T = TypeVar("T")


def is_retryable(error: AuthzError) -> bool:
    """Faults worth another try: no answer, a 5xx, or 429.

    A :class:`TokenRequestError` has had its own retries already: not again. A
    :class:`TlsError` fails the same way every time (a certificate does not change between
    tries).
    """
    if isinstance(error, TokenRequestError | TlsError):
        return False
    if isinstance(error, TransportError):
        return True
    return error.status is not None and (error.status >= 500 or error.status == 429)


def gave_up(last: AuthzError, attempts: int) -> AuthzError:
    """``last`` again, its message saying how many attempts were made."""
    if attempts == 1:
        return last
    return type(last)(
        f"{last.message} (gave up after {attempts} attempts)",
        type=last.type,
        status=last.status,
        field=last.field,
        body=last.body,
    )


@dataclass(frozen=True)
class Retry:
    """``attempts`` tries in all, waiting ``backoff``, then twice as long, between them."""

    attempts: int = 3
    backoff: float = 0.2
    sleep: Callable[[float], None] | None = field(default=None, repr=False)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return self.backoff * 2.0 ** (attempt - 1)

    def run(
        self,
        call: Callable[[], T],
        *,
        what: str,
        give_up: Callable[[AuthzError, int], AuthzError] = gave_up,
        secrets: Iterable[str | Secret | None] = (),
    ) -> T:
        """``call()``, repeated on retryable faults; ``give_up`` shapes the final error."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return call()
            except AuthzError as exc:
                last = exc
            if not is_retryable(last) or attempt >= max(1, self.attempts):
                raise give_up(last, attempt) from last
            log.warning(
                "%s fault (%s), retry %d of %d",
                what,
                scrub(str(last), secrets),
                attempt,
                self.attempts - 1,
            )
            (time.sleep if self.sleep is None else self.sleep)(self.delay(attempt))


__all__ = ["Retry", "gave_up", "is_retryable"]
