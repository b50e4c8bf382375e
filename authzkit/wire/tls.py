"""TLS: which certificate authorities authzkit trusts and which client certificate it shows.

One home for the rules every connection follows (docs/real-environment.md). Files are
checked when the settings are made, and :func:`tls_failure` tells a TLS failure apart from
"no answer" (docs/internals.md, "TLS").
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from authzkit.wire.errors import ConfigError
from authzkit.wire.variables import authzkit_variables, parse_bool

if TYPE_CHECKING:
    import requests

CA_FILE = "AUTHZKIT_TLS_CA_FILE"
CERT_FILE = "AUTHZKIT_TLS_CERT_FILE"
KEY_FILE = "AUTHZKIT_TLS_KEY_FILE"
INSECURE = "AUTHZKIT_TLS_INSECURE"
# Trust stores other tools honour, in the order authzkit reads them when CA_FILE is unset.
CA_FALLBACKS = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")

# OpenSSL's X509_V_ERR_* codes a certificate check fails with, by what the user should do.
_UNTRUSTED = frozenset({2, 18, 19, 20, 21, 27})
_EXPIRED, _NOT_YET_VALID, _HOSTNAME = 10, 9, 62


@dataclass(frozen=True)
class TlsSettings:
    """The trust store and client certificate of every connection authzkit opens.

    ``ca_file`` is a PEM bundle (or an OpenSSL hashed directory), ``None`` for the system's
    default store; ``ca_setting`` names where it came from, for messages. Build one with
    :meth:`of` (checked) or :meth:`from_env`.
    """

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False
    ca_setting: str = CA_FILE

    @classmethod
    def of(
        cls,
        *,
        ca_file: str | os.PathLike[str] | None = None,
        cert_file: str | os.PathLike[str] | None = None,
        key_file: str | os.PathLike[str] | None = None,
        insecure: bool = False,
        ca_setting: str = CA_FILE,
        names: tuple[str, str] = (CERT_FILE, KEY_FILE),
    ) -> TlsSettings:
        """Checked settings: each file exists and is what its name says, the key belongs
        to the certificate; else a :class:`ConfigError` naming the setting and the path
        (``names``: how the certificate and key are called where they were given)."""
        ca = _readable(ca_setting, ca_file)
        cert, key = _readable(names[0], cert_file), _readable(names[1], key_file)
        if key and not cert:
            raise ConfigError(f"{names[1]} is set but {names[0]} is not (the key's certificate)")
        if ca:
            _check_ca(ca_setting, ca)
        if cert:
            _check_pair(cert, key, names)
        return cls(ca, cert, key, insecure, ca_setting)

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], environ: Mapping[str, str] | None = None
    ) -> TlsSettings:
        """From the ``AUTHZKIT_*`` variables ``env`` (environment and ``.env``), the CA
        falling back to ``REQUESTS_CA_BUNDLE`` then ``SSL_CERT_FILE`` of ``environ``."""
        ca_setting, ca_file = CA_FILE, env.get(CA_FILE) or None
        if ca_file is None:
            ca_setting, ca_file = fallback_ca(environ)
        return cls.of(
            ca_file=ca_file,
            cert_file=env.get(CERT_FILE),
            key_file=env.get(KEY_FILE),
            insecure=parse_bool(INSECURE, env.get(INSECURE, "0")),
            ca_setting=ca_setting,
        )

    @property
    def verify(self) -> str | bool:
        """requests' ``verify=``: the CA bundle, ``True`` (the default store) or ``False``."""
        if self.insecure:
            return False
        return self.ca_file or True

    @property
    def cert(self) -> tuple[str, str] | str | None:
        """requests' ``cert=``: the client certificate and its key, if any."""
        if self.cert_file is None:
            return None
        return (self.cert_file, self.key_file) if self.key_file else self.cert_file

    @property
    def warning(self) -> str | None:
        """The line a command prints when certificates go unchecked, else ``None``."""
        if not self.insecure:
            return None
        return (
            f"warning: {INSECURE} is set: TLS certificates are NOT verified "
            f"(anyone on the path can read and answer authzkit's requests)"
        )

    def record(self) -> dict[str, Any]:
        """What a run's ``run.json`` keeps: the trust store's path and where it came from,
        the client certificate's path, and whether verification was off (paths only)."""
        return {
            "ca_file": self.ca_file,
            "ca_setting": self.ca_setting if self.ca_file else None,
            "client_certificate": self.cert_file,
            "insecure": self.insecure,
        }

    def requests_options(self) -> dict[str, Any]:
        """``verify=`` and ``cert=`` for one requests call (a session's own ``verify`` is
        overridden by ``REQUESTS_CA_BUNDLE`` in requests, so authzkit passes them per call)."""
        return {"verify": self.verify, "cert": self.cert}

    def session(self) -> requests.Session:
        """A ``requests.Session`` that sends every request with these settings."""
        from authzkit.wire.sessions import TlsSession

        return TlsSession(self)

    def ssl_context(self) -> ssl.SSLContext:
        """A client ``SSLContext`` with these settings (for geventhttpclient and any library
        that takes a context rather than paths)."""
        context = ssl.create_default_context(
            cafile=self.ca_file if self.ca_file and not os.path.isdir(self.ca_file) else None,
            capath=self.ca_file if self.ca_file and os.path.isdir(self.ca_file) else None,
        )
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file, password=_no_password)
        return context

    def remedy(self) -> str:
        """Where the trust store comes from, for a failure line."""
        if self.ca_file:
            return f"{self.ca_setting}={self.ca_file} is trusted"
        return "the system's CA store is trusted"


def file_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The TLS file variables of ``environ`` and ``.env`` with absolute paths: what a child
    process needs to find the same files from its own working directory."""
    given = {**authzkit_variables(environ), **{n: environ[n] for n in CA_FALLBACKS if n in environ}}
    return {
        name: str(Path(given[name]).expanduser().absolute())
        for name in (CA_FILE, CERT_FILE, KEY_FILE, *CA_FALLBACKS)
        if given.get(name)
    }


def fallback_ca(environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """The CA bundle other tools would use, and its variable: ``REQUESTS_CA_BUNDLE``, then
    ``SSL_CERT_FILE`` (of ``environ``, default ``os.environ``); ``(CA_FILE, None)`` when
    neither is set."""
    outside = os.environ if environ is None else environ
    for name in CA_FALLBACKS:
        if outside.get(name):
            return name, outside[name]
    return CA_FILE, None


def _no_password() -> bytes:
    """OpenSSL's password callback: an encrypted key fails instead of prompting a terminal."""
    return b""


def _readable(setting: str, value: str | os.PathLike[str] | None) -> str | None:
    """``value`` as a path when it names a readable file (or a directory, for a CA), else a
    :class:`ConfigError` naming ``setting``; ``None`` or empty stays ``None``."""
    if value is None or str(value).strip() == "":
        return None
    path = Path(value).expanduser()
    if not path.exists():
        raise ConfigError(f"{setting}: no such file: {path}")
    if path.is_dir() and setting not in (CA_FILE, *CA_FALLBACKS):
        raise ConfigError(f"{setting}: {path} is a directory, not a PEM file")
    if not os.access(path, os.R_OK):
        raise ConfigError(f"{setting}: cannot read {path} (permission denied)")
    return str(path)


def _check_ca(setting: str, path: str) -> None:
    if os.path.isdir(path):
        return
    stat = os.stat(path)
    if not _holds_certificates(path, stat.st_mtime_ns, stat.st_size):
        raise ConfigError(f"{setting}: {path} holds no PEM certificate")


@lru_cache(maxsize=32)
def _holds_certificates(path: str, mtime_ns: int, size: int) -> bool:
    """Whether OpenSSL loads the CA file, once per version of the file (``mtime_ns`` and
    ``size`` tell versions apart): a system bundle takes tens of milliseconds to parse, and
    every client and every settings object checks its CA."""
    try:
        ssl.create_default_context(cafile=path)
    except (ssl.SSLError, ValueError):
        return False
    return True


def _check_pair(cert: str, key: str | None, names: tuple[str, str]) -> None:
    """The client certificate loads, with its key (a mismatch is OpenSSL's
    ``KEY_VALUES_MISMATCH``; an encrypted key fails on the empty password)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_cert_chain(cert, key, password=_no_password)
    except ssl.SSLError as exc:
        reason = exc.reason or ""
        if "MISMATCH" in reason:
            raise ConfigError(
                f"{names[1]}: {key} is not the key of the certificate in {names[0]} ({cert})"
            ) from None
        if key is None:
            raise ConfigError(
                f"{names[0]}: {cert} holds no certificate with its private key "
                f"(set {names[1]} to the key file)"
            ) from None
        raise ConfigError(
            f"{names[0]}/{names[1]}: cannot load {cert} with {key} "
            f"(a PEM certificate and an unencrypted PEM key are needed)"
        ) from None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps: causes, contexts, urllib3's ``reason``, exception args."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        wrapped = [current.__cause__, current.__context__, getattr(current, "reason", None)]
        wrapped.extend(current.args)
        todo.extend(w for w in wrapped if isinstance(w, BaseException))


def tls_failure(exc: BaseException, url: str, tls: TlsSettings | None = None) -> str | None:
    """One line for a TLS failure behind ``exc`` (the URL, what TLS said, the setting that
    fixes it), or ``None`` when ``exc`` is no TLS failure (then it is "no answer").

    A server that demands a client certificate may send TLS 1.3's ``certificate required``
    alert or just close the connection after the handshake (an EOF, or a reset): on an
    ``https`` URL both are read as a handshake the server refused."""
    settings = tls or TlsSettings()
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"TLS with {url} failed: {_verification(cause, settings)}"
        if isinstance(cause, ssl.SSLEOFError):
            return f"TLS with {url} failed: {_closed('the server closed the connection', settings)}"
        if isinstance(cause, ssl.SSLError):
            return f"TLS with {url} failed: {_handshake(cause, settings)}"
    if url.startswith("https:") and any(isinstance(c, ConnectionResetError) for c in _causes(exc)):
        return f"TLS with {url} failed: {_closed('the server reset the connection', settings)}"
    return None


def _verification(error: ssl.SSLCertVerificationError, tls: TlsSettings) -> str:
    said = (error.verify_message or error.reason or str(error)).rstrip(".")
    code = error.verify_code
    if code == _HOSTNAME:
        return (
            f"{said}: the certificate names another host (use a host name the "
            f"certificate was issued for in the URL)"
        )
    if code in (_EXPIRED, _NOT_YET_VALID):
        return f"{said}: the server's certificate is outside its validity dates (renew it)"
    if code in _UNTRUSTED:
        return (
            f"{said}: the server's certificate is not signed by a CA authzkit trusts "
            f"({tls.remedy()}): set {CA_FILE} to the CA bundle that signed it"
        )
    return f"{said} ({tls.remedy()}; {CA_FILE} sets the CA bundle)"


def _closed(what: str, tls: TlsSettings) -> str:
    """A handshake the server ended without a word: what a server requiring a client
    certificate does when none (or one it does not accept) is shown."""
    if tls.cert_file is None:
        return (
            f"{what} during the handshake, as a server that requires a client certificate "
            f"does ({CERT_FILE} is not set): set {CERT_FILE} and {KEY_FILE}"
        )
    return (
        f"{what} during the handshake: it may not accept the client certificate in "
        f"{CERT_FILE} ({tls.cert_file})"
    )


def _handshake(error: ssl.SSLError, tls: TlsSettings) -> str:
    reason = (error.reason or "").upper()
    said = error.reason.replace("_", " ").lower() if error.reason else str(error)
    if "CERTIFICATE_REQUIRED" in reason or "HANDSHAKE_FAILURE" in reason:
        given = f"{CERT_FILE}={tls.cert_file}" if tls.cert_file else f"{CERT_FILE} is not set"
        return (
            f"the server refused the handshake ({said}): it asks for a client certificate "
            f"({given}): set {CERT_FILE} and {KEY_FILE}"
        )
    if any(alert in reason for alert in ("UNKNOWN_CA", "BAD_CERTIFICATE", "DECRYPT_ERROR")):
        return (
            f"the server did not accept the client certificate in {CERT_FILE} "
            f"({tls.cert_file}): {said}"
        )
    if "WRONG_VERSION_NUMBER" in reason or "RECORD_LAYER" in reason:
        return f"{said}: the server does not speak TLS there (is the URL http://?)"
    return f"{said} ({tls.remedy()})"


__all__ = [
    "CA_FALLBACKS",
    "CA_FILE",
    "CERT_FILE",
    "INSECURE",
    "KEY_FILE",
    "TlsSettings",
    "fallback_ca",
    "file_variables",
    "tls_failure",
]
