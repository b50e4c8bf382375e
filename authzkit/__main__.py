"""``python -m authzkit``: the same command line as the ``authzkit`` script."""

import sys

from authzkit.cli import main

__all__: list[str] = []

sys.exit(main())
