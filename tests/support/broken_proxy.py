"""A reverse proxy for tests: a running sandbox made to look real, and then made to misbehave.

``authzkit check`` treats anything it did not start itself as a real environment. A
:class:`BrokenProxy` in front of a :class:`authzkit.sandbox.Sandbox` is such an environment:
it hides ``/sandbox/v1/*`` (404, as a real service has no such path) and forwards the rest.
Named hooks (:data:`HOOKS`) then break exactly one promise of the draft
(docs/wire-format.md) each, so a test can prove that the checker notices that breakage and
no other:

============================== =============================================================
``replayed_solution_accepted`` a second identical solution request gets the first 200 again
``enc_key_without_kid``        discovery lists the ``use=enc`` key without its ``kid``
``enc_key_private_member``     the ``use=enc`` key carries its private exponent ``d``
``expires_in_string``          the token answer's ``expiresIn`` is a JSON string
``garbage_jwe_500``            a solution that is not five dot-separated parts gets a 500
``foreign_resource_accepted``  a solution sent for another resource is applied to the
                               resource its challenge was issued for (so it succeeds)
============================== =============================================================

A plain ``ThreadingHTTPServer`` on a port-0 socket serves in a daemon thread; each upstream
call has a timeout. An exception raised while handling a request is answered 502 and
re-raised by :meth:`BrokenProxy.stop`, so a proxy bug fails the test instead of hiding as a
service fault. Nothing is logged: bodies carry tokens and solutions.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import requests
from cryptography.hazmat.primitives import serialization

from authzkit.sandbox import Sandbox
from authzkit.wire import jwe
from authzkit.wire.spec import (
    AUTHORIZE_PATH,
    DISCOVERY_PATH,
    OIDC_TOKEN_PATH,
    TOKEN_PATH,
    is_challenge,
)

UPSTREAM_TIMEOUT = 10.0
HIDDEN_PREFIX = "/sandbox/"
# Not forwarded either way: they describe one connection, not the message.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-authorization",
        "proxy-authenticate",
        "host",
        "content-length",
        "content-encoding",
        "accept-encoding",
        "date",
        "server",
    }
)


@dataclass
class Request:
    """One request passing through; hooks may replace ``body`` before it is forwarded."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?", 1)[0]

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    def solution(self) -> Any:
        """``subject.context.challenge_solution`` of an authorize body, None when absent."""
        body = self.json()
        if self.route != AUTHORIZE_PATH or not isinstance(body, dict):
            return None
        subject = body.get("subject")
        context = subject.get("context") if isinstance(subject, dict) else None
        return context.get("challenge_solution") if isinstance(context, dict) else None

    def target(self) -> tuple[Any, Any, Any]:
        """(action name, resource_id, resource_type) of an authorize body (None where absent)."""
        body = self.json()
        action = body.get("action") if isinstance(body, dict) else None
        if not isinstance(action, dict):
            return None, None, None
        context = action.get("context")
        context = context if isinstance(context, dict) else {}
        return action.get("name"), context.get("resource_id"), context.get("resource_type")


@dataclass
class Answer:
    """The status, headers and body sent back; hooks may replace any of them."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @classmethod
    def of_json(
        cls,
        status: int,
        document: Any,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """A JSON answer (other headers of the upstream answer kept when given)."""
        kept = {k: v for k, v in (headers or {}).items() if k.lower() != "content-type"}
        return cls(
            status, {**kept, "Content-Type": "application/json"}, json.dumps(document).encode()
        )

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


class Hook:
    """One deliberate breakage. ``before`` sees a request first (it may rewrite it, or answer
    itself by returning an :class:`Answer`); ``after`` may rewrite the upstream answer. Each
    calls :meth:`applied` when it actually changed something, so a test can tell a hook that
    fired from one whose request never came."""

    name = ""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.count = 0
        self._lock = threading.Lock()

    def applied(self) -> None:
        with self._lock:
            self.count += 1

    def before(self, request: Request) -> Answer | None:
        return None

    def after(self, request: Request, answer: Answer) -> Answer:
        return answer


def _enc_keys(document: Any) -> list[dict[str, Any]]:
    """The ``use=enc`` keys of a parsed discovery document (edit them in place)."""
    keys = document.get("keys") if isinstance(document, dict) else None
    keys = keys if isinstance(keys, list) else []
    return [k for k in keys if isinstance(k, dict) and k.get("use") == "enc"]


def _rewrite_json(answer: Answer, edit: Callable[[Any], bool]) -> tuple[Answer, bool]:
    """``answer`` with its JSON body edited in place by ``edit`` (True when it changed)."""
    document = answer.json()
    if document is None or not edit(document):
        return answer, False
    return Answer.of_json(answer.status, document, answer.headers), True


class ReplayedSolutionAccepted(Hook):
    """Remembers each solution the service accepted and answers the identical request again
    with that first 200: a challenge that is not single-use."""

    name = "replayed_solution_accepted"

    def __init__(self, sandbox: Sandbox) -> None:
        super().__init__(sandbox)
        self._accepted: dict[tuple[Any, ...], Answer] = {}

    @staticmethod
    def _key(request: Request) -> tuple[Any, ...] | None:
        solution = request.solution()
        return (solution, *request.target()) if isinstance(solution, str) else None

    def before(self, request: Request) -> Answer | None:
        key = self._key(request)
        with self._lock:
            first = self._accepted.get(key) if key is not None else None
        if first is not None:
            self.applied()
        return first

    def after(self, request: Request, answer: Answer) -> Answer:
        key = self._key(request)
        if key is not None and answer.status == 200:
            with self._lock:
                self._accepted.setdefault(key, answer)
        return answer


class EncKeyWithoutKid(Hook):
    """Discovery publishes the encryption key without its ``kid``."""

    name = "enc_key_without_kid"

    def after(self, request: Request, answer: Answer) -> Answer:
        if request.route != DISCOVERY_PATH or answer.status != 200:
            return answer

        def drop_kid(document: Any) -> bool:
            keys = [k for k in _enc_keys(document) if "kid" in k]
            for key in keys:
                del key["kid"]
            return bool(keys)

        answer, changed = _rewrite_json(answer, drop_kid)
        if changed:
            self.applied()
        return answer


class EncKeyPrivateMember(Hook):
    """Discovery publishes the encryption key with its private exponent ``d`` (the sandbox's
    real one, so the key stays a consistent RSA key)."""

    name = "enc_key_private_member"

    def _private_exponent(self) -> str:
        pair = self.sandbox.service.keys.encryption
        private = serialization.load_pem_private_key(pair.private_pem().encode(), None)
        d = private.private_numbers().d  # type: ignore[union-attr]
        raw = d.to_bytes((d.bit_length() + 7) // 8, "big")
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def after(self, request: Request, answer: Answer) -> Answer:
        if request.route != DISCOVERY_PATH or answer.status != 200:
            return answer
        exponent = self._private_exponent()

        def add_d(document: Any) -> bool:
            keys = _enc_keys(document)
            for key in keys:
                key["d"] = exponent
            return bool(keys)

        answer, changed = _rewrite_json(answer, add_d)
        if changed:
            self.applied()
        return answer


class ExpiresInString(Hook):
    """The token answer's lifetime as a JSON string (``"900"``) instead of an integer."""

    name = "expires_in_string"

    def after(self, request: Request, answer: Answer) -> Answer:
        token_path = request.route == TOKEN_PATH or request.route.endswith(OIDC_TOKEN_PATH)
        if not token_path or answer.status != 200:
            return answer

        def stringify(document: Any) -> bool:
            if not isinstance(document, dict):
                return False
            names = [
                n
                for n in ("expiresIn", "expires_in")
                if isinstance(document.get(n), int) and not isinstance(document[n], bool)
            ]
            for name in names:
                document[name] = str(document[name])
            return bool(names)

        answer, changed = _rewrite_json(answer, stringify)
        if changed:
            self.applied()
        return answer


class GarbageJwe500(Hook):
    """A solution that is not a compact JWE's five dot-separated parts crashes the service."""

    name = "garbage_jwe_500"

    def before(self, request: Request) -> Answer | None:
        solution = request.solution()
        if solution is None or (isinstance(solution, str) and solution.count(".") == 4):
            return None
        self.applied()
        return Answer(500, {"Content-Type": "text/plain"}, b"Internal Server Error")


class ForeignResourceAccepted(Hook):
    """A solution sent for another resource is applied to the resource its challenge was
    issued for: the proxy remembers which resource each challenge came from, decrypts the
    solution's ``challenge_id`` with the sandbox's key and rewrites the request's resource."""

    name = "foreign_resource_accepted"

    def __init__(self, sandbox: Sandbox) -> None:
        super().__init__(sandbox)
        self._issued_for: dict[str, tuple[Any, Any]] = {}

    def _challenge_id(self, solution: str) -> str | None:
        keys = self.sandbox.service.keys
        try:
            payload = json.loads(jwe.decrypt(solution, keys.encryption_key_for))
        except (jwe.JoseError, ValueError):
            return None  # not a solution the service could read either: leave it alone
        found = payload.get("challenge_id") if isinstance(payload, dict) else None
        return None if found is None else str(found)

    def before(self, request: Request) -> Answer | None:
        solution = request.solution()
        if not isinstance(solution, str):
            return None
        challenge_id = self._challenge_id(solution)
        with self._lock:
            issued_for = self._issued_for.get(challenge_id) if challenge_id else None
        _, resource_id, resource_type = request.target()
        if issued_for is None or issued_for == (resource_id, resource_type):
            return None
        body = request.json()
        context = body["action"].get("context")
        body["action"]["context"] = {
            **(context if isinstance(context, dict) else {}),
            "resource_id": issued_for[0],
            "resource_type": issued_for[1],
        }
        request.body = json.dumps(body).encode()
        self.applied()
        return None

    def after(self, request: Request, answer: Answer) -> Answer:
        document = answer.json()
        if request.route == AUTHORIZE_PATH and answer.status == 403 and is_challenge(document):
            challenge = document.get("challenge")
            challenge_id = challenge.get("id") if isinstance(challenge, dict) else None
            if challenge_id is not None:
                _, resource_id, resource_type = request.target()
                with self._lock:
                    self._issued_for[str(challenge_id)] = (resource_id, resource_type)
        return answer


HOOKS: dict[str, type[Hook]] = {
    hook.name: hook
    for hook in (
        ReplayedSolutionAccepted,
        EncKeyWithoutKid,
        EncKeyPrivateMember,
        ExpiresInString,
        GarbageJwe500,
        ForeignResourceAccepted,
    )
}


class BrokenProxy:
    """``with BrokenProxy(sandbox, "garbage_jwe_500") as proxy:`` serves on
    ``proxy.base_url`` until exit; ``proxy.hooks[name].count`` says how often a hook fired
    and ``proxy.hidden`` how many ``/sandbox/*`` requests were refused."""

    def __init__(self, sandbox: Sandbox, *hooks: str) -> None:
        unknown = [name for name in hooks if name not in HOOKS]
        if unknown:
            raise ValueError(f"unknown hook(s) {', '.join(unknown)}; known: {', '.join(HOOKS)}")
        self.sandbox = sandbox
        self.hooks: dict[str, Hook] = {name: HOOKS[name](sandbox) for name in hooks}
        self.hidden = 0
        self.forwarded: Counter[str] = Counter()
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._local = threading.local()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # ----------------------------------------------------------------- traffic
    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def _forward(self, request: Request) -> Answer:
        reply = self._session().request(
            request.method,
            self.sandbox.base_url + request.path,
            data=request.body or None,
            headers=request.headers,
            timeout=UPSTREAM_TIMEOUT,
            allow_redirects=False,
        )
        headers = {k: v for k, v in reply.headers.items() if k.lower() not in HOP_BY_HOP}
        return Answer(reply.status_code, headers, reply.content)

    def handle(self, request: Request) -> Answer:
        """What the proxy answers to ``request`` (hooks applied in the order given)."""
        if request.route.startswith(HIDDEN_PREFIX):
            with self._lock:
                self.hidden += 1
            return Answer.of_json(404, {"error": "not_found", "path": request.route})
        for hook in self.hooks.values():
            own = hook.before(request)
            if own is not None:
                return own
        with self._lock:
            self.forwarded[request.route] += 1
        answer = self._forward(request)
        for hook in self.hooks.values():
            answer = hook.after(request, answer)
        return answer

    # -------------------------------------------------------------------- life
    def start(self) -> BrokenProxy:
        """Bind 127.0.0.1 port 0 and serve in a daemon thread."""
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass  # request lines are nobody's business in test output

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                try:
                    answer = proxy.handle(Request(self.command, self.path, headers, body))
                except Exception as exc:  # re-raised by stop(): a proxy bug fails the test
                    with proxy._lock:
                        proxy.errors.append(exc)
                    answer = Answer.of_json(502, {"error": "proxy_failure"})
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 64

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hung up is not a proxy failure; ours land in errors

        self._server = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            args=(0.05,),
            name=f"broken-proxy:{self.base_url}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; raise the first error a handler met, if any."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self.errors:
            raise RuntimeError("the proxy failed while handling a request") from self.errors[0]

    def __enter__(self) -> BrokenProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.stop()
            return
        with contextlib.suppress(RuntimeError):  # the test's own failure is the one to report
            self.stop()

    def __repr__(self) -> str:
        return f"BrokenProxy(base_url={self.base_url!r}, hooks={list(self.hooks)!r})"


__all__ = ["HOOKS", "Answer", "BrokenProxy", "Hook", "Request"]
