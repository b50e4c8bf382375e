"""The AuthZEN 1.0 side of the client: a PEP's calls to a standard PDP (discovery, one
evaluation, batch evaluations, the three searches), each with an ``X-Request-ID`` whose
echo is checked. :class:`~authzkit.client.facade.AuthzClient` with ``dialect="authzen"``
delegates here; the wire facts are :mod:`authzkit.wire.authzen`.
"""

from authzkit.client.authzen.client import AuthzenClient
from authzkit.client.authzen.metadata import NotOfferedError, PdpMetadata

__all__ = ["AuthzenClient", "NotOfferedError", "PdpMetadata"]
