"""What runs inside the Locust process during a run: the users and what they record.

Only ``users``, ``locust_setup``, ``listeners`` and ``start`` import Locust; the rest is free of
it and tested in-process. The parent process uses :mod:`~authzkit.loadtest.record.face`
alone (docs/internals.md, "Inside the Locust process").
"""

__all__: list[str] = []
