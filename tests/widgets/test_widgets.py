"""The challenge answer form, driven without a frontend: ``Button.click()`` runs its handlers."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ipywidgets import Widget

w = pytest.importorskip("ipywidgets", reason="the notebooks extra is not installed")

from authzkit import Authorized, ChallengeRequired, Settings, connect  # noqa: E402
from authzkit.shared.connection import Connection  # noqa: E402
from authzkit.widgets import ChallengeForm, close_when_done  # noqa: E402
from authzkit.wire.redact import Secret  # noqa: E402

from support.leaks import shows  # noqa: E402

PIN = "1234"  # alice's PIN in the sandbox's default world


def challenge_for(connection: Connection, action: str, subject: str = "alice") -> ChallengeRequired:
    resource_id, resource_type = connection.resource(subject)
    outcome = connection.client.authorize(
        action,
        resource_id=resource_id,
        resource_type=resource_type,
        subject_token=connection.subject_token(subject),
    )
    assert isinstance(outcome, ChallengeRequired)
    return outcome


def form_for(connection: Connection, action: str, **options: Any) -> ChallengeForm:
    return ChallengeForm(connection, challenge_for(connection, action), action=action, **options)


def widget_states(root: Widget) -> str:
    """Every state the form's widgets would sync to a frontend (and a saved notebook)."""
    seen: list[dict[str, Any]] = []

    def walk(widget: Widget) -> None:
        seen.append(widget.get_state())
        for child in getattr(widget, "children", ()):
            walk(child)

    walk(root)
    return json.dumps(seen, default=str)


def authorize_counts(connection: Connection) -> dict[str, int]:
    assert connection.sandbox is not None
    return dict(connection.sandbox.stats()["authorize"])


# -- the form built from required_types ------------------------------------------------------


def test_pin_challenge_gets_one_password_field(connection: Connection) -> None:
    form = form_for(connection, "transfer_funds", auto_submit=False)
    assert list(form.fields) == ["pin"]
    assert isinstance(form.fields["pin"], w.Password)
    assert "authzkit-answer-pin" in form.fields["pin"]._dom_classes
    assert form.fields["pin"].value == ""
    assert "pre-filled from the sandbox world" in form.fields["pin"].placeholder


def test_pin_or_totp_challenge_gets_password_text_and_generator(connection: Connection) -> None:
    form = form_for(connection, "add_payee", auto_submit=False)
    assert list(form.fields) == ["pin", "totp"]
    assert isinstance(form.fields["pin"], w.Password)
    assert isinstance(form.fields["totp"], w.Text)
    assert not isinstance(form.fields["totp"], w.Password)
    buttons = [
        c
        for row in form.rows.children
        for c in getattr(row, "children", ())
        if isinstance(c, w.Button)
    ]
    assert [b.description for b in buttons] == ["Generate from secret"]


def test_login_password_is_a_password_field(connection: Connection) -> None:
    form = form_for(connection, "change_contact_details", auto_submit=False)
    assert isinstance(form.fields["login_password"], w.Password)


# -- unattended: pre-filled and submitted while the cell runs ----------------------------------


def test_auto_submit_with_the_world_answer_is_authorized(connection: Connection) -> None:
    form = form_for(connection, "transfer_funds")
    assert form.done
    assert isinstance(form.outcome, Authorized)
    assert form.outcome.status == "authorized"
    assert form.outcome.shape == "B"
    assert form.attempts[0].source == "the sandbox world"
    assert form.attempts[0].automatic
    header = form.protected_header
    assert header is not None
    assert header["alg"] == "RSA-OAEP-256" and header["enc"] == "A256GCM"
    assert header["kid"] == connection.client.encryption_key().kid
    assert re.search(r"\bauthorized\b", form.result.value)
    assert form.submit_button.disabled


def test_auto_submit_generates_the_totp_from_the_secret(connection: Connection) -> None:
    form = form_for(connection, "close_account")
    assert isinstance(form.outcome, Authorized)
    assert form.attempts[0].source == "generated from the TOTP secret"


def test_auto_submit_off_sends_nothing(connection: Connection) -> None:
    challenge = challenge_for(connection, "transfer_funds")
    before = authorize_counts(connection)
    form = ChallengeForm(connection, challenge, action="transfer_funds", auto_submit=False)
    assert authorize_counts(connection) == before
    assert not form.attempts and not form.done
    assert "not submitted yet" in form.summary()


def test_auto_submit_follows_the_settings_switch() -> None:
    with connect(Settings(auto_submit=False), key_size=2048) as connection:
        form = form_for(connection, "transfer_funds")
        assert form.auto_submit is False
        assert not form.attempts


# -- a person typing and clicking ---------------------------------------------------------------


def test_typed_pin_and_click_is_authorized_and_cleared(connection: Connection) -> None:
    form = form_for(connection, "transfer_funds", auto_submit=False)
    form.fields["pin"].value = PIN
    form.submit_button.click()
    assert isinstance(form.outcome, Authorized)
    assert form.attempts[-1].source == "typed"
    assert not form.attempts[-1].automatic
    assert form.fields["pin"].value == ""
    assert re.search(r"\bauthorized\b", form.result.value)


def test_wrong_pin_can_be_corrected(connection: Connection) -> None:
    form = form_for(connection, "transfer_funds", auto_submit=False)
    form.fields["pin"].value = "0000"
    form.submit_button.click()
    assert form.error is not None
    assert form.error.type == "srn:error:bad_challenge_solution"  # type: ignore[attr-defined]
    assert "The challenge answer is incorrect." in form.result.value
    assert not form.done and not form.submit_button.disabled
    form.fields["pin"].value = PIN
    form.submit_button.click()
    assert isinstance(form.outcome, Authorized)


def test_dead_challenge_offers_a_new_one(connection: Connection) -> None:
    form = form_for(connection, "transfer_funds", auto_submit=False)
    old_id = form.challenge.challenge_id
    for _ in range(4):  # three wrong answers kill the challenge; the fourth finds nothing
        if form.done:
            break
        form.fields["pin"].value = "0000"
        form.submit_button.click()
    assert form.done
    assert form.error.type == "srn:error:challenge_not_found"  # type: ignore[union-attr]
    assert form.restart_button.layout.display is None
    form.restart_button.click()
    assert not form.done and form.challenge.challenge_id != old_id
    form.fields["pin"].value = PIN
    form.submit_button.click()
    assert isinstance(form.outcome, Authorized)


def test_generate_button_fills_a_six_digit_code(connection: Connection) -> None:
    form = form_for(connection, "close_account", auto_submit=False)
    generate = form.rows.children[0].children[1]
    generate.click()
    assert re.fullmatch(r"\d{6}", form.fields["totp"].value)
    form.submit_button.click()
    assert isinstance(form.outcome, Authorized)
    assert form.attempts[-1].source == "typed"
    assert form.fields["totp"].value == ""


def test_submit_without_any_answer_only_asks_for_one(connection: Connection) -> None:
    challenge = challenge_for(connection, "transfer_funds")
    real = Connection(connection.client, settings=Settings(auto_submit=True))  # no answers known
    resource = connection.resource("alice")
    form = ChallengeForm(
        real,
        challenge,
        action="transfer_funds",
        resource=resource,
        subject_token=connection.subject_token("alice"),
    )
    assert not form.attempts
    form.submit_button.click()
    assert not form.attempts
    assert "Type the PIN first." in form.result.value


# -- a real environment: answers from AUTHZKIT_ANSWER_<KIND> ------------------------------------


def test_answers_from_env_vars_in_a_real_environment(connection: Connection) -> None:
    challenge = challenge_for(connection, "transfer_funds")
    settings = Settings.from_env(
        {
            "AUTHZKIT_BASE_URL": connection.base_url,
            "AUTHZKIT_CLIENT_ID": "x",
            "AUTHZKIT_CLIENT_SECRET": "y",
            "AUTHZKIT_ANSWER_PIN": PIN,
        },
        dotenv=None,
    )
    real = Connection(connection.client, settings=settings)  # no sandbox: a "real" environment
    form = ChallengeForm(
        real,
        challenge,
        action="transfer_funds",
        resource=connection.resource(),
        subject_token=connection.subject_token(),
    )
    assert form.attempts[0].source == "AUTHZKIT_ANSWER_PIN"
    assert isinstance(form.outcome, Authorized)


# -- safety: no secret in widget state or text, no exception out of a callback -----------------


def test_no_answer_or_token_in_widget_state_or_summary(connection: Connection) -> None:
    token = connection.subject_token()
    challenge = challenge_for(connection, "add_payee")
    form = ChallengeForm(connection, challenge, action="add_payee", subject_token=token)
    assert isinstance(form.outcome, Authorized)
    state = widget_states(form.widget)
    bundle = form._repr_mimebundle_()
    texts = [form.summary(), repr(form), bundle["text/plain"], bundle["text/html"], state]
    for text in texts:
        assert not shows(PIN, text)
        assert token not in text
        assert "MF2XI2D2" not in text  # alice's TOTP secret


def test_typed_values_are_cleared_even_when_sending_fails(
    connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    form = form_for(connection, "transfer_funds", auto_submit=False)

    def broken(*_args: Any, **_kwargs: Any) -> str:
        raise RuntimeError("encryption exploded")

    monkeypatch.setattr(connection.client, "build_solution", broken)
    form.fields["pin"].value = PIN
    form.submit_button.click()  # must not raise
    assert form.fields["pin"].value == ""
    assert "RuntimeError: encryption exploded" in form.result.value
    assert not form.done


def test_exceptions_in_callbacks_are_shown_not_raised(
    connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    form = form_for(connection, "transfer_funds", auto_submit=False)
    form.fields["pin"].value = "0000"
    form.submit_button.click()
    for _ in range(3):
        form.fields["pin"].value = "0000"
        form.submit_button.click()
    assert form.done

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise ValueError("service gone")

    monkeypatch.setattr(connection.client, "authorize", broken)
    form.restart_button.click()  # must not raise
    assert "ValueError: service gone" in form.result.value


def test_error_messages_never_show_the_answer(
    connection: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    form = form_for(connection, "transfer_funds", auto_submit=False)

    def echo(*_args: Any, **_kwargs: Any) -> str:
        raise RuntimeError(f"cannot use {PIN}")

    monkeypatch.setattr(connection.client, "build_solution", echo)
    form.submit()  # the world's PIN, not typed
    assert not shows(PIN, form.result.value)
    assert not shows(PIN, form.summary())


# -- rotation: the form re-fetches the keys and re-encrypts once --------------------------------


def test_rotated_key_is_refetched_and_the_answer_resent(connection: Connection) -> None:
    from authzkit.sandbox import Sandbox

    assert isinstance(connection.sandbox, Sandbox), "no embedded sandbox"
    old_kid = connection.client.encryption_key().kid
    connection.sandbox.rotate_keys()
    form = form_for(connection, "transfer_funds")
    assert isinstance(form.outcome, Authorized)
    assert form.protected_header is not None
    assert form.protected_header["kid"] != old_kid
    assert form.protected_header["kid"] == connection.client.encryption_key().kid


# -- the notebook's last cell -------------------------------------------------------------------


def test_close_when_done_closes_at_once_when_nothing_waits() -> None:
    connection = connect(Settings(), key_size=2048)
    form = form_for(connection, "transfer_funds")
    assert form.done
    assert close_when_done(connection, form) == "sandbox stopped"
    assert not _sandbox_running(connection)


def test_close_when_done_waits_for_a_pending_form() -> None:
    connection = connect(Settings(), key_size=2048)
    try:
        form = form_for(connection, "transfer_funds", auto_submit=False)
        message = close_when_done(connection, form)
        assert "wait for an answer" in message
        assert _sandbox_running(connection)
        form.fields["pin"].value = PIN
        form.submit_button.click()
        assert isinstance(form.outcome, Authorized)
        assert not _sandbox_running(connection)
    finally:
        connection.close()


def _sandbox_running(connection: Connection) -> bool:
    import requests

    assert connection.sandbox is not None
    try:
        requests.get(connection.sandbox.base_url + "/api/v1/discovery/keys", timeout=2)
    except requests.RequestException:
        return False
    return True


def test_display_bundle_has_the_widget_and_a_text_summary(connection: Connection) -> None:
    form = form_for(connection, "transfer_funds")
    bundle = form._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert "ChallengeForm: transfer_funds" in text
    assert (
        "attempt 1: submitted automatically with pin (the sandbox world) -> "
        "authorized (HTTP 200, shape B)"
    ) in text
    assert '"alg": "RSA-OAEP-256"' in text


def test_display_bundle_has_a_static_html_copy_for_exports(connection: Connection) -> None:
    """nbconvert's HTML export shows ``text/html`` when the notebook holds no widget state:
    the challenge, the field's state and the outcome line, and nothing to type into."""
    form = form_for(connection, "close_account")
    copy = form._repr_mimebundle_()["text/html"]
    assert 'class="authzkit-static-copy"' in copy and "static copy" in copy
    assert "<b>Challenge</b> for <code>close_account</code>" in copy
    assert "TOTP code: generated from the TOTP secret (the sandbox world)" in copy
    assert "attempt 1 (submitted automatically)" in copy and "<b>authorized</b>" in copy
    assert "RSA-OAEP-256" in copy
    assert "<input" not in copy and "<script" not in copy


def test_static_copy_of_a_form_not_yet_submitted(connection: Connection) -> None:
    copy = form_for(connection, "transfer_funds", auto_submit=False)._repr_mimebundle_()[
        "text/html"
    ]
    assert "PIN: pre-filled from the sandbox world (hidden)" in copy
    assert "not submitted yet" in copy


def test_secret_wrapper_is_used_for_known_answers(connection: Connection) -> None:
    form = form_for(connection, "transfer_funds", auto_submit=False)
    assert all(isinstance(value, Secret) for value, _origin in form._known.values())
