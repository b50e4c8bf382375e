"""Is the service at a URL an authzkit sandbox? Its HTTP answer says so.

:func:`identify` is one GET of ``/sandbox/v1/world``; a sandbox answers its world with
:data:`~authzkit.wire.spec.SANDBOX_IDENTITY` beside it, any other service does not. It lives
in the wire layer so that the core client recognises a sandbox with ``requests`` alone:
against a real environment nothing of :mod:`authzkit.sandbox` is imported (its server needs
the ``[sandbox]`` extra). :func:`send` is the retry loop it shares with the sandbox's admin
client (:class:`~authzkit.sandbox.admin.SandboxAdmin`).
"""

from __future__ import annotations

import time
from typing import Any

import requests
import urllib3

from authzkit.wire.errors import TlsError, TransportError
from authzkit.wire.spec import SANDBOX_IDENTITY, SANDBOX_WORLD_PATH
from authzkit.wire.tls import TlsSettings, tls_failure

RETRY_PAUSES_S = (0.25, 0.5, 1.0, 2.0)
"""The pauses before each new try of a call to a sandbox that reached nothing (an admin
call, or :func:`identify`'s GET). A container network's DNS (podman's aardvark-dns) fails
lookups for a moment while other containers join it, so a master starting beside its
workers may find no answer at first, or a second after it had one. Any call is tried again
when no connection was made for a name that did not resolve (the request never left); a GET
also when the connection broke (it is safe to send twice, a rotation or a reset is not). A
refused connection is an answer, said at once: the name resolved and nothing listens there
(a typo in a port, a service that is down). So is a TLS failure."""


def _reason(exc: requests.RequestException) -> object:
    """What urllib3 raised under requests' exception (its ``MaxRetryError`` carries it as
    ``reason``), or the exception's first argument."""
    inner = exc.args[0] if exc.args else None
    return getattr(inner, "reason", inner)


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` (requests' or urllib3's) is a connection the host refused."""
    seen: BaseException | None = exc
    for _ in range(8):  # requests' error -> urllib3's MaxRetryError -> NewConnectionError -> OS
        if seen is None or isinstance(seen, ConnectionRefusedError):
            return seen is not None
        inner = _reason(seen) if isinstance(seen, requests.RequestException) else None
        seen = inner if isinstance(inner, BaseException) else seen.__cause__ or seen.__context__
    return False


def _again(method: str, exc: requests.RequestException) -> bool:
    """Whether a call that failed with ``exc`` may be sent again (see :data:`RETRY_PAUSES_S`);
    a timeout has waited long enough already, a refusal is an answer."""
    if not isinstance(exc, requests.ConnectionError) or isinstance(exc, requests.Timeout):
        return False
    if refused(exc):
        return False
    return method == "GET" or isinstance(_reason(exc), urllib3.exceptions.NewConnectionError)


def cause_of(exc: requests.RequestException) -> str:
    """What urllib3 said under requests' ``ConnectionError`` (``NameResolutionError``,
    ``NewConnectionError``, ``RemoteDisconnected``...), else the exception's own name."""
    inner = _reason(exc)
    if isinstance(inner, BaseException) and inner.args and isinstance(inner.args[-1], Exception):
        inner = inner.args[-1]  # ProtocolError("Connection aborted.", RemoteDisconnected())
    return type(inner if isinstance(inner, BaseException) else exc).__name__


def send(
    session: requests.Session,
    method: str,
    url: str,
    *,
    timeout: float,
    tls: TlsSettings | None,
    body: dict[str, Any] | None = None,
) -> requests.Response:
    """One call, sent again after each pause of :data:`RETRY_PAUSES_S` while it reached
    nothing; its last failure is raised as requests raised it."""
    pauses = iter(RETRY_PAUSES_S)
    while True:
        try:
            return session.request(
                method, url, json=body, timeout=timeout, headers={"Accept": "application/json"}
            )
        except requests.RequestException as exc:
            again = _again(method, exc) and tls_failure(exc, url, tls) is None
            pause = next(pauses, None) if again else None
            if pause is None:
                raise
            time.sleep(pause)


def identify(
    base_url: str,
    *,
    timeout: float,
    session: requests.Session | None = None,
    tls: TlsSettings | None = None,
) -> dict[str, Any] | None:
    """The world document of the service at ``base_url`` when it says it is an authzkit
    sandbox (:data:`~authzkit.wire.spec.SANDBOX_IDENTITY` beside the world), else ``None``.

    One GET (sent again while it reaches nothing, see :data:`RETRY_PAUSES_S`). No answer at
    all is a :class:`TransportError` naming ``base_url`` (nothing else could work either);
    any other failure (a 404, not JSON, no identity) means "not a sandbox", so a real
    environment, or a sandbox behind a proxy that hides ``/sandbox/v1/*``, keeps every rule
    of a real environment. A TLS failure is a :class:`TlsError` saying what TLS said: the
    service did answer.
    """
    own = session is None
    session = session or (tls or TlsSettings()).session()
    try:
        url = base_url.rstrip("/") + SANDBOX_WORLD_PATH
        response = send(session, "GET", url, timeout=timeout, tls=tls)
        document = response.json() if response.status_code == 200 else None
    except (requests.ConnectionError, requests.Timeout) as exc:
        failure = tls_failure(exc, base_url, tls)
        if failure is not None:
            raise TlsError(failure) from None
        why = "connection refused" if refused(exc) else type(exc).__name__
        raise TransportError(
            f"no answer from {base_url} ({why}): is AUTHZKIT_BASE_URL right, and the service up?"
        ) from None
    except (requests.RequestException, ValueError):
        document = None
    finally:
        if own:
            session.close()
    if not isinstance(document, dict) or not isinstance(document.get(SANDBOX_IDENTITY), dict):
        return None
    return document


__all__ = ["RETRY_PAUSES_S", "cause_of", "identify", "refused", "send"]
