"""The AuthZEN corpora authzkit keeps as its own data: the certification scenario (test ids,
requests, mandated results) and the interop decision cases (todo, gateway, search), each file
naming the repository, paths and commit it was taken from, and the version it encodes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

CERTIFICATION = "certification"
INTEROP = ("todo", "gateway", "search")


@dataclass(frozen=True)
class Corpus:
    """One data file: its name, what it is, where it came from, and its entries."""

    name: str
    title: str
    version: str
    origin: dict[str, Any] = field(repr=False)
    entries: tuple[dict[str, Any], ...] = field(repr=False)

    @property
    def source(self) -> str:
        """``repository@commit:path[, path]`` for a report line."""
        origin = self.origin
        return f"{origin['repository']}@{origin['commit'][:12]}:{', '.join(origin['paths'])}"


@cache
def load(name: str) -> Corpus:
    """The corpus called ``name`` (``certification`` or one of :data:`INTEROP`)."""
    text = resources.files(__package__).joinpath("corpora", f"{name}.json").read_text("utf-8")
    data = json.loads(text)
    entries = data["tests"] if name == CERTIFICATION else data["cases"]
    return Corpus(name, data["title"], data["version"], data["origin"], tuple(entries))


__all__ = ["CERTIFICATION", "INTEROP", "Corpus", "load"]
