"""The service's decisions, free of HTTP and of any dialect: tokens, sessions, authorize,
challenge solutions.

A refusal is a :class:`Refusal` carrying the service's ``type``, which a dialect words;
verified JWTs are cached so the plain authorize path does no RSA verification
(docs/internals.md, "Decisions").
"""

from __future__ import annotations

import hmac
import json
import math
import uuid
from collections.abc import Callable
from typing import Any

import pyotp

from authzkit.sandbox.keys import KeyRing
from authzkit.sandbox.state import Challenge, ChallengeStore, Counters, UsedAssertions
from authzkit.sandbox.validation import AuthorizeRequest
from authzkit.sandbox.world import Action, Client, World
from authzkit.wire import jwe
from authzkit.wire.clock import Clock

ACCESS = "access"
SESSION = "session"
JWT_CACHE_SIZE = 8192
# A secret nobody holds, compared against when the client id is unknown, so that timing
# does not tell an attacker which client ids exist.
_NO_SECRET = uuid.uuid4().hex


class Refusal(Exception):
    """A refusal with the service's ``type``; ``field``/``detail`` override the table's."""

    def __init__(self, type_: str, detail: str | None = None, field: str | None = None) -> None:
        super().__init__(type_)
        self.type = type_
        self.detail = detail
        self.field = field


def _same(given: str, expected: str) -> bool:
    """Constant-time comparison of two secrets."""
    return hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


class Service:
    """One sandbox's world, keys, clock and state, and the decisions made with them."""

    def __init__(
        self,
        *,
        world: World,
        keys: KeyRing,
        clock: Clock,
        token_ttl: int,
        challenge_ttl: float,
        max_attempts: int,
    ) -> None:
        self.world = world
        self.keys = keys
        self.clock = clock
        self.token_ttl = token_ttl
        self.challenges = ChallengeStore(clock=clock, ttl=challenge_ttl, max_attempts=max_attempts)
        self.counters = Counters()
        self.assertions = UsedAssertions(clock=clock)
        self._jwt_cache: dict[str, dict[str, Any]] = {}
        # Session tokens carry the generation they were minted in; forget_sessions() moves
        # on to the next, so every session minted before it is refused from then on.
        self.session_generation = 0

    # ----------------------------------------------------------------- tokens
    def _sign(self, subject: str, typ: str, ttl: float, **extra: Any) -> str:
        """A JWT valid for at least ``ttl`` seconds from now (the ``expiresIn`` promise).

        ``iat``/``exp`` are whole seconds (RFC 7519 NumericDate as usually written), so ``exp``
        is rounded UP: truncating it would end a token up to a second before the lifetime the
        client was told, eating a short token's whole refresh margin (a 4 s token is renewed
        1 s early) and turning refreshes under load into spurious 401s.
        """
        now = self.clock()
        claims = {
            "sub": subject,
            "typ": typ,
            "iat": int(now),
            "exp": math.ceil(now + ttl),
            "jti": str(uuid.uuid4()),
            **extra,
        }
        return jwe.sign_jwt(claims, self.keys.signing)

    def client_with_secret(self, client_id: str, client_secret: str) -> Client | None:
        """The client these credentials authenticate, else None (an unknown client costs the
        same comparison as a wrong secret, and a client without a secret never matches)."""
        client = self.world.clients.get(client_id)
        expected = client.client_secret if client is not None else None
        matches = _same(client_secret, expected if expected is not None else _NO_SECRET)
        return client if matches and expected is not None else None

    def grant_access_token(self, client: Client) -> tuple[str, int]:
        """``(access token, lifetime)`` for an authenticated client, counted in
        ``tokens_issued`` (whichever token endpoint, of whichever dialect, asked)."""
        token = self._sign(client.client_id, ACCESS, self.token_ttl)
        self.counters.count("tokens_issued")
        return token, self.token_ttl

    def issue_access_token(self, client_id: str, client_secret: str) -> tuple[str, int]:
        """``(accessToken, expiresIn)`` for valid client credentials, else ``invalid_client``."""
        client = self.client_with_secret(client_id, client_secret)
        if client is None:
            raise Refusal("srn:error:invalid_client")
        return self.grant_access_token(client)

    def mint_session(self, subject: str, ttl: float | None = None) -> tuple[str, int]:
        """A subject session token (sandbox only); ``bad_request`` for an unknown subject."""
        if subject not in self.world.subjects:
            known = ", ".join(self.world.subjects)
            raise Refusal(
                "srn:error:bad_request",
                f"no subject {subject!r} (known: {known})",
                "request_body.subject",
            )
        lifetime = int(ttl) if ttl is not None else self.token_ttl
        extra = {"gen": self.session_generation} if self.session_generation else {}
        return self._sign(subject, SESSION, max(lifetime, 1), **extra), max(lifetime, 1)

    def forget_sessions(self) -> None:
        """Refuse every session token minted so far (``srn:error:unauthenticated``)."""
        self.session_generation += 1
        self._jwt_cache = {}

    def _claims(self, token: str, typ: str) -> dict[str, Any] | None:
        """Verified, unexpired claims of our own JWT of kind ``typ``, else None."""
        claims = self._jwt_cache.get(token)
        if claims is None:
            try:
                claims = jwe.verify_jwt(token, self.keys.signing_key_for)
            except jwe.InvalidJwt:
                return None
            exp = claims.get("exp")
            if not isinstance(exp, int | float) or not isinstance(claims.get("sub"), str):
                return None
            cache = self._jwt_cache
            if len(cache) >= JWT_CACHE_SIZE:
                try:
                    del cache[next(iter(cache))]
                except (StopIteration, KeyError, RuntimeError):
                    cache.clear()
            cache[token] = claims
        if claims.get("typ") != typ or claims["exp"] <= self.clock():
            return None
        if typ == SESSION and claims.get("gen", 0) != self.session_generation:
            return None
        return claims

    def resource_server(self, authorization: str | None) -> Client:
        """The calling client from ``Authorization: Bearer …``; 401 / 403 refusals."""
        if not authorization or authorization[:7].lower() != "bearer ":
            raise Refusal(
                "srn:error:invalid_token",
                "the Authorization header must be 'Bearer <access token>'",
            )
        claims = self._claims(authorization[7:].strip(), ACCESS)
        client = self.world.clients.get(claims["sub"]) if claims is not None else None
        if client is None:
            raise Refusal("srn:error:invalid_token")
        if not client.resource_server:
            raise Refusal("srn:error:not_resource_server")
        return client

    # -------------------------------------------------------------- authorize
    def authorize(self, request: AuthorizeRequest) -> tuple[Action, bool]:
        """``(the authorized action, whether a challenge solution authorized it)`` for one
        authorization request (the caller is already verified); a :class:`Refusal` (or a
        :class:`ChallengeIssued`) otherwise."""
        claims = self._claims(request.subject_token, SESSION)
        if claims is None or claims["sub"] not in self.world.subjects:
            raise Refusal("srn:error:unauthenticated")
        subject = claims["sub"]
        action = self.world.actions.get(request.action)
        if action is None:
            raise Refusal("srn:error:unauthorized", f"no action {request.action!r}")
        resource = self.world.resources.get(request.resource_id)
        if resource is None or resource.owner != subject or resource.type != request.resource_type:
            raise Refusal("srn:error:unauthorized")
        if request.challenge_solution is not None:
            self.solve(request, subject, action)
            return action, True
        if action.required_types:
            challenge = self.challenges.issue(
                subject, action.name, resource.id, action.required_types
            )
            self.counters.count("challenges_issued")
            raise ChallengeIssued(challenge)
        return action, False

    def solve(self, request: AuthorizeRequest, subject: str, action: Action) -> None:
        """Check the challenge solution; returns when it solves an open challenge."""
        try:
            plaintext = jwe.decrypt(request.challenge_solution or "", self.keys.encryption_key_for)
        except jwe.UnknownKey as exc:
            raise Refusal("srn:error:unrecognized_key") from exc
        except jwe.MalformedJwe as exc:
            raise Refusal("srn:error:bad_jwe_token") from exc
        try:
            payload = json.loads(plaintext)
        except (ValueError, RecursionError) as exc:
            raise Refusal(
                "srn:error:bad_jwe_token", "the JWE payload is not a JSON object"
            ) from exc
        if not isinstance(payload, dict):
            raise Refusal("srn:error:bad_jwe_token", "the JWE payload is not a JSON object")
        challenge_id = payload.get("challenge_id")
        if not isinstance(challenge_id, str) or not challenge_id:
            raise Refusal("srn:error:wrong_challenge_solution")
        challenge = self.challenges.find(challenge_id, subject, action.name, request.resource_id)
        if challenge is None:
            raise Refusal("srn:error:challenge_not_found")
        if not self._answers_correctly(challenge, payload):
            self.challenges.wrong_answer(challenge)
            raise Refusal("srn:error:bad_challenge_solution")
        if not self.challenges.solved(challenge):
            raise Refusal("srn:error:challenge_not_found")

    def _answers_correctly(self, challenge: Challenge, payload: dict[str, Any]) -> bool:
        """True when one listed kind is answered correctly (any one of required_types)."""
        credentials = self.world.subjects[challenge.subject].credentials
        for kind in challenge.required_types:
            given = payload.get(kind)
            expected = credentials.get(kind)
            if not isinstance(given, str) or expected is None:
                continue
            check = _totp_check(expected, self.clock) if kind == "totp" else None
            if check(given) if check is not None else _same(given, expected):
                return True
        return False


class ChallengeIssued(Refusal):
    """Not an error of the caller: the 403 that carries a fresh challenge."""

    def __init__(self, challenge: Challenge) -> None:
        super().__init__("srn:error:challenge_required")
        self.challenge = challenge


def _totp_check(secret: str, clock: Clock) -> Callable[[str], bool]:
    """TOTP verification at the sandbox's clock, one 30 s step either side."""

    def check(code: str) -> bool:
        if not code.isdigit():
            return False
        return pyotp.TOTP(secret).verify(code, for_time=int(clock()), valid_window=1)

    return check


__all__ = ["ACCESS", "JWT_CACHE_SIZE", "SESSION", "ChallengeIssued", "Refusal", "Service"]
