"""A PDP's metadata, found at its well-known URL: which endpoint serves which API. A
document whose ``policy_decision_point`` is not the PDP it was fetched for is refused (the
spec's mix-up defence: a :class:`ConfigError`, nothing of it used); a PDP that publishes
none (404) is reached at the default paths; a member the document leaves out is an API
the PDP does not offer (:class:`NotOfferedError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from authzkit.client.authzen.exchange import Exchange, error_of, json_object
from authzkit.wire.authzen import (
    ENDPOINT_MEMBERS,
    POLICY_DECISION_POINT,
    endpoint_url,
    metadata_problem,
    metadata_url,
)
from authzkit.wire.errors import AuthzError, ConfigError

NO_METADATA = (404, 410)  # what a PDP that publishes no metadata answers


class NotOfferedError(AuthzError):
    """The PDP's metadata names no endpoint for this API: it does not offer it."""


@dataclass(frozen=True)
class PdpMetadata:
    """What a PEP knows of a PDP: its identifier and, when it publishes one, its metadata
    document (``None``: every API at its default path)."""

    pdp: str
    document: Mapping[str, Any] | None = field(default=None, repr=False)

    @property
    def published(self) -> bool:
        """True when the PDP published a metadata document."""
        return self.document is not None

    def offers(self, member: str) -> bool:
        """True when the API of endpoint ``member`` is offered (always, without metadata)."""
        if self.document is None:
            return True
        found = self.document.get(member)
        return isinstance(found, str) and bool(found)

    def url(self, member: str) -> str:
        """The URL of endpoint ``member``, or :class:`NotOfferedError` when not offered."""
        if not self.offers(member):
            raise NotOfferedError(
                f"the PDP at {self.pdp} does not offer this API (its metadata names no {member})"
            )
        return endpoint_url(self.pdp, member, self.document)

    def endpoints(self) -> dict[str, str | None]:
        """Every endpoint member with its URL (``None`` for an API not offered)."""
        return {m: self.url(m) if self.offers(m) else None for m in ENDPOINT_MEMBERS}


def discover(exchange: Exchange, pdp: str) -> PdpMetadata:
    """GET ``pdp``'s metadata: a checked :class:`PdpMetadata`; without a document (404)
    one with the default paths. A refused document is a :class:`ConfigError` naming the
    URL and the reason."""
    url = metadata_url(pdp)
    response = exchange.call("GET", url, name="metadata")
    if response.status in NO_METADATA:
        return PdpMetadata(pdp)
    if response.status != 200:
        raise error_of(response, "metadata", url)
    document = json_object(response, f"the metadata at {url}")
    problem = metadata_problem(document, pdp)
    if problem is not None:
        raise ConfigError(f"refused the AuthZEN metadata at {url}: {problem}")
    return PdpMetadata(pdp, document)


def publishes_metadata(exchange: Exchange, pdp: str) -> bool:
    """True when ``pdp`` answers its well-known metadata URL with a JSON object naming a
    ``policy_decision_point`` (whether it is the right one is :func:`discover`'s check)."""
    response = exchange.call("GET", metadata_url(pdp), name="metadata")
    if response.status != 200:
        return False
    body = response.body()
    return isinstance(body, Mapping) and POLICY_DECISION_POINT in body


__all__ = ["NO_METADATA", "NotOfferedError", "PdpMetadata", "discover", "publishes_metadata"]
