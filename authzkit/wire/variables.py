"""The ``AUTHZKIT_*`` variables: which ones mean "a service of your own", and the checks of
their values, each :class:`~authzkit.wire.errors.ConfigError` naming the variable (or the
argument) at fault, and where they are read from (the environment, ``.env`` filling gaps).
What they mean together is :mod:`authzkit.wire.config`.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from authzkit.wire.errors import ConfigError
from authzkit.wire.spec import CLIENT_AUTH_METHODS, DIALECTS, TLS_METHODS

ENV_PREFIX = "AUTHZKIT_"
# Any of these set means the user points authzkit at a service of their own: never the sandbox.
CONNECTION_VARIABLES = (
    "AUTHZKIT_BASE_URL",
    "AUTHZKIT_AUTH_URL",
    "AUTHZKIT_ISSUER",
    "AUTHZKIT_TOKEN_URL",
    "AUTHZKIT_CLIENT_ID",
    "AUTHZKIT_CLIENT_SECRET",
    "AUTHZKIT_CLIENT_KEY_FILE",
    "AUTHZKIT_CLIENT_KEY_ID",
    "AUTHZKIT_CLIENT_AUTH",
    "AUTHZKIT_TOKEN_SCOPE",
    "AUTHZKIT_TOKEN_RESOURCE",
)
# RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), tokens separated by one space.
_SCOPE = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*")
ANSWER_PREFIX = "AUTHZKIT_ANSWER_"


def read_dotenv(path: Path) -> dict[str, str]:
    """``KEY=value`` lines of a ``.env`` file (comments, blanks, quotes and ``export`` allowed)."""
    values: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return values
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").strip()
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{path}:{number}: expected KEY=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


def authzkit_variables(
    environ: Mapping[str, str] | None = None, dotenv: Path | None = Path(".env")
) -> dict[str, str]:
    """The non-empty ``AUTHZKIT_*`` variables: the environment's, ``.env`` filling gaps."""
    merged: dict[str, str] = {}
    if dotenv is not None:
        merged.update(read_dotenv(dotenv))
    merged.update(os.environ if environ is None else environ)
    return {k: v for k, v in merged.items() if k.startswith(ENV_PREFIX) and v != ""}


def parse_range(name: str, value: Any, *, unit: str) -> tuple[float, float]:
    """A non-negative ``(low, high)``: ``None``/empty → ``(0, 0)``; ``5`` or ``"5"`` →
    ``(5, 5)``; ``"0.5-2"`` or ``(0.5, 2)`` → ``(0.5, 2)``. One syntax for every range
    authzkit takes (``--wait-time`` seconds, the sandbox's latency milliseconds); a
    :class:`ConfigError` names ``name`` and shows the syntax in ``unit``."""
    usage = f"{name} must be {unit} (like 5) or a range (like 0.5-2), got {value!r}"
    if value is None or (isinstance(value, str) and not value.strip()):
        return 0.0, 0.0
    try:
        if isinstance(value, str):
            low_text, sep, high_text = value.strip().partition("-")
            low = float(low_text)
            high = float(high_text) if sep else low
        elif isinstance(value, Sequence) and len(value) == 2:
            low, high = (float(v) for v in value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            low = high = float(value)
        else:
            raise ConfigError(usage)
    except (TypeError, ValueError):
        raise ConfigError(usage) from None
    if not (math.isfinite(low) and math.isfinite(high) and 0 <= low <= high):
        raise ConfigError(f"{name} needs 0 <= low <= high {unit}, got {value!r}")
    return low, high


def check_url(name: str, value: str, *, exact: bool = False) -> str:
    """``value`` without a trailing slash (``exact``: as given, for an issuer, whose exact
    spelling is what providers match), or a :class:`ConfigError` naming ``name``."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{name} must be an http(s) URL such as https://host, got {value!r}")
    return value if exact else value.rstrip("/")


def check_dialect(name: str, value: str) -> str:
    """One of :data:`~authzkit.wire.spec.DIALECTS`, or a :class:`ConfigError` naming ``name``."""
    dialect = value.strip()
    if dialect not in DIALECTS:
        raise ConfigError(f"{name} must be one of {', '.join(DIALECTS)}, got {value!r}")
    return dialect


def json_object(name: str, value: str) -> dict[str, Any]:
    """``value`` read as a JSON object (AuthZEN ``properties``), or a :class:`ConfigError`
    naming ``name``."""
    try:
        found = json.loads(value)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise ConfigError(
            f'{name} must be a JSON object such as {{"role": "admin"}}, got {value!r}'
        )
    return found


def check_scope(name: str, value: str) -> str:
    """An OAuth 2.0 ``scope`` (RFC 6749 §3.3: printable ASCII tokens without ``"`` or
    ``\\``, separated by single spaces), or a :class:`ConfigError` naming ``name``."""
    scope = " ".join(token for token in value.split(" ") if token)
    if not _SCOPE.fullmatch(scope):
        raise ConfigError(
            f"{name} must be space-separated scope tokens of printable ASCII "
            f"without '\"' or '\\' (RFC 6749 §3.3), got {value!r}"
        )
    return scope


def check_resource(name: str, value: str) -> str:
    """An RFC 8707 resource indicator: an absolute URI without a fragment."""
    resource = value.strip()
    parts = urlsplit(resource)
    if (
        not parts.scheme
        or not (parts.netloc or parts.path)
        or "#" in resource
        or any(c.isspace() or not c.isprintable() for c in resource)
    ):
        raise ConfigError(
            f"{name} must be an absolute URI without a fragment (RFC 8707), "
            f"such as https://api.example.com, got {value!r}"
        )
    return resource


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def parse_bool(name: str, value: str) -> bool:
    """``value`` as a boolean (1/0, true/false, yes/no, on/off); a ConfigError names ``name``."""
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(f"{name} must be 1/0, true/false, yes/no or on/off, got {value!r}")


def allow_wrong_answers(env: Mapping[str, str]) -> bool | None:
    """``AUTHZKIT_ALLOW_WRONG_ANSWERS`` of ``env`` as a boolean; None when unset or blank."""
    value = env.get("AUTHZKIT_ALLOW_WRONG_ANSWERS", "")
    return parse_bool("AUTHZKIT_ALLOW_WRONG_ANSWERS", value) if value.strip() else None


def default_client_auth(
    client_auth: str, *, issuer: str | None, token_url: str | None, client_key: Any
) -> str:
    """The client authentication to use, by ONE rule for the client's arguments and for
    ``AUTHZKIT_*`` (``Settings.effective_client_auth``): ``client_auth`` as given, except
    that ``"draft"`` (the default) with an ``issuer`` or ``token_url`` means an OAuth 2.0
    endpoint, so it becomes ``private_key_jwt`` when a client key (or its file) is given,
    else ``client_secret_post``."""
    if client_auth not in CLIENT_AUTH_METHODS:
        raise ConfigError(
            f"client_auth must be one of {', '.join(CLIENT_AUTH_METHODS)}, got {client_auth!r}"
        )
    if client_auth == "draft" and (issuer or token_url):
        return "private_key_jwt" if client_key is not None else "client_secret_post"
    return client_auth


# What proves the client's identity, by client authentication (after the default rule): the
# key file for private_key_jwt, the client certificate for mutual TLS, else the secret.
_PROOF_VARIABLES = {
    "private_key_jwt": "AUTHZKIT_CLIENT_KEY_FILE",
    **dict.fromkeys(TLS_METHODS, "AUTHZKIT_TLS_CERT_FILE"),
}


def proof_variable(method: str) -> str:
    """The ``AUTHZKIT_*`` variable a real environment must set besides
    ``AUTHZKIT_CLIENT_ID`` for the client authentication ``method``."""
    return _PROOF_VARIABLES.get(method, "AUTHZKIT_CLIENT_SECRET")


def token_variables(env: Mapping[str, str]) -> dict[str, Any]:
    """``AUTHZKIT_ISSUER``, ``_TOKEN_URL``, ``_CLIENT_AUTH``, ``_CLIENT_KEY_FILE``,
    ``_CLIENT_KEY_ID``, ``_TOKEN_SCOPE`` and ``_TOKEN_RESOURCE``, checked (and, for a
    mutual-TLS client authentication, that ``AUTHZKIT_TLS_CERT_FILE`` is set); a
    :class:`ConfigError` names the variable that is wrong."""
    issuer, token_url = env.get("AUTHZKIT_ISSUER"), env.get("AUTHZKIT_TOKEN_URL")
    client_auth = env.get("AUTHZKIT_CLIENT_AUTH", "draft").strip()
    if client_auth not in CLIENT_AUTH_METHODS:
        raise ConfigError(
            f"AUTHZKIT_CLIENT_AUTH must be one of "
            f"{', '.join(CLIENT_AUTH_METHODS)}, got {client_auth!r}"
        )
    key_file = env.get("AUTHZKIT_CLIENT_KEY_FILE")
    if client_auth == "private_key_jwt" and not key_file:
        raise ConfigError(
            "AUTHZKIT_CLIENT_AUTH is private_key_jwt but AUTHZKIT_CLIENT_KEY_FILE is not set"
        )
    if client_auth in TLS_METHODS and not env.get("AUTHZKIT_TLS_CERT_FILE", "").strip():
        # RFC 8705: the certificate the connection shows is the proof; without it the
        # provider could only refuse, so say so before any request.
        raise ConfigError(
            f"AUTHZKIT_CLIENT_AUTH is {client_auth} but AUTHZKIT_TLS_CERT_FILE is not set "
            f"(the client certificate, with AUTHZKIT_TLS_KEY_FILE its key, proves the client)"
        )
    if client_auth != "draft" and not (issuer or token_url):
        raise ConfigError(
            f"AUTHZKIT_CLIENT_AUTH is {client_auth}, an OAuth 2.0 client "
            f"authentication: set AUTHZKIT_ISSUER or AUTHZKIT_TOKEN_URL too"
        )
    key_id = env.get("AUTHZKIT_CLIENT_KEY_ID", "").strip() or None
    if key_id and not key_file:
        raise ConfigError("AUTHZKIT_CLIENT_KEY_ID is set but AUTHZKIT_CLIENT_KEY_FILE is not")
    scope, resource = env.get("AUTHZKIT_TOKEN_SCOPE"), env.get("AUTHZKIT_TOKEN_RESOURCE")
    return {
        "issuer": check_url("AUTHZKIT_ISSUER", issuer, exact=True) if issuer else None,
        "token_url": check_url("AUTHZKIT_TOKEN_URL", token_url) if token_url else None,
        "client_auth": client_auth,
        "client_key_file": key_file,
        "client_key_id": key_id,
        "token_scope": check_scope("AUTHZKIT_TOKEN_SCOPE", scope) if scope else None,
        "token_resource": (
            check_resource("AUTHZKIT_TOKEN_RESOURCE", resource) if resource else None
        ),
    }


__all__ = [
    "ANSWER_PREFIX",
    "CONNECTION_VARIABLES",
    "ENV_PREFIX",
    "allow_wrong_answers",
    "authzkit_variables",
    "check_dialect",
    "check_resource",
    "check_scope",
    "check_url",
    "default_client_auth",
    "json_object",
    "parse_bool",
    "parse_range",
    "proof_variable",
    "read_dotenv",
    "token_variables",
]
