"""How a widget of ours reads where no widget frontend is attached (nbval, a saved notebook
rendered on GitHub, a terminal): as its plain-text ``summary()``, beside the widget view."""

from __future__ import annotations

from typing import Any


class TextFallback:
    """Mixin: ``repr`` and the ``text/plain`` of the display bundle are ``summary()``; a
    frontend still renders ``widget``."""

    widget: Any

    def summary(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.summary()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.summary()
        return bundle


__all__ = ["TextFallback"]
