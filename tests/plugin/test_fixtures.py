"""The plugin's fixtures, marker and options, seen from a partner team's test project.

Each test writes a small project with ``pytester`` and runs pytest on it in this process
(``runpytest``): the plugin is registered by its entry point, as it would be for the partner.
"""

from __future__ import annotations

import pytest

from support.leaks import shows

ALICE_ACCOUNT = "5f0c6c1e-7c3b-4c1e-9a53-3a4f3c1d0a11"
BOB_ACCOUNT = "b3e9f1a4-2d7c-4a6b-9e8f-1c2d3e4f5a33"


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_each_fixture_tests_the_partner_service(partner: pytest.Pytester) -> None:
    partner.makepyfile(
        test_partner=f'''
        import os
        from authzkit import AuthzClient
        from service import may_show_balance, service_from_env

        ALICE_ACCOUNT = "{ALICE_ACCOUNT}"
        BOB_ACCOUNT = "{BOB_ACCOUNT}"

        def test_with_authz_client(authz, authz_client):
            token = authz.session_token("alice")
            assert may_show_balance(authz_client, token, ALICE_ACCOUNT)
            assert not may_show_balance(authz_client, token, BOB_ACCOUNT)
            assert authz.outcomes == ["authorized", "srn:error:unauthorized"]

        def test_with_authz_env(authz, authz_env, monkeypatch):
            authz_env.apply(monkeypatch)
            assert os.environ["AUTHZKIT_BASE_URL"] == authz.base_url
            with service_from_env() as client:
                assert may_show_balance(client, authz.session_token("alice"), ALICE_ACCOUNT)
            assert authz.token_calls == 1

        def test_with_authz_sandbox(authz_sandbox):
            sb = authz_sandbox
            assert sb.base_url.startswith("http://127.0.0.1:")
            assert sb.auth_url == sb.base_url and sb.issuer is None
            with AuthzClient(base_url=sb.base_url, client_id=sb.client_id,
                             client_secret=sb.client_secret) as client:
                assert may_show_balance(client, sb.session_token("bob"), BOB_ACCOUNT)
            assert sb.stats()["authorize"] == {{"authorized": 1}}
            sb.reset()
            assert sb.stats()["authorize"] == {{}}
            assert "alice" in sb.world.subjects

        def test_authz_is_a_view_of_the_session_sandbox(authz, authz_sandbox):
            assert authz.base_url == authz_sandbox.base_url
    '''
    )
    run(partner).assert_outcomes(passed=4)


def test_state_does_not_leak_between_tests(partner: pytest.Pytester) -> None:
    partner.makepyfile(
        test_leak=f'''
        from service import may_show_balance

        KEPT = {{}}

        def test_first(authz, authz_client):
            KEPT["token"] = authz.session_token("alice")
            assert may_show_balance(authz_client, KEPT["token"], "{ALICE_ACCOUNT}")
            assert authz.stats()["authorize"] == {{"authorized": 1}}

        def test_second_sees_nothing_of_the_first(authz, authz_client):
            assert authz.stats()["authorize"] == {{}}
            assert authz.requests == []
            # the first test's session was forgotten with the rest
            assert not may_show_balance(authz_client, KEPT["token"], "{ALICE_ACCOUNT}")
            assert authz.outcomes == ["srn:error:unauthenticated"]
    '''
    )
    run(partner).assert_outcomes(passed=2)


def test_the_marker_faults_take_effect_for_that_test_only(partner: pytest.Pytester) -> None:
    partner.makepyfile(
        test_faults=f'''
        import pytest
        from service import may_show_balance

        @pytest.mark.authz(error_rate=1.0)
        def test_every_answer_is_a_503(authz, authz_client):
            assert not may_show_balance(authz_client, authz.session_token("alice"),
                                        "{ALICE_ACCOUNT}")
            assert set(authz.errors) == {{"srn:error:service_unavailable"}}
            assert authz.stats()["faults"]["unavailable:token"] >= 1

        @pytest.mark.authz(token_outage=60)
        def test_no_token_during_an_outage(authz, authz_client):
            assert not may_show_balance(authz_client, authz.session_token("alice"),
                                        "{ALICE_ACCOUNT}")
            assert authz.token_calls >= 1
            assert authz.actions == []

        @pytest.mark.authz(token_outage=60)
        def test_the_outage_starts_again_for_the_next_test(authz, authz_client):
            assert authz.stats()["faults"] == {{}}
            assert not may_show_balance(authz_client, authz.session_token("alice"),
                                        "{ALICE_ACCOUNT}")

        def test_unmarked_tests_get_no_fault(authz, authz_client):
            assert may_show_balance(authz_client, authz.session_token("alice"),
                                    "{ALICE_ACCOUNT}")
            assert "faults" not in authz.stats()

        @pytest.mark.authz(dialect="published")
        def test_the_published_dialect(authz, authz_client):
            assert authz.issuer.endswith("/auth/realms/authzkit")
            assert may_show_balance(authz_client, authz.session_token("alice"),
                                    "{ALICE_ACCOUNT}")
    '''
    )
    run(partner).assert_outcomes(passed=5)


def test_expectations_pass_and_fail_by_what_was_received(partner: pytest.Pytester) -> None:
    partner.makepyfile(
        test_expect=f'''
        from service import may_show_balance

        def test_met(authz, authz_client):
            authz.expect(action="show_account_balance_public", subject="alice",
                         outcome="authorized", times=1)
            authz.expect("token", times=1)
            may_show_balance(authz_client, authz.session_token("alice"), "{ALICE_ACCOUNT}")

        def test_one_call_too_many(authz, authz_client):
            authz.expect(action="show_account_balance_public", times=1)
            token = authz.session_token("alice")
            may_show_balance(authz_client, token, "{ALICE_ACCOUNT}")
            may_show_balance(authz_client, token, "{ALICE_ACCOUNT}")

        def test_the_wrong_outcome(authz, authz_client):
            authz.expect(outcome="authorized")
            may_show_balance(authz_client, authz.session_token("alice"), "{BOB_ACCOUNT}")
    '''
    )
    result = run(partner)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*authz: expect(endpoint='authorize', action='show_account_balance_public', "
            "times=1): 2 such requests received*",
            "*authz: expect(outcome='authorized'): no such request was received*",
            "*action=show_account_balance_public resource="
            + BOB_ACCOUNT
            + " subject=alice -> 403 srn:error:unauthorized*",
        ]
    )


def test_strict_mode_fails_on_an_unexpected_request_and_names_it(partner: pytest.Pytester) -> None:
    partner.makepyfile(
        test_strict=f'''
        import pytest
        from service import may_show_balance

        @pytest.mark.authz(strict=True)
        def test_only_what_was_expected(authz, authz_client):
            authz.expect(action="show_account_balance_public", times=1)
            may_show_balance(authz_client, authz.session_token("alice"), "{ALICE_ACCOUNT}")

        @pytest.mark.authz(strict=True)
        def test_a_request_nobody_expected(authz, authz_client):
            authz.expect(action="show_account_balance_public", times=1)
            token = authz.session_token("alice")
            may_show_balance(authz_client, token, "{ALICE_ACCOUNT}")
            authz_client.authorize("transfer_funds", resource_id="{ALICE_ACCOUNT}",
                                   subject_token=token)

        def test_not_strict_unless_asked(authz, authz_client):
            may_show_balance(authz_client, authz.session_token("alice"), "{ALICE_ACCOUNT}")
    '''
    )
    result = run(partner)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_a_request_nobody_expected*",
            "*unexpected request (strict mode): POST /resources/v1/authorization/actions/"
            "authorize action=transfer_funds resource="
            + ALICE_ACCOUNT
            + " subject=alice -> 403 srn:error:challenge_required*",
        ]
    )
    assert "unexpected request (strict mode): POST /api" not in result.stdout.str()


def test_strict_mode_from_the_command_line(partner: pytest.Pytester) -> None:
    partner.makepyfile(
        test_strict=f'''
        from service import may_show_balance

        def test_unexpected(authz, authz_client):
            may_show_balance(authz_client, authz.session_token("alice"), "{ALICE_ACCOUNT}")
    '''
    )
    run(partner).assert_outcomes(passed=1)
    result = run(partner, "--authz-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*unexpected request (strict mode)*"])


def test_a_failing_test_shows_its_exchanges_as_trace_markdown(
    partner: pytest.Pytester, world_secrets: list[str]
) -> None:
    partner.makepyfile(
        test_trace=f'''
        from service import may_show_balance

        def test_quiet(authz, authz_client):
            may_show_balance(authz_client, authz.session_token("bob"), "{BOB_ACCOUNT}")

        def test_failing(authz, authz_client):
            token = authz.session_token("alice")
            print("TOKEN-TAIL", token[-12:])
            allowed = may_show_balance(authz_client, token, "{BOB_ACCOUNT}")
            assert allowed
    '''
    )
    result = run(partner)
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*authz: what the sandbox received*",
            "# Test `test_trace.py::test_failing`",
            "```mermaid",
            "sequenceDiagram",
            "*RS->>Authorization: POST /resources/v1/authorization/actions/authorize",
            "*Authorization-->>RS: 403 srn:error:unauthorized",
            "### 2. `authorize`: POST /resources/v1/authorization/actions/authorize → 403 "
            "srn:error:unauthorized",
            '*"token": "$SUBJECT_TOKEN"*',
            'curl -sS -X POST *Authorization: Bearer \'"$ACCESS_TOKEN"*',
        ]
    )
    assert output.count("# Test `") == 1  # the passing test's exchanges are not shown
    tail = next(line.split()[-1] for line in output.splitlines() if line.startswith("TOKEN-TAIL"))
    shown = output.replace(f"TOKEN-TAIL {tail}", "")
    leaked = [s for s in [*world_secrets, tail] if shows(s, shown)]
    assert leaked == []


def test_a_sandbox_already_running_is_reused(partner: pytest.Pytester) -> None:
    from authzkit.sandbox import Sandbox

    partner.makepyfile(
        test_external=f'''
        import os
        from service import may_show_balance

        def test_reuses_it(authz, authz_client):
            assert authz.base_url == os.environ["OUTER_SANDBOX"]
            authz.expect(action="show_account_balance_public", outcome="authorized", times=1)
            assert may_show_balance(authz_client, authz.session_token("alice"),
                                    "{ALICE_ACCOUNT}")
            assert authz.stats()["authorize"] == {{"authorized": 1}}

        def test_and_resets_it_between_tests(authz):
            assert authz.stats()["authorize"] == {{}}
            assert authz.requests == []
    '''
    )
    with Sandbox(key_size=2048) as outer, pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("OUTER_SANDBOX", outer.base_url)
        run(partner, "--authz-url", outer.base_url).assert_outcomes(passed=2)
        assert outer.stats()["authorize"] == {}  # reset after the last test too


def test_options_and_ini_keys_choose_the_session_sandbox(partner: pytest.Pytester) -> None:
    partner.makeini("[pytest]\nauthz_dialect = published\nauthz_key_size = 2048\n")
    partner.makepyfile(
        test_options="""
        def test_published(authz_sandbox):
            assert authz_sandbox.dialect == "published"
    """
    )
    run(partner).assert_outcomes(passed=1)
    partner.makepyfile(
        test_options="""
        def test_draft(authz_sandbox):
            assert authz_sandbox.dialect == "draft"
    """
    )
    run(partner, "--authz-dialect", "draft").assert_outcomes(passed=1)


def test_a_world_file_from_the_option_or_the_marker(partner: pytest.Pytester) -> None:
    from importlib import resources

    default = resources.files("authzkit.sandbox").joinpath("default_world.toml").read_text()
    partner.path.joinpath("carol.toml").write_text(default.replace('"bob"', '"carol"'))
    partner.mkdir("worlds").joinpath("dave.toml").write_text(default.replace('"bob"', '"dave"'))
    partner.makepyfile(
        test_world="""
        import pytest

        def test_from_the_option(authz):
            assert "carol" in authz.world.subjects and "bob" not in authz.world.subjects
            authz.session_token("carol")

        @pytest.mark.authz(world="worlds/dave.toml")
        def test_from_the_marker(authz):
            assert "dave" in authz.world.subjects
    """
    )
    run(partner, "--authz-world", "carol.toml").assert_outcomes(passed=2)


def test_the_markers_token_ttl_is_the_access_tokens_not_the_sessions(
    partner: pytest.Pytester,
) -> None:
    """A partner's test of access-token refresh: the session lasts the test, unless the test
    gives it a ttl of its own."""
    partner.makepyfile(
        test_refresh=f"""
        import time

        import pytest

        from authzkit import AuthzError

        @pytest.mark.authz(token_ttl=1)
        def test_refresh(authz, authz_client):
            lasting, short = authz.session_token("alice"), authz.session_token("alice", ttl=1)

            def authorize(session):
                authz_client.authorize("show_account_balance_public",
                                       resource_id="{ALICE_ACCOUNT}", subject_token=session)

            authorize(lasting)
            time.sleep(2.2)  # the access token and the short session are over
            authorize(lasting)
            with pytest.raises(AuthzError) as refused:
                authorize(short)
            assert refused.value.type == "srn:error:unauthenticated"
            assert authz.stats()["tokens_issued"] == 2  # refreshed once
        """
    )
    run(partner).assert_outcomes(passed=1)
