"""The notebooks are tests: collected through nbval whenever pytest is pointed at them.

``pytest`` (``testpaths``), ``pytest notebooks`` and ``pytest notebooks/06_….ipynb`` all load
this file, which loads nbval (``addopts`` keeps it from loading in every pytest process) and
switches it on (``--nbval``, outputs sanitized by ``sanitize.cfg``): ``pytest tests/core``
never loads it and runs without nbval installed (the ``[sandbox]`` extra and pytest are
enough).
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import pytest

NBVAL = "nbval.plugin"
pytest_plugins = (NBVAL,) if find_spec("nbval") is not None else ()

SANITIZE = Path(__file__).with_name("sanitize.cfg")


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.hasplugin(NBVAL):
        raise pytest.UsageError(
            'the notebooks are validated by nbval: pip install -c constraints.txt -e ".[dev]"'
        )
    option = config.option
    if not (option.nbval or option.nbval_lax):
        option.nbval = True
    if not option.nbval_sanitize_with:
        option.nbval_sanitize_with = str(SANITIZE)
