"""What runs inside the Locust process during a run: the users and what they record.

:mod:`~authzkit.loadtest.record.users` (the user classes a locustfile imports),
:mod:`~authzkit.loadtest.record.process`, :mod:`~authzkit.loadtest.record.listeners` and
:mod:`~authzkit.loadtest.record.start` (Locust's command, as authzkit starts it) import
locust; everything else here is free of it and testable in-process: the shared
state (``context``), who the users act as (``subjects``), a user's task (``tasks``), the
open model's HTTP (``direct``) and schedule (``schedule``), the latency histograms
(``histograms``), the second-by-second timeline (``timeline``), the bodies sent and received
(``data``), the workers a master heard from (``workers``) and the files a run leaves
(``summary``).
"""

__all__: list[str] = []
