"""Bad input to the plugin: one clear line at collection or setup naming what was wrong,
never a traceback from deep inside."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def assert_plain(result: pytest.RunResult) -> None:
    """No traceback of authzkit's own code in the output."""
    output = result.stdout.str()
    assert "Traceback" not in output
    assert "During handling of the above exception" not in output
    assert "direct cause of the following exception" not in output
    assert "authzkit/testing/" not in output and "authzkit/sandbox/" not in output


def test_an_unknown_marker_argument_is_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.authz(error_rat=0.5)
        def test_typo(authz):
            pass

        @pytest.mark.authz(error_rate=1.5)
        def test_out_of_range(authz):
            pass

        @pytest.mark.authz("published")
        def test_positional(authz):
            pass

        def test_unmarked(authz):
            pass
    """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_typo*",
            "@pytest.mark.authz(error_rat=0.5): unknown argument error_rat (known: *error_rate*)",
            "*ERROR at setup of test_out_of_range*",
            "@pytest.mark.authz(error_rate=1.5): error_rate: must be a ratio >= 0 and <= 1, "
            "got 1.5",
            "*ERROR at setup of test_positional*",
            "@pytest.mark.authz(): takes keyword arguments only, got ['published']",
        ]
    )
    assert_plain(result)


def test_a_world_file_that_does_not_parse_is_named(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("broken.toml").write_text("[[subjects]\nid = 'x'\n")
    pytester.path.joinpath("incomplete.toml").write_text("[[subjects]]\nid = 'carol'\n")
    pytester.makepyfile(
        test_world="""
        import pytest

        @pytest.mark.authz(world="broken.toml")
        def test_broken(authz):
            pass

        @pytest.mark.authz(world="incomplete.toml")
        def test_incomplete(authz):
            pass

        @pytest.mark.authz(world="missing.toml")
        def test_missing(authz):
            pass
    """
    )
    result = run(pytester)
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_broken*",
            "@pytest.mark.authz(world='broken.toml'): world file */broken.toml: not valid TOML: "
            "Expected ']]' *",
            "*ERROR at setup of test_incomplete*",
            "@pytest.mark.authz(world='incomplete.toml'): world file */incomplete.toml: clients: "
            "expected a non-empty list (missing)",
            "*ERROR at setup of test_missing*",
            "@pytest.mark.authz(world='missing.toml'): world: *missing.toml: no such file",
        ]
    )
    assert_plain(result)


def test_a_bad_session_option_is_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_option="""
        def test_uses_it(authz_sandbox):
            pass

        def test_does_not(tmp_path):
            pass
    """
    )
    result = run(pytester, "--authz-dialect", "klingon")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["authz settings: --authz-dialect: dialect: invalid choice: 'klingon' *"]
    )
    assert_plain(result)


class _NotASandbox(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"hello": "world"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def not_a_sandbox() -> Iterator[str]:
    """A JSON service that is no authzkit sandbox."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotASandbox)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_an_authz_url_that_is_no_sandbox_is_named(
    pytester: pytest.Pytester, not_a_sandbox: str
) -> None:
    pytester.makepyfile(
        test_url="""
        def test_uses_it(authz):
            pass
    """
    )
    result = run(pytester, "--authz-url", not_a_sandbox)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            f"authz sandbox: --authz-url {not_a_sandbox}: not an authzkit "
            "sandbox (its /sandbox/v1/world does not say so)"
        ]
    )
    assert_plain(result)


def test_an_authz_url_with_nothing_there_is_named(pytester: pytest.Pytester) -> None:
    from authzkit.wire.children import free_port

    url = f"http://127.0.0.1:{free_port()}"
    pytester.makepyfile(
        test_url="""
        def test_uses_it(authz):
            pass
    """
    )
    result = run(pytester, "--authz-url", url)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"authz sandbox: --authz-url {url}: no answer from {url}*"])
    assert_plain(result)
