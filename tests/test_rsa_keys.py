"""The suite's RSA keys (support.rsa_keys): sound keys, each with a modulus of its own, most of
them built from primes already found; in the suite's pytest processes and in their children."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from authzkit.wire import jwe

from support.rsa_keys import SHARED_PRIMES, PrimePool, installed, shared_primes


def _genuine() -> PrimePool:
    """A pool of its own over cryptography's real generation (not the process's pool)."""
    pool = installed(rsa.generate_private_key)
    assert pool is not None
    return PrimePool(pool.generate)


def _modulus(key: rsa.RSAPrivateKey) -> int:
    return key.public_key().public_numbers().n


def _pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def test_every_key_is_a_sound_key_of_its_own_and_most_cost_no_generation() -> None:
    pool = _genuine()
    with ThreadPoolExecutor(max_workers=4) as threads:
        keys = list(threads.map(lambda _: pool(65537, 2048), range(15)))
    assert len({_modulus(key) for key in keys}) == len(keys)
    assert pool.generated < len(keys) // 3  # three generations: 6 primes, 15 keys
    for key in keys:
        assert key.key_size == 2048
        # cryptography checks the numbers (primes, d·e ≡ 1) as it loads a PEM
        serialization.load_pem_private_key(_pem(key), password=None)


@pytest.mark.parametrize("size", [1024, 2048])
def test_each_size_pairs_primes_of_its_own_size(size: int) -> None:
    pool = _genuine()
    keys = [pool(65537, size) for _ in range(4)]
    assert [key.key_size for key in keys] == [size] * 4
    assert pool.generated == 2  # two keys found four primes: the other two keys are pairs


def test_processes_sharing_primes_never_share_a_key() -> None:
    shared = shared_primes(dict(os.environ))  # the run's, found by its first process
    first, second = PrimePool(_genuine().generate, shared), PrimePool(_genuine().generate, shared)
    keys = [pool(65537, 2048) for pool in (first, second) for _ in range(2 * len(shared))]
    assert len({_modulus(key) for key in keys}) == len(keys)
    assert (first.generated, second.generated) == (1, 1)  # one prime pair each, then pairs
    # (built like those of the test above, which has cryptography check every key's numbers)


def test_the_suites_processes_and_their_children_make_keys_through_a_pool() -> None:
    pairs = [jwe.KeyPair.generate(use="enc", size=2048) for _ in range(3)]
    assert len({pair.public_jwk()["n"] for pair in pairs}) == 3
    assert SHARED_PRIMES in os.environ
    child = (
        "from authzkit.wire import jwe\n"
        "from cryptography.hazmat.primitives.asymmetric import rsa\n"
        "keys = [jwe.KeyPair.generate(use='sig', size=2048) for _ in range(3)]\n"
        "print(type(rsa.generate_private_key).__name__, rsa.generate_private_key.generated)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["PrimePool", "1"]
