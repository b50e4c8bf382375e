"""Helpers shared by the tests (``tests/`` is on ``sys.path`` while testing: ``import
support.clocks``). Fixtures live in ``tests/conftest.py``; no test imports a conftest or
another test module."""
