"""Whether a secret shows in text a user can see, without false alarms from random ids.

A short numeric secret (the demo PINs ``1234``/``4321``, a 6-digit TOTP code) turns up by
chance inside the random digits of what tests search: UUIDs (a uuid4's third group starts
with ``4``, so ``-4321-`` is one in 4,096), widget model ids, float timings, ports. Such a
secret counts as shown only as a number of its own: not inside a longer run of letters,
digits or hyphens, and not as the digits of a decimal fraction. A leak still shows the way a
person would read it (``"pin": "1234"``, ``pin=1234``, ``PIN 1234``). Other secrets are
long and distinctive: any occurrence counts.
"""

from __future__ import annotations

import re


def shows(secret: str, text: str) -> bool:
    """True when ``secret`` is visible in ``text``."""
    if not secret.isdigit():
        return secret in text
    alone = rf"(?<![\w-])(?<!\d\.){re.escape(secret)}(?![\w-])(?!\.\d)"
    return re.search(alone, text) is not None
