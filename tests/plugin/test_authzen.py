"""The plugin on the AuthZEN dialect, seen from a partner's PEP: a marker asks for an
AuthZEN sandbox and its world, ``authz.client`` evaluates against it, the world's entities
are at hand, and expectations, strict mode and the failure trace read its record."""

from __future__ import annotations

from pathlib import Path

import pytest

from authzkit.sandbox import Sandbox

# A todo app's PEP, reduced to one handler: may this user do this to this todo? It sends
# the subject and resource by type and id; the PDP knows their properties.
TODO_PEP = """
from authzkit import AuthzClient


def may(client: AuthzClient, user_id: str, action: str, todo_id: str = "todo-1") -> bool:
    outcome = client.evaluate(action, subject={"type": "user", "id": user_id},
                              resource={"type": "todo", "id": todo_id})
    return outcome.authorized
"""
RICK = "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs"  # admin
BETH = "CiRmZDM2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs"  # viewer


@pytest.fixture
def pep(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(todo=TODO_PEP)
    pytester.syspathinsert()
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_a_pep_is_tested_against_an_authzen_sandbox(pep: pytest.Pytester) -> None:
    pep.makepyfile(
        test_pep=f'''
        import os
        import pytest
        from authzkit import AuthzClient
        from todo import may

        RICK, BETH = "{RICK}", "{BETH}"
        todo_world = pytest.mark.authz(dialect="authzen", world="todo")

        @todo_world
        def test_the_client_speaks_authzen(authz, authz_client):
            assert authz_client is authz.client and authz.dialect == "authzen"
            assert may(authz.client, RICK, "can_create_todo")
            assert not may(authz.client, BETH, "can_create_todo")
            assert authz.outcomes == ["authorized", "denied"]
            assert authz.actions == ["can_create_todo", "can_create_todo"]
            assert [r.subject for r in authz.received("evaluation")] == [RICK, BETH]
            assert authz.stats()["decisions"] == {{"permit": 1, "deny": 1}}

        @todo_world
        def test_the_worlds_entities(authz):
            assert len(authz.world.subjects) == 5 and authz.world.actions[0] == "can_read_user"
            rick = authz.subject(RICK)
            assert rick["properties"]["roles"] == ["admin", "evil_genius"]
            outcome = authz.client.evaluate("can_delete_todo", subject=rick,
                                            resource=authz.resource("todo-1"))
            assert outcome.authorized

        @todo_world
        def test_expectations_on_evaluations(authz):
            authz.expect(action="can_create_todo", subject=BETH, outcome="denied", times=1)
            authz.expect("metadata", times=1)  # discovery once, then kept
            may(authz.client, BETH, "can_create_todo")

        @todo_world
        def test_each_test_starts_clean(authz):
            assert authz.requests == [] and authz.stats()["decisions"] == {{}}

        @todo_world
        def test_from_the_environment(authz, authz_env, monkeypatch):
            authz_env.apply(monkeypatch)
            assert os.environ["AUTHZKIT_DIALECT"] == "authzen"
            with AuthzClient.from_env() as client:
                assert may(client, RICK, "can_read_todos")

        @pytest.mark.authz(dialect="authzen")
        def test_the_certification_world_by_default(authz):
            assert authz.subject("alice") == {{"type": "user", "id": "alice"}}
            assert [s["id"] for s in authz.client.search_subjects(
                subject="user", action="read", resource=authz.resource("record-1"))]
    '''
    )
    run(pep).assert_outcomes(passed=6)


def test_unmet_expectations_strict_mode_and_the_trace_on_authzen(pep: pytest.Pytester) -> None:
    pep.makepyfile(
        test_pep=f'''
        import pytest
        from todo import may

        @pytest.mark.authz(dialect="authzen", world="todo")
        def test_expected_a_permit(authz):
            authz.expect(action="can_create_todo", outcome="authorized")
            may(authz.client, "{BETH}", "can_create_todo")

        @pytest.mark.authz(dialect="authzen", world="todo", strict=True)
        def test_strict(authz):
            may(authz.client, "{RICK}", "can_read_todos")
    '''
    )
    result = run(pep)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*authz: expect(endpoint='evaluation', action='can_create_todo', "
            "outcome='authorized'): no such request was received",
            "*POST /access/v1/evaluation action=can_create_todo resource=todo-1 "
            f"subject={BETH} -> 200 denied",
            "*authz: what the sandbox received*",
            "    RS->>Authorization: POST /access/v1/evaluation",
            "    Authorization-->>RS: 200 denied",
            "*authz: unexpected request (strict mode): POST /access/v1/evaluation "
            f"action=can_read_todos resource=todo-1 subject={RICK} -> 200 authorized",
        ]
    )
    assert "unexpected request (strict mode): GET /.well-known" not in result.stdout.str()


def test_what_authzen_has_not_is_one_line(pep: pytest.Pytester) -> None:
    pep.makepyfile(
        test_pep="""
        import pytest

        @pytest.mark.authz(world="todo")
        def test_todo_on_the_draft(authz):
            pass

        @pytest.mark.authz(dialect="authzen", token_outage=5)
        def test_no_token_endpoint(authz):
            pass

        @pytest.mark.authz(dialect="authzen")
        def test_no_sessions(authz):
            authz.session_token("alice")

        def test_no_entities_on_the_draft(authz):
            authz.subject("alice")
    """
    )
    result = run(pep)
    result.assert_outcomes(failed=2, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*@pytest.mark.authz(world='todo'): world 'todo' is an AuthZEN world: "
            "it needs dialect='authzen'",
            "*@pytest.mark.authz(dialect='authzen', token_outage=5): token_outage does not "
            "apply to an AuthZEN sandbox: it has no token endpoint",
            "*ConfigError: an AuthZEN sandbox has no session tokens: a PEP names the subject "
            "in each request*",
            "*ConfigError: authz.subject() names an AuthZEN entity; this sandbox speaks draft*",
        ]
    )


def test_an_authzen_sandbox_from_the_options_or_a_url(pep: pytest.Pytester) -> None:
    pep.makepyfile(
        test_pep=f'''
        import os
        from todo import may

        def test_session_sandbox(authz):
            assert authz.dialect == "authzen"
            assert os.environ.get("OUTER") in (None, authz.base_url)
            authz.expect(action="can_create_todo", outcome="authorized", times=1)
            assert may(authz.client, "{RICK}", "can_create_todo")
    '''
    )
    run(pep, "--authz-dialect", "authzen", "--authz-world", "todo").assert_outcomes(passed=1)
    with Sandbox(dialect="authzen", world="todo") as outer, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OUTER", outer.base_url)
        run(pep, "--authz-url", outer.base_url).assert_outcomes(passed=1)
        assert outer.stats()["decisions"] == {}  # reset after the test too


def test_the_docs_authzen_example_runs(pytester: pytest.Pytester) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "testing.md").read_text("utf-8")
    section = page.split("## On an AuthZEN PDP", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    pytester.makepyfile(test_doc=code)
    run(pytester).assert_outcomes(passed=1)
