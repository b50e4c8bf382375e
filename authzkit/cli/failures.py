"""What a user reads when a command fails: one line on stderr and an exit code, never a
traceback unless ``AUTHZKIT_DEBUG=1``.

Exit 2: fix the command line or the configuration; exit 1: the service or the run failed.
Text the package did not write passes through :func:`scrubbed` (docs/internals.md,
"Failures").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from authzkit.shared.extras import extra_of, missing_message
from authzkit.wire.errors import AuthzError, ConfigError
from authzkit.wire.redact import MASK, scrub
from authzkit.wire.variables import authzkit_variables, parse_bool

BAD_INPUT = 2
RUN_FAILED = 1
DEBUG_VARIABLE = "AUTHZKIT_DEBUG"
DEBUG_HINT = f"{DEBUG_VARIABLE}=1 shows the traceback"
# AUTHZKIT_* variables whose values are secrets (client secret, session token, answers).
_SECRET_NAME = re.compile(r"SECRET|TOKEN|ANSWER|PASSWORD|PIN", re.IGNORECASE)
# A JWT or compact JWE: three or more base64url segments joined by dots.
_COMPACT_TOKEN = re.compile(r"[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]{8,}){2,}")


def one_line(text: str) -> str:
    """``text`` with its lines joined by spaces: a failure is read as one line."""
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def debugging() -> bool:
    """True when ``AUTHZKIT_DEBUG`` asks for tracebacks (a malformed value asks for none)."""
    try:
        value = authzkit_variables().get(DEBUG_VARIABLE)
        return value is not None and parse_bool(DEBUG_VARIABLE, value)
    except ConfigError:
        return False


def _configured_secrets() -> Iterable[str]:
    try:
        variables = authzkit_variables()
    except ConfigError:
        return []
    return [value for name, value in variables.items() if _SECRET_NAME.search(name)]


def scrubbed(text: str) -> str:
    """``text`` with configured secrets and anything shaped like a token masked."""
    return _COMPACT_TOKEN.sub(MASK, scrub(text, _configured_secrets()))


def _unexpected(exc: BaseException) -> str:
    message = scrubbed(one_line(str(exc)))
    said = f": {message}" if message else ""
    return f"unexpected {type(exc).__name__}{said} (a bug in authzkit; {DEBUG_HINT})"


def describe(exc: BaseException) -> tuple[int, str]:
    """The exit code and the one line (without the command's name) for ``exc``."""
    if isinstance(exc, ConfigError):
        return BAD_INPUT, one_line(str(exc))
    if isinstance(exc, AuthzError):
        return RUN_FAILED, one_line(str(exc))
    if isinstance(exc, ModuleNotFoundError) and exc.name and extra_of(exc.name):
        return BAD_INPUT, missing_message(exc.name, str(extra_of(exc.name)))
    if isinstance(exc, OSError) and exc.filename is not None:
        reason = exc.strerror or type(exc).__name__
        return RUN_FAILED, scrubbed(f"{exc.filename}: {reason} ({DEBUG_HINT})")
    return RUN_FAILED, _unexpected(exc)


__all__ = [
    "BAD_INPUT",
    "DEBUG_HINT",
    "DEBUG_VARIABLE",
    "RUN_FAILED",
    "debugging",
    "describe",
    "one_line",
    "scrubbed",
]
