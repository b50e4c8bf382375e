"""The client against the reference sandbox: every flow a user runs, end to end."""

from __future__ import annotations

from typing import Any

import pytest

from authzkit import (
    Authorized,
    BadChallengeSolutionError,
    ChallengeNotFoundError,
    ChallengeRequired,
    ClientNotPermittedError,
    ConfigError,
    TokenRequestError,
    UnauthenticatedError,
    UnauthorizedError,
    request_hash,
)
from authzkit.client.facade import AuthzClient
from authzkit.wire.jwe import protected_header

from support.subjects import Subject

PLAIN = "show_account_balance_public"


def _request(subject: Subject, **extra: Any) -> dict[str, Any]:
    return {"resource_id": subject.resource_id, "subject_token": subject.token, **extra}


def test_plain_action_is_authorized_shape_a(client: AuthzClient, alice: Subject) -> None:
    outcome = client.authorize(
        PLAIN,
        user_agent="tests/1.0",
        user_ip="127.0.0.1",
        request_hash=request_hash(b'{"q":"balance"}'),
        context={"channel": "test"},
        **_request(alice),
    )
    assert isinstance(outcome, Authorized)
    assert (outcome.status, outcome.action, outcome.shape) == ("authorized", PLAIN, "A")


def test_challenge_then_solution_gives_shape_b(client: AuthzClient, alice: Subject) -> None:
    challenge = client.authorize("transfer_funds", **_request(alice))
    assert isinstance(challenge, ChallengeRequired)
    assert challenge.required_types == ("pin",)
    solution = client.build_solution(challenge.challenge_id, "pin", alice.credentials["pin"])
    header = protected_header(solution)
    assert (header["alg"], header["enc"], header["kid"]) == (
        "RSA-OAEP-256",
        "A256GCM",
        client.encryption_key().kid,
    )
    outcome = client.authorize("transfer_funds", challenge_solution=solution, **_request(alice))
    assert isinstance(outcome, Authorized) and outcome.shape == "B"


def test_rsa_oaep_is_selectable(sandbox: Any, client: AuthzClient, alice: Subject) -> None:
    challenge = client.authorize("transfer_funds", **_request(alice))
    assert isinstance(challenge, ChallengeRequired)
    solution = client.build_solution(
        challenge.challenge_id, "pin", alice.credentials["pin"], alg="RSA-OAEP"
    )
    assert protected_header(solution)["alg"] == "RSA-OAEP"
    assert client.authorize(
        "transfer_funds", challenge_solution=solution, **_request(alice)
    ).authorized
    with AuthzClient(
        base_url=sandbox.base_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        alg="RSA-OAEP",
    ) as other:
        assert protected_header(other.build_solution(1, "pin", "0000"))["alg"] == "RSA-OAEP"


@pytest.mark.parametrize(
    "action, kind",
    [
        ("transfer_funds", "pin"),
        ("change_contact_details", "login_password"),
        ("close_account", "totp"),
    ],
)
def test_round_trip_for_each_credential_kind(
    sandbox: Any, client: AuthzClient, alice: Subject, action: str, kind: str
) -> None:
    outcome = client.authorize_with_challenge(action, answers=alice.answers(), **_request(alice))
    assert outcome.authorized and outcome.shape == "B"
    counts = sandbox.stats()["authorize"]
    assert counts.get("srn:error:challenge_required") == 1 and counts.get("authorized") == 1


def test_kind_is_picked_from_what_the_challenge_allows(client: AuthzClient, alice: Subject) -> None:
    # add_payee accepts pin or totp; only a TOTP secret is on offer
    answers = {"totp_secret": alice.credentials["totp"], "login_password": "unused"}
    assert client.authorize_with_challenge(
        "add_payee", answers=answers, **_request(alice)
    ).authorized


def test_answers_may_be_a_callable_given_the_challenge(client: AuthzClient, alice: Subject) -> None:
    seen: list[ChallengeRequired] = []

    def ask(challenge: ChallengeRequired) -> dict[str, str]:
        seen.append(challenge)
        return {"pin": alice.credentials["pin"]}

    assert client.authorize_with_challenge(
        "transfer_funds", answers=ask, **_request(alice)
    ).authorized
    assert len(seen) == 1 and seen[0].required_types == ("pin",)


def test_no_challenge_means_answers_are_not_asked(client: AuthzClient, alice: Subject) -> None:
    def never(_: ChallengeRequired) -> dict[str, str]:
        raise AssertionError("answers asked for an action without a challenge")

    assert client.authorize_with_challenge(PLAIN, answers=never, **_request(alice)).shape == "A"


def test_answers_that_fit_no_kind_name_both_sides(client: AuthzClient, alice: Subject) -> None:
    with pytest.raises(ConfigError, match="accepts pin but the answers offer login_password"):
        client.authorize_with_challenge(
            "transfer_funds", answers={"login_password": "x"}, **_request(alice)
        )


def test_wrong_answer_raises_bad_challenge_solution(client: AuthzClient, alice: Subject) -> None:
    with pytest.raises(BadChallengeSolutionError) as caught:
        client.authorize_with_challenge(
            "transfer_funds", answers={"pin": "0000000"}, **_request(alice)
        )
    assert caught.value.status == 403
    assert caught.value.field == "request_body.subject.context.challenge_solution"


def test_unknown_challenge_id(client: AuthzClient, alice: Subject) -> None:
    solution = client.build_solution(
        "00000000-0000-4000-8000-000000000000", "pin", alice.credentials["pin"]
    )
    with pytest.raises(ChallengeNotFoundError):
        client.authorize("transfer_funds", challenge_solution=solution, **_request(alice))


def test_key_rotation_refetches_once_and_resends(
    sandbox: Any, client: AuthzClient, alice: Subject
) -> None:
    old = client.encryption_key().kid
    new = sandbox.rotate_keys()
    outcome = client.authorize_with_challenge(
        "transfer_funds", answers=alice.answers(), **_request(alice)
    )
    assert outcome.authorized
    assert client.encryption_key().kid == new != old
    stats = sandbox.stats()
    assert stats["keys_served"] == 2
    assert stats["authorize"]["srn:error:unrecognized_key"] == 1


def test_someone_elses_resource_is_unauthorized(client: AuthzClient, alice: Subject) -> None:
    with pytest.raises(UnauthorizedError) as caught:
        client.authorize(PLAIN, resource_id=alice.foreign_resource_id, subject_token=alice.token)
    assert (caught.value.status, caught.value.type) == (403, "srn:error:unauthorized")


def test_invalid_subject_session_raises_without_token_refresh(
    sandbox: Any, client: AuthzClient, alice: Subject
) -> None:
    client.access_token()
    with pytest.raises(UnauthenticatedError) as caught:
        client.authorize(PLAIN, resource_id=alice.resource_id, subject_token="not-a-session")
    assert caught.value.field == "request_body.subject.token"
    assert sandbox.stats()["tokens_issued"] == 1


def test_expired_access_token_is_refreshed_once(sandbox: Any, alice: Subject) -> None:
    # The client's own clock says the token is fresh; the service's clock says it expired.
    with AuthzClient(
        base_url=sandbox.base_url, client_id=sandbox.client_id, client_secret=sandbox.client_secret
    ) as client:
        client.access_token()
        sandbox.clock.advance(10_000)
        alice_later = type(alice)(
            alice.id,
            sandbox.session_token("alice"),
            alice.resource_id,
            alice.foreign_resource_id,
            alice.credentials,
        )
        assert client.authorize(PLAIN, **_request(alice_later)).authorized
        assert client.token_provider.token_calls == 2
        assert client.token_provider.refreshes == 1
    assert sandbox.stats()["tokens_issued"] == 2


def test_client_without_resource_server_flag(sandbox: Any, alice: Subject) -> None:
    world = sandbox.world.to_json()
    frontend = next(c for c in world["clients"] if not c.get("resource_server"))
    with (
        AuthzClient(
            base_url=sandbox.base_url,
            client_id=frontend["client_id"],
            client_secret=frontend["client_secret"],
        ) as client,
        pytest.raises(ClientNotPermittedError) as caught,
    ):
        client.authorize(PLAIN, **_request(alice))
    assert caught.value.status == 403


def test_bad_client_credentials_are_not_retried(sandbox: Any) -> None:
    with AuthzClient(
        base_url=sandbox.base_url, client_id=sandbox.client_id, client_secret="not-the-secret"
    ) as client:
        with pytest.raises(TokenRequestError) as caught:
            client.access_token()
        assert client.token_provider.token_calls == 1
    assert caught.value.status == 401 and caught.value.type == "srn:error:invalid_client"


def test_clients_share_one_token_provider_and_key_cache(
    sandbox: Any, client: AuthzClient, alice: Subject
) -> None:
    with AuthzClient(
        base_url=sandbox.base_url, token_provider=client.token_provider, keys=client.keys
    ) as second:
        for each in (client, second):
            each.authorize_with_challenge(
                "transfer_funds", answers=alice.answers(), **_request(alice)
            )
        assert second.access_token() == client.access_token()
    stats = sandbox.stats()
    assert (stats["tokens_issued"], stats["keys_served"]) == (1, 1)
