"""Load tests from a notebook: what :mod:`authzkit.loadtest` offers as ``run``, ``load``,
``Run`` and ``find_capacity``.

``keywords`` turns keyword arguments into the command's line, checked by its own options;
``background`` runs that command as a child process of the kernel; ``start`` is ``run(...)``
and ``live`` its view while it goes; ``handle`` is the :class:`~.handle.Run` a cell holds and
``run_display`` how it shows; ``capacity_search`` is ``find_capacity``. Nothing here imports
locust or gevent: the run happens in the child.
"""

__all__: list[str] = []
