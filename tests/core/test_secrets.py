"""Secrets never show: client secret, access and subject tokens, answers.

Everything a user can see is gathered — repr/str of every object, log lines at DEBUG,
recorded exchanges and their curl commands, error messages — and searched for each secret.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

import pytest

from authzkit import (
    AuthzError,
    BadChallengeSolutionError,
    ChallengeRequired,
    UnauthenticatedError,
)
from authzkit.client.answers import choose_answer, totp_now
from authzkit.client.exchanges import Recorder
from authzkit.client.facade import AuthzClient

from support.fake_service import AUTHORIZE, FakeService, Reply
from support.leaks import shows
from support.subjects import Subject


def _visible(*objects: Any) -> str:
    return "\n".join(f"{obj!r}\n{obj!s}" for obj in objects)


def test_no_secret_is_visible_anywhere(
    sandbox: Any, alice: Subject, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    recorder = Recorder()
    seen: list[Any] = []
    with AuthzClient(
        base_url=sandbox.base_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        recorder=recorder,
    ) as client:
        access_token = client.access_token()
        client.authorize_with_challenge(
            "transfer_funds",
            answers=alice.answers(),
            resource_id=alice.resource_id,
            subject_token=alice.token,
        )
        client.authorize_with_challenge(
            "close_account",
            answers=alice.answers(),
            resource_id=alice.resource_id,
            subject_token=alice.token,
        )
        challenge = client.authorize(
            "change_contact_details", resource_id=alice.resource_id, subject_token=alice.token
        )
        assert isinstance(challenge, ChallengeRequired)
        answer = choose_answer(challenge, alice.answers())
        seen += [challenge, answer]
        calls: tuple[Callable[[], object], ...] = (
            lambda: client.authorize_with_challenge(
                "transfer_funds",
                answers={"pin": "98765"},
                resource_id=alice.resource_id,
                subject_token=alice.token,
            ),
            lambda: client.authorize(
                "show_account_balance_public",
                resource_id=alice.resource_id,
                subject_token=alice.token + "tampered",
            ),
        )
        for call in calls:
            with pytest.raises((BadChallengeSolutionError, UnauthenticatedError)) as caught:
                call()
            seen.append(caught.value)
        seen += [
            client,
            client.token_provider,
            client.token_provider.current,
            client.keys,
            client.transport,
            recorder,
        ]
    exchanges = recorder.exchanges
    assert len(exchanges) >= 8
    text = "\n".join(
        [
            _visible(*seen),
            _visible(*exchanges),
            *(e.curl() for e in exchanges),
            *(e.summary() for e in exchanges),
            *(
                str(e.request_body) + str(e.response_body) + str(e.request_headers)
                for e in exchanges
            ),
            caplog.text,
        ]
    )
    totp = totp_now(alice.credentials["totp"])
    secrets = {
        "client secret": sandbox.client_secret,
        "access token": access_token,
        "subject token": alice.token,
        "pin": alice.credentials["pin"],
        "login_password": alice.credentials["login_password"],
        "totp secret": alice.credentials["totp"],
        "totp code": totp,
        "wrong pin": "98765",
    }
    for what, secret in secrets.items():
        assert not shows(secret, text), f"the {what} is visible"


def test_error_message_that_echoes_a_secret_is_scrubbed(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    subject_token = "eyJhbGciOiJSUzI1NiJ9.subject-session.signature"
    fake.script(
        AUTHORIZE,
        Reply(
            401,
            {"type": "srn:error:unauthenticated", "detail": f"session {subject_token} has expired"},
        ),
    )
    with pytest.raises(AuthzError) as caught:
        fake_client.authorize("a", resource_id="r", subject_token=subject_token)
    assert subject_token not in str(caught.value) and subject_token not in repr(caught.value)
    assert "has expired" in str(caught.value)


def test_answer_and_token_reprs_are_masked() -> None:
    from authzkit.client.answers import Answer
    from authzkit.client.token import AccessToken
    from authzkit.wire.redact import Secret

    answer = Answer("pin", Secret("4321"))
    token = AccessToken(value="header.payload.sig", issued_at=0, expires_at=60, refresh_at=45)
    assert "4321" not in repr(answer) + str(answer)
    assert "payload" not in repr(token) + str(token)


def test_token_endpoint_echoing_the_client_secret_is_scrubbed(
    fake: FakeService, fake_client: AuthzClient, caplog: pytest.LogCaptureFixture
) -> None:
    from authzkit import TokenRequestError

    from support.fake_service import TOKEN

    fake.script(
        TOKEN,
        Reply(
            401,
            {
                "type": "srn:error:invalid_client",
                "detail": "secret fake-client-secret-value is wrong",
            },
        ),
    )
    with pytest.raises(TokenRequestError) as caught:
        fake_client.access_token()
    fake.script(TOKEN, Reply(503, {"detail": "cannot check fake-client-secret-value now"}))
    provider = fake_client.token_provider
    provider.retry = dataclasses.replace(provider.retry, sleep=lambda seconds: None)
    with pytest.raises(TokenRequestError) as again:
        fake_client.access_token()
    text = str(caught.value) + repr(caught.value) + str(again.value) + caplog.text
    assert "fake-client-secret-value" not in text and "is wrong" in text
