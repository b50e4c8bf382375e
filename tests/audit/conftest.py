"""The audit's sandbox, one per dialect, for both of its test files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from audit.kit import Audit, audit_environment
from authzkit.wire.spec import DIALECTS


@pytest.fixture(scope="module", params=DIALECTS)
def audit(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Audit]:
    """See :func:`audit.kit.audit_environment`."""
    yield from audit_environment(request.param, tmp_path_factory)
