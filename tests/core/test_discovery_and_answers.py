"""Key discovery (use=enc, cache, rotation) and choosing an answer for a challenge."""

from __future__ import annotations

import pyotp
import pytest

from authzkit import ConfigError, UnexpectedResponseError, UnrecognizedKeyError
from authzkit.client.answers import choose_answer, pick_answer
from authzkit.client.facade import AuthzClient
from authzkit.client.outcomes import ChallengeRequired
from authzkit.wire.clock import ManualClock
from authzkit.wire.jwe import KeyPair
from authzkit.wire.redact import Secret

from support.fake_service import AUTHORIZE, KEYS, FakeService, Reply


@pytest.mark.parametrize("position", [0, 1, 2])
def test_the_use_enc_key_is_picked_wherever_it_is_listed(
    fake: FakeService, fake_client: AuthzClient, position: int
) -> None:
    assert fake.key is not None
    keys = [KeyPair.generate(use="sig", size=2048).public_jwk() for _ in range(2)]
    keys.insert(position, fake.key.public_jwk())
    fake.script(KEYS, Reply(200, {"keys": keys}))
    assert fake_client.encryption_key().kid == fake.key.kid


def test_keys_are_cached(fake: FakeService, fake_client: AuthzClient) -> None:
    first = fake_client.encryption_key()
    assert fake_client.encryption_key() is first
    fake_client.build_solution(1, "pin", "1234")
    assert len(fake.requests[KEYS]) == 1 and fake_client.keys.fetches == 1


def test_no_enc_key_is_a_clear_error(fake: FakeService, fake_client: AuthzClient) -> None:
    fake.script(KEYS, Reply(200, {"keys": [KeyPair.generate(use="sig", size=2048).public_jwk()]}))
    with pytest.raises(UnexpectedResponseError, match="no key with use=enc"):
        fake_client.encryption_key()


def test_discovery_failure_is_an_error_with_status(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    fake.script(KEYS, Reply(503, "<h1>unavailable</h1>", content_type="text/html"))
    with pytest.raises(UnexpectedResponseError) as caught:
        fake_client.encryption_key()
    assert caught.value.status == 503 and "unavailable" in str(caught.value)


def test_refresh_of_an_already_replaced_kid_does_not_refetch(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    kid = fake_client.encryption_key().kid
    fake_client.keys.refresh(stale_kid=kid)
    fake_client.keys.refresh(stale_kid="some-older-kid")
    assert fake_client.keys.fetches == 2


def test_unrecognized_key_twice_gives_up_after_one_refetch(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    fake.script(
        AUTHORIZE,
        Reply(
            403,
            {
                "type": "srn:error:challenge_required",
                "challenge": {"id": 5, "required_types": ["pin"]},
            },
        ),
        Reply(403, {"type": "srn:error:unrecognized_key", "status": 403}),
    )
    with pytest.raises(UnrecognizedKeyError):
        fake_client.authorize_with_challenge(
            "transfer_funds", answers={"pin": "1234"}, resource_id="r", subject_token="subject-t"
        )
    assert len(fake.requests[AUTHORIZE]) == 3  # challenge, solution, the one resend
    assert len(fake.requests[KEYS]) == 2
    first, resent = (
        seen.body["subject"]["context"]["challenge_solution"]
        for seen in fake.requests[AUTHORIZE][1:]
    )
    assert first != resent  # re-encrypted, not replayed


# -- answers ----------------------------------------------------------------------------------


def _challenge(*kinds: str) -> ChallengeRequired:
    return ChallengeRequired(challenge_id="c-1", required_types=kinds)


def test_first_allowed_kind_that_has_an_answer() -> None:
    answers = {"login_password": "pw", "pin": 1234}
    assert pick_answer(_challenge("pin", "totp"), answers) == ("pin", "1234")
    assert pick_answer(_challenge("totp", "login_password"), answers) == ("login_password", "pw")


def test_totp_is_generated_from_the_secret_at_the_injected_time() -> None:
    secret = pyotp.random_base32()
    clock = ManualClock(1_700_000_000)
    kind, code = pick_answer(_challenge("totp"), {"totp_secret": Secret(secret)}, clock=clock)
    assert (kind, code) == ("totp", pyotp.TOTP(secret).at(1_700_000_000))
    clock.advance(30)
    assert pick_answer(_challenge("totp"), {"totp_secret": secret}, clock=clock)[1] == (
        pyotp.TOTP(secret).at(1_700_000_030)
    )


def test_an_explicit_totp_code_wins_over_the_secret() -> None:
    assert pick_answer(_challenge("totp"), {"totp": "123456", "totp_secret": "JBSWY3DP"}) == (
        "totp",
        "123456",
    )


def test_bad_totp_secret_and_bad_answers_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="base32"):
        choose_answer(_challenge("totp"), {"totp_secret": "not base32 !!"})
    with pytest.raises(ConfigError, match="mapping"):
        choose_answer(_challenge("pin"), lambda challenge: "1234")  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="accepts pin, totp but the answers offer none"):
        choose_answer(_challenge("pin", "totp"), {})


def test_discovery_call_is_authenticated(fake: FakeService, fake_client: AuthzClient) -> None:
    fake_client.encryption_key()
    assert fake.requests[KEYS][0].headers["Authorization"] == (
        "Bearer fake-access-token-0123456789abcdef"
    )


def test_discovery_401_refreshes_the_token_once(
    fake: FakeService, fake_client: AuthzClient
) -> None:
    assert fake.key is not None
    fake.script(
        KEYS,
        Reply(401, {"type": "srn:error:invalid_token"}),
        Reply(200, {"keys": [fake.key.public_jwk()]}),
    )
    assert fake_client.encryption_key().kid == fake.key.kid
    assert len(fake.requests[KEYS]) == 2 and fake_client.token_provider.token_calls == 2
