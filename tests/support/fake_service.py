"""A small scripted HTTP server for the cases the sandbox cannot produce.

Each route is answered from a queue of scripted replies (the last one repeats), or by a
handler given the request, and every request is kept for assertions (a form-encoded body
as a dict). It is a real server on port 0 in a daemon thread, so the client under test goes
through its real transport. :class:`PublishedService` turns it into a service answering in
the provider's published dialect, with the state the 401 policy needs: which access tokens
are live, and which subject sessions are invalid.
"""

from __future__ import annotations

import base64
import functools
import itertools
import json
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

from authzkit.wire.jwe import InvalidJwt, KeyPair, verify_with_public_key
from authzkit.wire.spec import CLIENT_ASSERTION_TYPE

TOKEN = "/api/v3.1/oauth/tokens"
KEYS = "/api/v1/discovery/keys"
AUTHORIZE = "/resources/v1/authorization/actions/authorize"
REALM = "/auth/realms/authzkit"
OIDC_CONFIGURATION = REALM + "/.well-known/openid-configuration"
OIDC_TOKEN = REALM + "/protocol/openid-connect/token"
UNAUTHENTICATED_401 = {"type": "srn:error:unauthenticated"}  # the published dialect's only 401


@functools.cache
def _enc_key() -> KeyPair:
    return KeyPair.generate(use="enc", size=2048)


@functools.cache
def _sig_key() -> KeyPair:
    return KeyPair.generate(use="sig", size=2048)


@functools.cache
def client_key() -> KeyPair:
    """The fake client application's own RSA key (its private half signs assertions)."""
    return KeyPair.generate(use="sig", size=2048)


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any = None
    content_type: str = "application/json"
    delay: float = 0.0
    drop: bool = False  # close the connection without answering

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str) and self.content_type != "application/json":
            return self.body.encode()
        return json.dumps(self.body).encode() if self.body is not None else b""


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeService:
    """Scripted replies per path; ``requests[path]`` lists what arrived."""

    replies: dict[str, list[Reply]] = field(default_factory=dict)
    handlers: dict[str, Callable[[Seen], Reply]] = field(default_factory=dict)
    requests: dict[str, list[Seen]] = field(default_factory=lambda: defaultdict(list))
    base_url: str = ""
    key: KeyPair | None = None
    _server: Any = None

    def script(self, path: str, *replies: Reply) -> None:
        self.replies[path] = list(replies)

    def next_reply(self, path: str) -> Reply:
        queue = self.replies.get(path)
        if not queue:
            return Reply(404, {"type": "srn:error:not_found", "status": 404})
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def start(self) -> FakeService:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # otherwise every answer waits ~40 ms for an ACK

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                form = (self.headers.get("Content-Type") or "").startswith(
                    "application/x-www-form-urlencoded"
                )
                try:
                    body = (
                        dict(parse_qsl(raw.decode(), keep_blank_values=True))
                        if form
                        else json.loads(raw)
                        if raw
                        else None
                    )
                except ValueError:
                    body = raw
                seen = Seen(self.command, self.path, dict(self.headers), body)
                service.requests[self.path].append(seen)
                handler = service.handlers.get(self.path)
                reply = handler(seen) if handler else service.next_reply(self.path)
                if reply.delay:
                    threading.Event().wait(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                data = reply.encoded()
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _handle

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # many threads connect at once (the default is 5)

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up (timeout tests) is not a server failure

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- a working default service ------------------------------------------------------

    def serve_defaults(self, *, expires_in: int = 900) -> None:
        """Token, keys (a sig key listed after the enc key) and a plain 200 authorize."""
        self.key = self.key or _enc_key()
        sig = _sig_key()
        self.script(
            TOKEN,
            Reply(
                200,
                {
                    "accessToken": "fake-access-token-0123456789abcdef",
                    "expiresIn": expires_in,
                    "tokenType": "Bearer",
                },
            ),
        )
        self.script(KEYS, Reply(200, {"keys": [self.key.public_jwk(), sig.public_jwk()]}))
        self.script(
            AUTHORIZE,
            Reply(
                200,
                {
                    "action": {
                        "name": "show_account_balance_public",
                        "response": None,
                        "status": "authorized",
                    },
                    "id": 1,
                    "optional_actions": [],
                },
            ),
        )


# -- the provider's published dialect, with state ------------------------------------------------


def _oauth_error(status: int, error: str, description: str) -> Reply:
    return Reply(status, {"error": error, "error_description": description})


class PublishedService:
    """A service answering in the published dialect (docs/dialects.md), on a :class:`FakeService`.

    An OpenID Connect realm at ``issuer`` (discovery document and a form-encoded
    client-credentials token endpoint accepting ``client_secret_post``,
    ``client_secret_basic`` and ``private_key_jwt`` for one client), the discovery keys, and
    an authorize endpoint that answers ``401 {"type": "srn:error:unauthenticated"}`` — the
    same body — for an access token it does not take AND for an invalid subject session.
    ``expire_tokens()`` is a service-side early expiry; ``invalid_subjects`` the sessions
    it refuses. Thread-safe: the fake server answers concurrently.
    """

    CLIENT_ID = "published-client"
    CLIENT_SECRET = "published-secret value/+&="  # characters RFC 6749 2.3.1 must encode

    def __init__(
        self, fake: FakeService, *, expires_in: int = 900, accept_audiences: tuple[str, ...] = ()
    ) -> None:
        self.fake = fake
        self.issuer = fake.base_url + REALM
        self.token_endpoint = fake.base_url + OIDC_TOKEN
        self.expires_in = expires_in
        self.audiences = accept_audiences or (self.issuer, self.token_endpoint)
        self.live: set[str] = set()
        self.invalid_subjects: set[str] = set()
        self.jtis: set[str | None] = set()
        self.assertions: list[dict[str, Any]] = []  # claims of every verified assertion
        self.auth_methods: list[str] = []
        self._lock = threading.Lock()
        self._serial = itertools.count(1)
        fake.key = fake.key or _enc_key()
        fake.script(
            OIDC_CONFIGURATION,
            Reply(
                200,
                {
                    "issuer": self.issuer,
                    "token_endpoint": self.token_endpoint,
                    "jwks_uri": self.issuer + "/protocol/openid-connect/certs",
                    "grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": [
                        "client_secret_post",
                        "client_secret_basic",
                        "private_key_jwt",
                    ],
                },
            ),
        )
        fake.script(KEYS, Reply(200, {"keys": [_sig_key().public_jwk(), fake.key.public_jwk()]}))
        fake.handlers[OIDC_TOKEN] = self.token
        fake.handlers[AUTHORIZE] = self.authorize

    @property
    def token_calls(self) -> int:
        """Requests that reached the token endpoint."""
        return len(self.fake.requests[OIDC_TOKEN])

    def expire_tokens(self) -> None:
        """Every access token issued so far stops working now (an early expiry)."""
        with self._lock:
            self.live.clear()

    def token(self, seen: Seen) -> Reply:
        form = seen.body if isinstance(seen.body, dict) else {}
        if form.get("grant_type") != "client_credentials":
            return _oauth_error(
                400, "unsupported_grant_type", "grant_type must be client_credentials"
            )
        refusal = self._authenticate(seen, form)
        if refusal is not None:
            return refusal
        with self._lock:
            value = f"published-access-token-{next(self._serial):04d}-0123456789abcdef"
            self.live.add(value)
        return Reply(
            200,
            {
                "access_token": value,
                "expires_in": self.expires_in,
                "refresh_expires_in": 0,
                "token_type": "bearer",
                "not-before-policy": 0,
                "scope": "profile email",
            },
        )

    def _authenticate(self, seen: Seen, form: dict[str, str]) -> Reply | None:
        basic = seen.headers.get("Authorization", "")
        if basic.startswith("Basic "):
            client_id, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            method = "client_secret_basic"
            client_id, secret = unquote_plus(client_id), unquote_plus(secret)
        elif "client_assertion" in form:
            return self._assertion(form)
        else:
            method, client_id, secret = (
                "client_secret_post",
                form.get("client_id", ""),
                form.get("client_secret", ""),
            )
        if (client_id, secret) != (self.CLIENT_ID, self.CLIENT_SECRET):
            return _oauth_error(
                401, "unauthorized_client", "INVALID_CREDENTIALS: Invalid client credentials"
            )
        self.auth_methods.append(method)
        return None

    def _assertion(self, form: dict[str, str]) -> Reply | None:
        if form.get("client_assertion_type") != CLIENT_ASSERTION_TYPE:
            return _oauth_error(400, "invalid_client", "wrong client_assertion_type")
        try:
            claims = verify_with_public_key(form["client_assertion"], client_key().public_key())
        except InvalidJwt as exc:
            return _oauth_error(400, "invalid_client", f"client assertion: {exc}")
        with self._lock:
            if claims.get("jti") in self.jtis:
                return _oauth_error(400, "invalid_client", "Token reuse detected")
            self.jtis.add(claims.get("jti"))
        if (
            not (claims.get("iss") == claims.get("sub") == form.get("client_id") == self.CLIENT_ID)
            or claims.get("aud") not in self.audiences
        ):
            return _oauth_error(400, "invalid_client", "invalid client assertion claims")
        if not isinstance(claims.get("exp"), int):
            return _oauth_error(400, "invalid_client", "the assertion has no exp")
        self.assertions.append(claims)
        self.auth_methods.append("private_key_jwt")
        return None

    def authorize(self, seen: Seen) -> Reply:
        token = seen.headers.get("Authorization", "").removeprefix("Bearer ")
        body = seen.body if isinstance(seen.body, dict) else {}
        subject = (body.get("subject") or {}).get("token")
        with self._lock:
            refused = token not in self.live or subject in self.invalid_subjects
        if refused:
            return Reply(401, UNAUTHENTICATED_401)
        name = (body.get("action") or {}).get("name", "")
        return Reply(
            200,
            {
                "action": {"name": name, "response": "nil", "status": "authorized"},
                "id": "0b7c4a4e-6f35-4c1f-9c1a-3a9f0c9d2b11",
                "optional_actions": [],
            },
        )
