"""Load tests from a notebook: what :mod:`authzkit.loadtest` offers as ``run``, ``load`` and
``Run``.

``keywords`` turns keyword arguments into the command line of ``authzkit loadtest``, checked
by the command's own option definitions; ``runner`` starts that command as a child process
and stops it; ``live`` shows it while it goes (a widget with a Stop button under a frontend,
a line per interval otherwise); ``runs`` is the :class:`~.runs.Run` a cell gets back and
``run_display`` how it shows. Nothing here imports locust or gevent: the run happens in the
child, as ``authzkit loadtest`` runs it.
"""

__all__: list[str] = []
