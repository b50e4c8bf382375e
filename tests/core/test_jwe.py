"""The JOSE boundary: round trips, header contents, and errors sorted by cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from authzkit.wire import jwe
from authzkit.wire.errors import ConfigError, SolutionEncryptionError


@pytest.fixture(scope="module")
def pair() -> jwe.KeyPair:
    return jwe.KeyPair.generate(use="enc", size=2048)


@pytest.mark.parametrize("alg", ["RSA-OAEP-256", "RSA-OAEP"])
def test_round_trip_and_protected_header(pair: jwe.KeyPair, alg: str) -> None:
    token = jwe.encrypt(pair.public_key(), {"challenge_id": "c1", "pin": "1234"}, alg=alg)
    assert token.count(".") == 4
    assert jwe.protected_header(token) == {"alg": alg, "enc": "A256GCM", "kid": pair.kid}
    assert json.loads(jwe.decrypt(token, {pair.kid: pair}.get)) == {
        "challenge_id": "c1",
        "pin": "1234",
    }


def test_published_key_has_no_private_parts(pair: jwe.KeyPair) -> None:
    public = pair.public_jwk()
    assert public["use"] == "enc" and public["kid"] == pair.kid
    assert not {"d", "p", "q", "dp", "dq", "qi"} & set(public)


def test_wrong_key_and_tampering_are_told_apart(pair: jwe.KeyPair) -> None:
    other = jwe.KeyPair.generate(use="enc", size=2048)
    impostor = jwe.PublicKey.from_jwk({**other.public_jwk(), "kid": pair.kid})
    with pytest.raises(jwe.UnknownKey):
        jwe.decrypt(jwe.encrypt(impostor, {"x": 1}), {pair.kid: pair}.get)
    good = jwe.encrypt(pair.public_key(), {"x": 1})
    head, key, iv, _ciphertext, tag = good.split(".")
    with pytest.raises(jwe.MalformedJwe):
        jwe.decrypt(".".join([head, key, iv, "AAAA", tag]), {pair.kid: pair}.get)
    nobody: dict[str, jwe.KeyPair] = {}
    with pytest.raises(jwe.UnknownKey):
        jwe.decrypt(good, nobody.get)


@pytest.mark.parametrize("garbage", ["", "garbage", "a.b.c.d.e", "....", "e30.e30.e30.e30.e30"])
def test_garbage_is_malformed(pair: jwe.KeyPair, garbage: str) -> None:
    with pytest.raises(jwe.JoseError):
        jwe.decrypt(garbage, {pair.kid: pair}.get)


def test_unusable_published_keys_and_algs_are_refused(pair: jwe.KeyPair) -> None:
    with pytest.raises(SolutionEncryptionError, match="kid"):
        jwe.PublicKey.from_jwk({k: v for k, v in pair.public_jwk().items() if k != "kid"})
    with pytest.raises(SolutionEncryptionError):
        jwe.PublicKey.from_jwk({"kty": "RSA", "kid": "x", "n": "!!"})
    with pytest.raises(SolutionEncryptionError, match="alg"):
        jwe.encrypt(pair.public_key(), {}, alg="RSA1_5")


def test_jwt_sign_and_verify() -> None:
    sig = jwe.KeyPair.generate(use="sig", size=2048)
    token = jwe.sign_jwt({"sub": "alice", "exp": 10}, sig)
    assert jwe.verify_jwt(token, {sig.kid: sig}.get) == {"sub": "alice", "exp": 10}
    with pytest.raises(jwe.InvalidJwt):
        jwe.verify_jwt(token[:-4] + "AAAA", {sig.kid: sig}.get)
    with pytest.raises(jwe.InvalidJwt):
        jwe.verify_jwt("not.a.jwt", {sig.kid: sig}.get)


# -- the client's own key (private_key_jwt) ------------------------------------------------


def _pems() -> dict[str, bytes]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pair = jwe.KeyPair.generate(use="sig", size=2048)
    private = pair._private
    return {
        "ec": ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        "encrypted": private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"passphrase"),
        ),
        "public": private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
        "garbage": b"not a key at all",
    }


def test_a_client_key_signs_assertions_its_public_half_verifies(tmp_path: Path) -> None:
    pair = jwe.KeyPair.generate(use="sig", size=2048)
    pem = pair.private_pem()
    (tmp_path / "client.pem").write_text(pem)
    key = jwe.ClientKey.load(pem)
    claims = {"iss": "c", "sub": "c", "aud": "https://issuer", "exp": 2, "jti": "j1"}
    assertion = key.sign(claims)
    # A PEM names no kid, so the assertion names none (never a thumbprint nobody registered).
    assert key.kid is None
    assert jwe.protected_header(assertion) == {"alg": "RS256", "typ": "JWT"}
    for public in (key.public_jwk(), pair.public_key()._key.export_to_pem().decode()):
        assert jwe.verify_with_public_key(assertion, jwe.load_public_key(public)) == claims
    assert jwe.ClientKey.load(tmp_path / "client.pem").kid == key.kid
    assert jwe.ClientKey.load(str(tmp_path / "client.pem")).kid == key.kid
    jwk = {k: v for k, v in json.loads(key._key.export_private()).items() if k != "kid"}
    assert jwe.ClientKey.load(jwk).kid is None
    named = jwe.ClientKey.load({**jwk, "kid": "k1"})
    assert named.kid == "k1" and "kid" not in key.public_jwk()
    assert jwe.protected_header(named.sign(claims))["kid"] == named.public_jwk()["kid"] == "k1"
    assert jwe.ClientKey.load(jwk, kid="k2").kid == "k2"
    with pytest.raises(ConfigError, match="has kid 'k1' but client_key_id is 'k2'"):
        jwe.ClientKey.load({**jwk, "kid": "k1"}, kid="k2")
    assert "PRIVATE" not in repr(key) and "kid=None" in repr(key)
    other = jwe.load_public_key(
        jwe.ClientKey.load(jwe.KeyPair.generate(use="sig", size=2048).private_pem()).public_jwk()
    )
    with pytest.raises(jwe.InvalidJwt):
        jwe.verify_with_public_key(assertion, other)


def test_a_key_whose_numbers_disagree_is_refused_every_time_it_is_loaded() -> None:
    """A PEM is checked once per process and then trusted: only a PEM that passed."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    numbers = jwe.KeyPair.generate(use="sig", size=2048)._private.private_numbers()
    broken = rsa.RSAPrivateNumbers(
        numbers.p,
        numbers.q,
        numbers.d,
        numbers.dmp1 + 2,
        numbers.dmq1,
        numbers.iqmp,
        numbers.public_numbers,
    ).private_key(unsafe_skip_rsa_key_validation=True)
    pem = broken.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    for _ in range(2):
        with pytest.raises(ConfigError, match="not an RSA private key"):
            jwe.ClientKey.load(pem)


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("ec", "EC, not RSA"),
        ("encrypted", "encrypted"),
        ("public", "a public key"),
        ("garbage", "not an RSA private key"),
    ],
)
def test_a_bad_client_key_names_the_setting(kind: str, says: str) -> None:
    with pytest.raises(ConfigError, match=f"AUTHZKIT_CLIENT_KEY_FILE: .*{says}"):
        jwe.ClientKey.load(_pems()[kind], setting="AUTHZKIT_CLIENT_KEY_FILE")
    with pytest.raises(ConfigError, match="cannot read the key file"):
        jwe.ClientKey.load("/nonexistent/client.pem", setting="AUTHZKIT_CLIENT_KEY_FILE")
