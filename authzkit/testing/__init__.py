"""What the pytest plugin (:mod:`authzkit.pytest_plugin`) is made of: the sandbox settings
a marker or an option gives (:mod:`~authzkit.testing.settings`, ``authzkit sandbox``'s own
parser), the session's sandboxes (:mod:`~authzkit.testing.sandboxes`), a test's view of one
and its expectations (:mod:`~authzkit.testing.view`), and the trace of a failing test
(:mod:`~authzkit.testing.trace`). Importing this package imports none of them.
"""

from __future__ import annotations

__all__: list[str] = []
