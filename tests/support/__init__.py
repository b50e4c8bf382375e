"""Every helper of the tests, in one package imported one way: ``from support.X import …``.

``tests/`` is on ``sys.path`` while testing, so ``support`` is a top-level package. The rule
(held by ``tests/test_test_layout.py``):

- A module under ``tests/`` that is not a test module (``test_*.py``), a ``conftest.py`` or
  an ``__init__.py`` lives here, whether one folder uses it or several (``support.fake_service``,
  ``support.loadtest``, ``support.sandbox_calls``, ``support.leaks``…), and so does a script a
  test runs as a child process (``support.gevent_probe``). ``tests/`` itself holds only the
  root conftest and test modules.
- It is imported as ``from support.X import …``: no relative import (``from .fakes``), no
  import of another test folder (``from core.fakes``) and no test module importing another.
- Every fixture name is defined once, across ``tests/`` and ``notebooks/conftest.py``.
  Fixtures several folders use live in ``tests/conftest.py``; a folder has a conftest only for
  fixtures (or hooks) of its own, used by none of the other folders.
"""
