"""The AuthZEN explorer on the embedded AuthZEN sandbox: each choice is one evaluation whose
decision, exchange and curl it shows; the draft's explorer refuses an AuthZEN PDP in words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from authzkit import connect
from authzkit.shared.connection import Connection
from authzkit.widgets import AuthzenExplorer, PolicyExplorer
from authzkit.wire.errors import ConfigError

pytestmark = pytest.mark.usefixtures("no_authzkit_env")


@pytest.fixture
def authzen_connection() -> Iterator[Connection]:
    with connect(dialect="authzen") as connection:
        yield connection


def test_each_choice_is_one_evaluation_and_its_decision(authzen_connection: Connection) -> None:
    explorer = AuthzenExplorer(authzen_connection)
    try:
        lines = repr(explorer).splitlines()
        assert lines[0] == (
            "AuthzenExplorer: subject user alice · action read · resource record record-1 "
            "(status=active)"
        )
        assert lines[1] == "  decision: authorized"
        assert lines[2].endswith("/access/v1/evaluation -> 200")
        asked = len(explorer.recorder.exchanges)
        explorer.subject.value = 1  # bob, an admin: may not write an active record
        explorer.action.value = "write"
        assert explorer.decision is not None and explorer.decision.status == "denied"
        assert len(explorer.recorder.exchanges) == asked + 2
        assert '"id":"bob"' in explorer.curl and "denied" in explorer.outcome.value
    finally:
        explorer.close()


def test_the_draft_explorer_refuses_an_authzen_pdp(authzen_connection: Connection) -> None:
    with pytest.raises(ConfigError, match="use AuthzenExplorer"):
        PolicyExplorer(authzen_connection)
