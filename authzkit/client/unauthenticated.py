"""The 401 policy of authorize, and what it learned about subject sessions.

The published dialect's bare 401 is ambiguous; a subject refused again with a newer access
token has an invalid session, remembered (as a hash, bounded) by the token provider
(docs/internals.md, "The 401 policy").
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from authzkit.client.transport import HttpResponse, Transport
from authzkit.wire.error_table import SUBJECT_TOKEN_FIELD, error_from_response
from authzkit.wire.errors import AuthzError, UnauthenticatedError
from authzkit.wire.locks import LazilyLocked
from authzkit.wire.redact import Secret, reveal
from authzkit.wire.spec import UNAUTHENTICATED, error_type

DEFAULT_LIMIT = 1024
SUBJECT, AMBIGUOUS, ACCESS_TOKEN = "subject", "ambiguous", "access token"


def whose_401(body: Any) -> str:
    """Whose fault a 401 body says it is: :data:`SUBJECT` (``srn:error:unauthenticated``
    naming ``request_body.subject.token``: the draft), :data:`AMBIGUOUS` (the same type
    naming no field: the published dialect, for an expired access token as for an invalid
    session) or :data:`ACCESS_TOKEN` (anything else: ``srn:error:invalid_token``, no type,
    a field naming the header)."""
    if not isinstance(body, Mapping) or error_type(body) != UNAUTHENTICATED:
        return ACCESS_TOKEN
    named = body.get("field")
    if named == SUBJECT_TOKEN_FIELD:
        return SUBJECT
    return AMBIGUOUS if not named else ACCESS_TOKEN


class SubjectSessions(LazilyLocked):
    """Subject sessions known to be invalid, and those under suspicion, by token hash."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self._invalid: OrderedDict[str, None] = OrderedDict()
        self._suspects: OrderedDict[str, int] = OrderedDict()  # hash -> serial refused

    @staticmethod
    def key(subject_token: str | Secret) -> str:
        """The hash under which a subject token is remembered (the token is never kept)."""
        return hashlib.sha256((reveal(subject_token) or "").encode()).hexdigest()

    def is_invalid(self, key: str) -> bool:
        """True when the session of ``key`` is known to be invalid."""
        return key in self._invalid

    def refused(self, key: str, serial: int) -> bool:
        """Record an ambiguous 401 of ``key``'s request sent with access token ``serial``.

        True when this proves the session invalid: it is known to be, or it was refused
        before with an older access token (so a newer one did not help). The first refusal
        only puts the subject under suspicion: the caller refreshes once and retries.
        """
        with self._lock:
            if key in self._invalid:
                self._invalid.move_to_end(key)
                return True
            earlier = self._suspects.get(key)
            if earlier is not None and serial > earlier:
                del self._suspects[key]
                self._add(self._invalid, key, None)
                return True
            if earlier is None or serial < earlier:
                self._add(self._suspects, key, serial)
            return False

    def cleared(self, key: str) -> None:
        """The retry after a refusal did not draw the same 401: no longer a suspect."""
        with self._lock:
            self._suspects.pop(key, None)

    def forget(self) -> None:
        """Forget everything (a subject whose session was renewed under the same token)."""
        with self._lock:
            self._invalid.clear()
            self._suspects.clear()

    def _add(self, table: OrderedDict[str, Any], key: str, value: int | None) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.limit:
            table.popitem(last=False)

    def __len__(self) -> int:
        return len(self._invalid)

    def __repr__(self) -> str:
        return (
            f"SubjectSessions(invalid={len(self._invalid)}, "
            f"suspects={len(self._suspects)}, limit={self.limit})"
        )


class IssuedToken(Protocol):
    """What the policy reads of an access token (:class:`~authzkit.client.token.AccessToken`)."""

    @property
    def value(self) -> str: ...

    @property
    def serial(self) -> int: ...


class TokenSource(Protocol):
    """What the policy needs of the token provider (:class:`~authzkit.client.token.TokenProvider`):
    its session memory and one single-flight refresh. A protocol, so this module and
    :mod:`authzkit.client.token` (which imports it) do not import each other."""

    sessions: SubjectSessions

    def replace_rejected(
        self,
        rejected: str,
        transport: Transport | None = None,
    ) -> IssuedToken: ...


def resend_after_401(
    response: HttpResponse,
    *,
    provider: TokenSource,
    access: IssuedToken,
    subject_token: str | Secret,
    transport: Transport,
    resend: Callable[[str], HttpResponse],
) -> HttpResponse:
    """The 401 policy: what to do with a 401 to a request sent with ``access``.

    A 401 naming the subject's token is final: raised at once. One naming nothing
    (``{"type": "srn:error:unauthenticated"}``, the published dialect) may be an expired
    access token or an invalid subject session: one refresh (single-flight, only if
    ``access`` is still the cached token) and one ``resend``; if the newer access token
    draws the same 401, the session is remembered as invalid and later ones raise at once,
    without a token call. Any other 401 (the access token's) gets one refresh and one
    ``resend`` whose answer is returned whatever it is.
    """
    verdict = whose_401(response.body())
    if verdict == SUBJECT:
        raise error_from_response(401, response.content, what="authorize", body=response.body())
    sessions = provider.sessions
    key = sessions.key(subject_token) if verdict == AMBIGUOUS else None
    if key is not None and sessions.refused(key, access.serial):
        raise _invalid_session(response)
    retried = None
    try:
        fresh = provider.replace_rejected(access.value, transport)
        retried = resend(fresh.value)
    finally:
        if key is not None and (
            retried is None or retried.status != 401 or whose_401(retried.body()) != AMBIGUOUS
        ):
            sessions.cleared(key)
    if key is not None and retried.status == 401 and sessions.refused(key, fresh.serial):
        raise _invalid_session(retried)
    return retried


def _invalid_session(response: HttpResponse) -> AuthzError:
    """The service's error for ``response``, saying why the session is judged invalid."""
    error = error_from_response(401, response.content, what="authorize", body=response.body())
    if isinstance(error, UnauthenticatedError):
        error.message += " (judged the subject's: a newer access token was refused too)"
        error.args = (error.message,)
    return error


__all__ = [
    "ACCESS_TOKEN",
    "AMBIGUOUS",
    "DEFAULT_LIMIT",
    "SUBJECT",
    "IssuedToken",
    "SubjectSessions",
    "TokenSource",
    "resend_after_401",
    "whose_401",
]
