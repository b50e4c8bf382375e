"""How much the core client costs on top of doing the same thing by hand.

One run against in-process sandboxes prints five ratios, each measured side by side
(blocks of A and B interleaved, median ratio of adjacent blocks, so drift hits both alike):

1. ``authorize()`` vs a bare ``requests.Session`` post of the same body (target <= 1.10x);
2. ``build_solution`` vs bare jwcrypto with a pre-parsed key (target <= 1.2x);
3. the provider's published procedure (fetch the keys, pick ``use=enc``, parse, encrypt —
   for every solution) vs ``build_solution`` (target: ours >= 5x faster);
4. a token call with a ``private_key_jwt`` assertion (published dialect) vs the draft's JSON
   secret, and what that costs per second once amortised over the token's lifetime;
5. AuthZEN ``evaluate()`` vs a bare ``requests.Session`` post of the same body (with its
   ``X-Request-ID``) to the same AuthZEN sandbox (target <= 1.10x).

Usage: ``python benchmarks/core_overhead.py [--key-size 4096|2048] [--rounds N]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests
from arguments import at_least
from jwcrypto import jwe as bare_jwe, jwk as bare_jwk

from authzkit.client.authorize import build_body
from authzkit.client.facade import AuthzClient
from authzkit.client.outcomes import Authorized, ChallengeRequired, Denied
from authzkit.sandbox import Sandbox
from authzkit.wire.authzen import EVALUATION_PATH, REQUEST_ID_HEADER
from authzkit.wire.spec import AUTHORIZE_PATH, DISCOVERY_PATH


def side_by_side(
    ours: Callable[[], object], bare: Callable[[], object], *, rounds: int, per_block: int
) -> tuple[float, float, float]:
    """Median ratio ours/bare over adjacent block pairs, and the median seconds per call.

    Blocks alternate (ours, bare, bare, ours, ...); each ratio compares two blocks run back
    to back, so load from other processes on the machine weighs on both sides alike.
    """
    ours_blocks: list[float] = []
    bare_blocks: list[float] = []
    for _ in range(per_block):  # warm-up: connections, caches
        ours()
        bare()
    for index in range(rounds):
        order = ((ours, ours_blocks), (bare, bare_blocks))
        for call, blocks in order if index % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            for _ in range(per_block):
                call()
            blocks.append((time.perf_counter() - started) / per_block)
    ratio = statistics.median(o / b for o, b in zip(ours_blocks, bare_blocks, strict=True))
    return ratio, statistics.median(ours_blocks), statistics.median(bare_blocks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key-size", type=int, default=4096, choices=(2048, 4096))
    parser.add_argument("--rounds", type=at_least(1), default=40)
    args = parser.parse_args(argv)

    with Sandbox(key_size=args.key_size) as sandbox:
        world = sandbox.world.to_json()
        resource_id = next(r["id"] for r in world["resources"] if r["owner"] == "alice")
        subject_token = sandbox.session_token("alice", ttl=3600)
        client = AuthzClient(
            base_url=sandbox.base_url,
            client_id=sandbox.client_id,
            client_secret=sandbox.client_secret,
        )
        request = {
            "resource_id": resource_id,
            "subject_token": subject_token,
            "user_agent": "bench/1.0",
            "request_hash": "x" * 43,
        }

        # 1. authorize() vs a bare post of the same body to the same sandbox
        bare_session = requests.Session()
        url = sandbox.base_url + AUTHORIZE_PATH
        body = build_body("show_account_balance_public", **request)
        headers = {"Authorization": "Bearer " + client.access_token()}

        def ours_authorize() -> Authorized | ChallengeRequired:
            return client.authorize("show_account_balance_public", **request)

        def bare_post() -> requests.Response:
            return bare_session.post(url, json=body, headers=headers, timeout=10)

        assert bare_post().status_code == 200 and ours_authorize().authorized
        ratio, ours, bare = side_by_side(
            ours_authorize, bare_post, rounds=args.rounds, per_block=20
        )
        print(
            f"authorize(): {ratio:.2f}x bare requests.Session post "
            f"(target <= 1.10x; {ours * 1e3:.3f} ms vs {bare * 1e3:.3f} ms per call)"
        )

        # 2. build_solution vs bare jwcrypto with a pre-parsed key
        key_json = client.encryption_key().jwk
        parsed = bare_jwk.JWK(**dict(key_json))
        protected = json.dumps({"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": key_json["kid"]})

        def ours_solution() -> object:
            return client.build_solution("3f2a9c1e-0000-4000-8000-000000000001", "pin", "1234")

        def bare_solution() -> object:
            token = bare_jwe.JWE(
                json.dumps(
                    {"challenge_id": "3f2a9c1e-0000-4000-8000-000000000001", "pin": "1234"}
                ).encode(),
                protected=protected,
            )
            token.add_recipient(parsed)
            return token.serialize(compact=True)

        ratio, ours, bare = side_by_side(
            ours_solution, bare_solution, rounds=args.rounds, per_block=20
        )
        print(
            f"build_solution(): {ratio:.2f}x bare jwcrypto with a pre-parsed key "
            f"(target <= 1.2x; {ours * 1e3:.3f} ms vs {bare * 1e3:.3f} ms)"
        )

        # 3. the published procedure: fetch keys for every solution
        keys_url = sandbox.base_url + DISCOVERY_PATH
        procedure_session = requests.Session()

        def published_procedure() -> object:
            keys = procedure_session.get(keys_url, timeout=10).json()["keys"]
            enc = next(k for k in keys if k["use"] == "enc")
            token = bare_jwe.JWE(
                json.dumps(
                    {"challenge_id": "3f2a9c1e-0000-4000-8000-000000000001", "pin": "1234"}
                ).encode(),
                protected=json.dumps({"alg": "RSA-OAEP-256", "enc": "A256GCM", "kid": enc["kid"]}),
            )
            token.add_recipient(bare_jwk.JWK(**enc))
            return token.serialize(compact=True)

        ratio, ours, procedure = side_by_side(
            ours_solution, published_procedure, rounds=args.rounds, per_block=10
        )
        print(
            f"build_solution(): {1 / ratio:.1f}x faster than the published procedure "
            f"that fetches keys per solution (target >= 5x; {ours * 1e3:.3f} ms vs "
            f"{procedure * 1e3:.3f} ms)"
        )
        token_call_cost(client, rounds=args.rounds, key_size=args.key_size)
        authzen_evaluation_cost(rounds=args.rounds)
        print(
            f"(sandbox in-process, RSA key size {args.key_size}; ratios are medians over "
            f"{args.rounds} pairs of adjacent blocks)"
        )
        client.close()
    return 0


def token_call_cost(draft: AuthzClient, *, rounds: int, key_size: int) -> None:
    """4. One token call with a private_key_jwt assertion (published dialect) vs the draft's
    JSON secret: the RS256 signing (client) and verifying (sandbox) of each assertion. Both
    sandboxes sign their access tokens with keys of the same size, so that cost cancels."""
    with Sandbox(dialect="published", key_size=key_size) as published:
        signed = AuthzClient(
            base_url=published.base_url,
            issuer=published.issuer,
            client_id=published.client_id,
            client_auth="private_key_jwt",
            client_key=published.client_key_pem,
        )

        def fresh(client: AuthzClient) -> Callable[[], object]:
            def call() -> object:
                client.token_provider.invalidate()
                return client.access_token()

            return call

        ratio, ours, bare = side_by_side(
            fresh(signed), fresh(draft), rounds=rounds // 2, per_block=10
        )
        lifetime = signed.token_provider.lifetime or 900
        extra_ms = (ours - bare) * 1e3
        print(
            f"token call: private_key_jwt {ratio:.2f}x the draft's JSON secret "
            f"({ours * 1e3:.3f} ms vs {bare * 1e3:.3f} ms, client key RSA-2048); paid once "
            f"per {lifetime:g} s token per process: {extra_ms:.2f} ms more per token, "
            f"{extra_ms / float(lifetime) * 1e3:.2f} us per second of traffic"
        )
        signed.close()


def authzen_evaluation_cost(*, rounds: int) -> None:
    """5. One AuthZEN evaluation through the client (metadata discovered once, request id
    sent and its echo checked, the decision typed) vs the same POST by hand."""
    with Sandbox(dialect="authzen", world="certification") as pdp:
        client = AuthzClient(base_url=pdp.base_url, dialect="authzen")
        subject = {"type": "user", "id": "alice"}
        resource = {"type": "record", "id": "record-1"}
        body = {"subject": subject, "action": {"name": "read"}, "resource": resource}
        bare_session = requests.Session()
        url = pdp.base_url + EVALUATION_PATH

        def ours_evaluate() -> Authorized | Denied:
            return client.evaluate("read", subject=subject, resource=resource)

        def bare_post() -> bool:
            headers = {REQUEST_ID_HEADER: str(uuid.uuid4())}
            answer = bare_session.post(url, json=body, headers=headers, timeout=10)
            return bool(answer.json()["decision"])

        assert bare_post() and ours_evaluate().authorized
        ratio, ours, bare = side_by_side(ours_evaluate, bare_post, rounds=rounds, per_block=20)
        print(
            f"evaluate() (AuthZEN): {ratio:.2f}x bare requests.Session post "
            f"(target <= 1.10x; {ours * 1e3:.3f} ms vs {bare * 1e3:.3f} ms per call)"
        )
        client.close()


if __name__ == "__main__":
    sys.exit(main())
