"""The policy explorer, driven without a frontend: setting a dropdown runs its observers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ipywidgets import Widget

w = pytest.importorskip("ipywidgets", reason="the notebooks extra is not installed")

from authzkit import Recorder, Settings, connect  # noqa: E402
from authzkit.shared.connection import Connection  # noqa: E402
from authzkit.widgets import PolicyExplorer  # noqa: E402

from support.leaks import shows  # noqa: E402

ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"
BOB_ACCOUNT = "b3e9f1a4-2d7c-4a6b-9e8f-1c2d3e4f5a33"


def widget_states(root: Widget) -> str:
    """Every state the explorer's widgets would sync to a frontend (and a saved notebook)."""
    seen: list[dict[str, Any]] = []

    def walk(widget: Widget) -> None:
        seen.append(widget.get_state())
        for child in getattr(widget, "children", ()):
            walk(child)

    walk(root)
    return json.dumps(seen, default=str)


def test_the_first_selection_is_asked_at_once(connection: Connection) -> None:
    explorer = PolicyExplorer(connection)
    assert list(explorer.subject.options) == ["alice", "bob"]
    assert explorer.action.options[0] == "show_account_balance_public"
    assert [value for _, value in explorer.resource.options][-1] == BOB_ACCOUNT
    assert explorer.cell is not None and explorer.cell.outcome == "authorized"
    assert "authorized" in explorer.outcome.value and "HTTP 200" in explorer.outcome.value
    assert "show_account_balance_public" in explorer.curl
    explorer.close()


def test_selecting_values_updates_outcome_exchange_and_curl(connection: Connection) -> None:
    explorer = PolicyExplorer(connection)
    explorer.action.value = "transfer_funds"
    assert explorer.cell is not None and explorer.cell.outcome == "challenge: pin"
    assert explorer.exchange is not None and explorer.exchange.status == 403
    assert '"transfer_funds"' in explorer.curl and ALICE_ACCOUNT in explorer.curl
    assert "challenge: pin" in explorer.outcome.value
    assert "srn:error:challenge_required" in explorer.details.value

    explorer.resource.value = BOB_ACCOUNT
    assert explorer.cell.outcome == "unauthorized"
    assert BOB_ACCOUNT in explorer.curl
    assert "srn:error:unauthorized" in explorer.details.value

    explorer.subject.value = "bob"  # bob's own account: his challenge
    assert explorer.cell.outcome == "challenge: pin"
    text = explorer.summary()
    assert text.startswith(
        "PolicyExplorer: subject bob · action transfer_funds · resource b3e9f1a4… (bob)"
    )
    assert "  outcome: challenge: pin (HTTP 403)" in text
    assert "  curl: curl -sS -X POST" in text
    assert explorer._repr_mimebundle_()["text/plain"] == text
    copy = explorer._repr_mimebundle_()["text/html"]  # what an HTML export shows
    assert 'class="authzkit-static-copy"' in copy
    assert "subject <b>bob</b> &middot; action <code>transfer_funds</code>" in copy
    assert "<b>challenge: pin</b></span> &mdash; HTTP 403" in copy
    assert "srn:error:challenge_required" in copy and "curl -sS -X POST" in copy
    assert "<select" not in copy and "<script" not in copy
    explorer.close()


def test_only_plain_requests_are_sent(connection: Connection) -> None:
    explorer = PolicyExplorer(connection)
    for action in ("transfer_funds", "close_account", "add_payee"):
        explorer.action.value = action
    assert connection.sandbox is not None
    stats = connection.sandbox.stats()
    assert stats["authorize"] == {"authorized": 1, "srn:error:challenge_required": 3}
    assert all(
        "challenge_solution" not in json.dumps(e.request_body) for e in explorer.recorder.exchanges
    )
    explorer.close()


def test_no_secret_in_widget_state_or_output(
    connection: Connection, world_secrets: list[str]
) -> None:
    explorer = PolicyExplorer(connection)
    tokens = []
    for subject in ("alice", "bob"):
        explorer.subject.value = subject
        explorer.action.value = "add_payee" if subject == "bob" else "transfer_funds"
    tokens.append(connection.client.access_token())
    shown = (
        widget_states(explorer.widget)
        + explorer.summary()
        + repr(explorer)
        + explorer._repr_mimebundle_()["text/html"]
    )
    assert "$SUBJECT_TOKEN" in shown and "$ACCESS_TOKEN" in shown
    for secret in [*world_secrets, *tokens]:
        assert not shows(secret, shown)
    assert "eyJ" not in shown  # no JWT (subject or access token) of any kind
    explorer.close()


def test_a_failure_is_shown_not_raised(connection: Connection) -> None:
    explorer = PolicyExplorer(connection, actions=["show_account_balance_public"])
    explorer.resources.clear()  # the next request cannot be built: a bug of the caller's
    explorer.subject.value = "bob"  # runs the observer; must not raise
    assert explorer.cell is None and explorer.exchange is None and explorer.curl == ""
    assert explorer.error is not None and explorer.error.startswith("KeyError")
    assert "KeyError" in explorer.outcome.value
    assert "failed: KeyError" in explorer.summary()
    explorer.close()


def test_an_environment_that_records_is_reused() -> None:
    recorder = Recorder()
    with connect(
        Settings(), key_size=2048, dialect="published", client_options={"recorder": recorder}
    ) as connection:
        explorer = PolicyExplorer(connection, actions="close_account", resources=[ALICE_ACCOUNT])
        assert explorer.recorder is recorder
        assert explorer.cell is not None and explorer.cell.outcome == "challenge: totp"
        assert recorder.last is not None and recorder.last.status == 403
        assert list(explorer.action.options) == ["close_account"]
        explorer.close()
