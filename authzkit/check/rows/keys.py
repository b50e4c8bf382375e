"""Rows of SPEC §2 (public key discovery): the ``use=enc`` key solutions are encrypted for."""

from __future__ import annotations

from authzkit.check.probe import PRIVATE_MEMBERS, Probe
from authzkit.check.results import Finding, RowSpec, Skip
from authzkit.check.verdicts import answer, failed, passed, refused
from authzkit.wire.spec import DISCOVERY_PATH

SPEC_KEYS = "SPEC §2 Public key discovery"
MIN_BITS = 2048


def _evidence(probe: Probe, outcome: Finding) -> Finding:
    return Finding(outcome.verdict, outcome.detail, (probe.keys_response()[1],))


def _modulus_bits(n: str) -> int:
    import base64

    raw = base64.urlsafe_b64decode(n + "=" * (-len(n) % 4))
    return int.from_bytes(raw, "big").bit_length()


def one_enc_rsa_key(probe: Probe) -> Finding:
    response, _ = probe.keys_response()
    if response.status != 200:
        return _evidence(probe, failed("HTTP 200 with a keys array", response))
    try:
        entries = probe.enc_entries()
    except Skip:
        return _evidence(probe, failed("a JSON object with a 'keys' array", response))
    if len(entries) != 1:
        return _evidence(
            probe, failed("exactly one key with use=enc", came=f"{len(entries)} use=enc keys")
        )
    key = entries[0]
    if key.get("kty") != "RSA":
        return _evidence(probe, failed("kty RSA", came=repr(key.get("kty"))))
    if not isinstance(key.get("kid"), str) or not key.get("kid"):
        return _evidence(probe, failed("a kid on the use=enc key", came="no kid"))
    try:
        probe.key()
    except Skip:
        return _evidence(probe, failed("a usable RSA public key", came="an unusable JWK"))
    return _evidence(probe, passed(f"one RSA use=enc key, kid {key['kid']}"))


def key_size(probe: Probe) -> Finding:
    entries = probe.enc_entries()
    if not entries or not isinstance(entries[0].get("n"), str):
        raise Skip("needs keys.one_enc_rsa_key")
    bits = _modulus_bits(entries[0]["n"])
    if bits >= MIN_BITS:
        return _evidence(probe, passed(f"RSA-{bits}"))
    return _evidence(probe, failed(f"at least {MIN_BITS} bits", came=f"RSA-{bits}"))


def no_private_members(probe: Probe) -> Finding:
    response, _ = probe.keys_response()
    body = response.body() if response.status == 200 else None
    keys = body.get("keys") if isinstance(body, dict) else None
    if not isinstance(keys, list):
        raise Skip("needs keys.one_enc_rsa_key")
    leaked = sorted(
        {
            f"{k.get('kid')}:{m}"
            for k in keys
            if isinstance(k, dict)
            for m in PRIVATE_MEMBERS
            if m in k
        }
    )
    if leaked:
        return _evidence(
            probe,
            failed("public members only", came=f"private members published ({', '.join(leaked)})"),
        )
    return _evidence(probe, passed(f"{len(keys)} keys, public members only"))


def sig_ignored(probe: Probe) -> Finding:
    entries = probe.enc_entries()
    if not entries:
        raise Skip("needs keys.one_enc_rsa_key")
    response, _ = probe.keys_response()
    uses = [k.get("use") for k in response.body().get("keys", []) if isinstance(k, dict)]
    others = [u for u in uses if u != "enc"]
    kid = probe.key().kid
    note = (
        f"{len(others)} other key(s) ({', '.join(map(str, others))}) ignored"
        if others
        else "no other keys published"
    )
    return _evidence(probe, passed(f"solutions use kid {kid}; {note}"))


def bearer(probe: Probe) -> Finding:
    with_bearer, exchange = probe.keys_response()
    url = probe.client.base_url + DISCOVERY_PATH
    without = probe.send("GET", url, "check:keys:no_bearer")
    evidence = (exchange, probe.recorder.exchanges[-1])
    if with_bearer.status != 200:
        return Finding(*_pair(failed("HTTP 200 with the bearer token", with_bearer)), evidence)
    if without.status == 200:
        return Finding(
            "pass",
            "answers with the bearer token, and also without one (SPEC leaves it open)",
            evidence,
        )
    if refused(without):
        return Finding(
            "pass", f"answers with the bearer token; without: {answer(without)}", evidence
        )
    return Finding(*_pair(failed("200 or a 4xx without a bearer token", without)), evidence)


def _pair(outcome: Finding) -> tuple[str, str]:
    return outcome.verdict, outcome.detail


ROWS = (
    RowSpec(
        "keys.one_enc_rsa_key", "one use=enc RSA key with a kid", SPEC_KEYS, one_enc_rsa_key, 1
    ),
    RowSpec("keys.key_size", "encryption key size >= 2048 bits", SPEC_KEYS, key_size, 0),
    RowSpec(
        "keys.no_private_members",
        "no private key members published",
        SPEC_KEYS,
        no_private_members,
        0,
        security=True,
    ),
    RowSpec("keys.sig_ignored", "keys other than use=enc are ignored", SPEC_KEYS, sig_ignored, 0),
    RowSpec("keys.bearer", "answers with the bearer token (and without)", SPEC_KEYS, bearer, 1),
)

__all__ = ["ROWS"]
