"""Deprecated names: one warning each, naming what replaces them and the release that removes
them (:data:`REMOVED_IN`, the same for every name; CHANGELOG.md lists them).

An old module path is a small module at that path that calls :func:`deprecated` and offers
its new home's names; an old attribute is answered by its module's ``__getattr__``, which
calls :func:`deprecated` and keeps the value, so each name warns once per process.
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType

# The release that removes every deprecated name.
REMOVED_IN = "0.3.0"


def deprecated(old: str, new: str) -> None:
    """Warn that ``old`` is deprecated, is removed in :data:`REMOVED_IN` and ``new`` replaces
    it. Called from the old module's body or its ``__getattr__``; the warning points at the
    line that imported or read the old name."""
    warnings.warn(
        f"{old} is deprecated and will be removed in authzkit {REMOVED_IN}: use {new} instead",
        DeprecationWarning,
        stacklevel=_user_level(sys._getframe(1)),
    )


def _user_level(frame: FrameType) -> int:
    """The ``stacklevel`` (counted from :func:`deprecated`) of the first frame above ``frame``
    (the old module's body or ``__getattr__``) that is not the import machinery: importlib's
    own frames, which :func:`warnings.warn` skips by itself, and a loader's ``exec_module``
    (pytest's assertion rewriter runs every module of a pytest plugin's distribution)."""
    level = 2
    caller = frame.f_back
    while caller is not None:
        name = caller.f_code.co_filename
        if not ("importlib" in name and "_bootstrap" in name):
            level += 1
            if caller.f_code.co_name != "exec_module":
                break
        caller = caller.f_back
    return level


__all__ = ["REMOVED_IN", "deprecated"]
