"""Tests of the pytest plugin run partner-style projects with ``pytester``.

``pytester`` is pytest's own plugin for testing plugins; it is enabled here for this folder
only (``-p pytester`` would enable it for the whole run).
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


# A partner team's resource server, reduced to one function: may this subject see this
# account's balance? It calls authorize with whatever client it is given.
PARTNER_SERVICE = """
from authzkit import AuthzClient
from authzkit.wire.errors import AuthzError


def may_show_balance(client: AuthzClient, session_token: str, account_id: str) -> bool:
    try:
        client.authorize("show_account_balance_public", resource_id=account_id,
                         subject_token=session_token)
    except AuthzError:
        return False
    return True


def service_from_env() -> AuthzClient:
    return AuthzClient.from_env()
"""


@pytest.fixture
def partner(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with the partner's service module (``service.py``) and no ini file of its
    own (``-p no:cacheprovider`` keeps it clean)."""
    pytester.makepyfile(service=PARTNER_SERVICE)
    pytester.syspathinsert()
    return pytester
