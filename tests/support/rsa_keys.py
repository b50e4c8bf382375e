"""RSA keys for every Python process of the suite, made from primes already found.

Finding primes is what an RSA key generation costs (tens of ms at 2048 bits, more on a
machine the suite keeps busy), and the suite starts hundreds of sandboxes, in its pytest
processes and as children, with two or three keys each. :class:`PrimePool` stands in for
cryptography's ``rsa.generate_private_key``: it keeps the primes of every key it really
generates and builds the next keys from pairs of primes not used together yet.

Every key of every process has a modulus of its own, so a key meant to be foreign (an
unknown encryption key, a client's wrong key, another CA) is foreign:

- each pair is used once in a process, and the pair a real key was made of is that key's;
- a pair always holds a prime this process found itself. Primes shared by the whole run
  (:data:`SHARED_PRIMES`, found once by the first pytest process) only ever pair with one.

Keys sharing a prime would be unsafe outside a test: this lives in ``support`` and is
switched on by ``tests/conftest.py`` for the suite's processes only (its own, and through
``support/site/sitecustomize.py`` on ``PYTHONPATH``, the children they start).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from math import gcd, lcm
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

SHARED_PRIMES = "SUITE_RSA_PRIMES"  # variable: hex primes found by the run's first process
SHARED_KEYS = 4  # keys generated for SHARED_PRIMES (two primes each)
SHARED_SIZE = 2048  # the size the suite's sandboxes use
E = 65537
SITE = Path(__file__).resolve().parent / "site"  # the children's sitecustomize

Generate = Callable[..., "RSAPrivateKey"]


class PrimePool:
    """A drop-in for ``rsa.generate_private_key`` that reuses primes across keys.

    ``shared`` primes (of ``SHARED_SIZE``-bit keys, exponent 65537) pair with the first
    primes this pool finds, so a process needing a few keys generates one.
    """

    pools_primes = True  # what installed() looks for: a child loads this module by path

    def __init__(self, generate: Generate, shared: tuple[int, ...] = ()) -> None:
        self.generate = generate  # the function this pool stands in for
        self.generated = 0  # keys really generated (the rest were built from pairs)
        self._lock = threading.Lock()
        self._primes: dict[tuple[int, int], list[int]] = {
            (E, SHARED_SIZE): list(dict.fromkeys(shared))
        }
        self._unused: dict[tuple[int, int], deque[tuple[int, int]]] = {}

    def __call__(self, public_exponent: int, key_size: int, backend: Any = None) -> RSAPrivateKey:
        kind = (public_exponent, key_size)
        with self._lock:  # one real generation at a time: threads meanwhile wait for its pairs
            unused = self._unused.setdefault(kind, deque())
            if not unused:
                key = self.generate(public_exponent=public_exponent, key_size=key_size)
                self.generated += 1
                self._learn(kind, key)
                return key
            pair = unused.popleft()
        return _key_from(public_exponent, *pair)

    def _learn(self, kind: tuple[int, int], key: RSAPrivateKey) -> None:
        """Pair each prime of ``key`` with every prime known before it (never p with its q)."""
        numbers = key.private_numbers()
        own = {numbers.p, numbers.q}
        primes = self._primes.setdefault(kind, [])
        found = [prime for prime in (numbers.p, numbers.q) if prime not in primes]
        fresh = [(old, new) for new in found for old in primes if {old, new} != own]
        primes += found
        self._unused[kind].extend(pair for pair in fresh if _pairs_well(*kind, *pair))


def _pairs_well(e: int, size: int, p: int, q: int) -> bool:
    """``p·q`` has the size asked, and ``e`` is invertible (true of every prime OpenSSL picks)."""
    return (p * q).bit_length() == size and gcd(e, (p - 1) * (q - 1)) == 1


def _key_from(e: int, p: int, q: int) -> RSAPrivateKey:
    """The RSA key with primes ``p`` and ``q`` (each found by a real generation)."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    d = pow(e, -1, lcm(p - 1, q - 1))
    numbers = rsa.RSAPrivateNumbers(
        p=p,
        q=q,
        d=d,
        dmp1=d % (p - 1),
        dmq1=d % (q - 1),
        iqmp=pow(q, -1, p),
        public_numbers=rsa.RSAPublicNumbers(e, p * q),
    )
    return numbers.private_key(unsafe_skip_rsa_key_validation=True)


def shared_primes(environ: MutableMapping[str, str]) -> tuple[int, ...]:
    """The run's shared primes, found now (and put in ``environ``) by its first process."""
    if SHARED_PRIMES not in environ:
        from cryptography.hazmat.primitives.asymmetric import rsa

        pool = installed(rsa.generate_private_key)
        generate = rsa.generate_private_key if pool is None else pool.generate

        def primes(_: int) -> list[int]:
            numbers = generate(public_exponent=E, key_size=SHARED_SIZE)
            found = numbers.private_numbers()
            return [found.p, found.q]

        with ThreadPoolExecutor(max_workers=2) as threads:
            found = [prime for pair in threads.map(primes, range(SHARED_KEYS)) for prime in pair]
        environ[SHARED_PRIMES] = ",".join(format(prime, "x") for prime in found)
    return _listed(environ[SHARED_PRIMES])


def _listed(text: str) -> tuple[int, ...]:
    """The primes of a :data:`SHARED_PRIMES` value (hex, comma-separated)."""
    return tuple(int(prime, 16) for prime in text.split(",") if prime)


def installed(function: Any) -> PrimePool | None:
    """``function`` if it is a pool (of this module however it was loaded), else ``None``."""
    return function if getattr(function, "pools_primes", False) else None


def install(module: ModuleType, shared: tuple[int, ...] | None = None) -> PrimePool:
    """Make ``module`` (cryptography's ``rsa``) generate keys through a pool; returns it.

    Once per process: a pool already installed is returned as it is. authzkit's keys,
    jwcrypto's and the TLS tests' certificates all take it, each looking the function up as
    it calls it. ``shared`` defaults to :data:`SHARED_PRIMES` in the environment.
    """
    current = getattr(module, "generate_private_key")  # noqa: B009 - a module given at run time
    if (pool := installed(current)) is not None:
        return pool
    if shared is None:
        shared = _listed(os.environ.get(SHARED_PRIMES, ""))
    pool = PrimePool(current, shared)
    setattr(module, "generate_private_key", pool)  # noqa: B010
    return pool


def share_with_children(environ: MutableMapping[str, str]) -> None:
    """Every Python child started with ``environ`` installs a pool when it first imports
    cryptography's ``rsa`` (``support/site/sitecustomize.py``), with the shared primes."""
    shared_primes(environ)
    paths = environ.get("PYTHONPATH", "").split(os.pathsep)
    if str(SITE) not in paths:
        environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(SITE), *paths) if p)


__all__ = [
    "SHARED_PRIMES",
    "PrimePool",
    "install",
    "installed",
    "share_with_children",
    "shared_primes",
]
