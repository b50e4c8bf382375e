"""The audit's sandbox, one per dialect, for both of its test files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit.wire.spec import AUTHORIZE_DIALECTS

from support.audit import Audit, audit_environment


@pytest.fixture(scope="module", params=AUTHORIZE_DIALECTS)
def audit(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Audit]:
    """See :func:`support.audit.audit_environment`."""
    yield from audit_environment(request.param, tmp_path_factory)
