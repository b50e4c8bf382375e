"""``TlsSession``: a requests session that sends every request with the TLS settings.

Apart from :mod:`authzkit.wire.tls` so that reading the settings imports no requests: a
sandbox process reads them but never sends a request.
"""

from __future__ import annotations

from typing import Any, Protocol

import requests


class _Tls(Protocol):
    """What a session takes from :class:`~authzkit.wire.tls.TlsSettings`."""

    @property
    def verify(self) -> str | bool: ...

    @property
    def cert(self) -> tuple[str, str] | str | None: ...

    @property
    def insecure(self) -> bool: ...


class TlsSession(requests.Session):
    """A ``requests.Session`` whose every request carries :class:`TlsSettings` (unless the
    call passes its own ``verify=``/``cert=``)."""

    def __init__(self, tls: _Tls) -> None:
        super().__init__()
        self.tls = tls
        self.verify = tls.verify
        self.cert = tls.cert
        if tls.insecure:
            import urllib3

            # The command already said so, once; urllib3 would say it on every request.
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        """requests' ``request`` with this session's ``verify``/``cert`` made explicit."""
        kwargs.setdefault("verify", self.tls.verify)
        kwargs.setdefault("cert", self.tls.cert)
        return super().request(method, url, *args, **kwargs)


__all__ = ["TlsSession"]
