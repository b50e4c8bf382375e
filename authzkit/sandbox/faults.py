"""Fault injection's ten settings, each defined once: a field of :class:`Faults` with its
flag, metavar, check (and the line a bad value gets) and help (:class:`FaultSetting`).

From these come the ``authzkit sandbox`` flags and those ``loadtest`` and ``capacity``
forward, the ``Sandbox(...)`` keywords (:class:`FaultOptions`), the sandbox process's argv
and the pytest marker's keywords. What each fault does: docs/sandbox.md; applying them:
:class:`~authzkit.sandbox.injector.FaultInjector`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from authzkit.wire.errors import ConfigError
from authzkit.wire.variables import parse_range

# The longest service time: what the load test's histograms can hold (60 s).
MAX_SERVICE_TIME_US = 60_000_000


def parse_latency(value: Any) -> tuple[float, float]:
    """Milliseconds as ``(low, high)``: ``None``, ``5``, ``"5"``, ``"50-200"`` or ``(50, 200)``."""
    return parse_range("latency", value, unit="milliseconds")


def _latency(value: Any) -> tuple[float, float]:
    try:
        return parse_latency(value)
    except ConfigError as exc:
        raise ConfigError(str(exc).removeprefix("latency ")) from None


def _latency_text(value: tuple[float, float]) -> str:
    low, high = value
    return f"{low:.15g}" if low == high else f"{low:.15g}-{high:.15g}"


@dataclass(frozen=True)
class _Number:
    """A number setting's check: ``words`` says what it must be; None is allowed when
    ``optional`` (the setting's "none")."""

    words: str
    whole: bool = False
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None
    optional: bool = False

    def check(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        kind = int if self.whole else int | float
        if (
            isinstance(value, bool)
            or not isinstance(value, kind)
            or not math.isfinite(value)
            or (self.minimum is not None and value < self.minimum)
            or (self.above is not None and value <= self.above)
            or (self.maximum is not None and value > self.maximum)
        ):
            shown = f"{value:g}" if isinstance(value, float) else repr(value)
            raise ConfigError(f"must be {self.words}, got {shown}")
        return value if self.whole else float(value)

    def read(self, text: str) -> Any:
        try:
            return int(text) if self.whole else float(text)
        except ValueError:
            raise ConfigError(f"must be {self.words}, got {text!r}") from None


@dataclass(frozen=True)
class FaultSetting:
    """One fault setting's one definition. ``default`` is the value given for "none" (the
    keyword's and the flag's default); ``check`` turns a given value into the one kept or
    raises a :class:`ConfigError` saying what it must be; ``read`` turns command-line text
    into a given value; ``text`` turns a kept value back into a given one (run.json, argv)."""

    metavar: str
    help: str
    check: Callable[[Any], Any]
    read: Callable[[str], Any]
    default: Any = None
    text: Callable[[Any], Any] = lambda value: value
    name: str = ""  # the field's name, set from the dataclass

    @property
    def flag(self) -> str:
        """The command-line flag: ``--error-rate`` for ``error_rate``."""
        return "--" + self.name.replace("_", "-")

    def checked(self, value: Any, label: str | None = None) -> Any:
        """The value kept, or a :class:`ConfigError` naming the setting as ``label``."""
        try:
            return self.check(value)
        except ConfigError as exc:
            raise ConfigError(f"{label or self.name} {exc}") from None

    def parse(self, text: str) -> Any:
        """Command-line text as the given value, checked (an argparse ``type=`` once wrapped
        by :func:`authzkit.shared.options.argument_type`)."""
        value = self.read(text)
        self.check(value)
        return value


def _setting(
    metavar: str,
    help: str,
    check: Callable[[Any], Any],
    *,
    read: Callable[[str], Any],
    default: Any = None,
    text: Callable[[Any], Any] = lambda value: value,
) -> Any:
    definition = FaultSetting(metavar, help, check, read, default, text)
    return field(default=check(default), metadata={"setting": definition})


def _number(metavar: str, help: str, words: str, default: Any = None, **limits: Any) -> Any:
    number = _Number(words, optional=default is None, **limits)
    return _setting(metavar, help, number.check, read=number.read, default=default)


def _read_text(text: str) -> str:
    return text


@dataclass(frozen=True)
class Faults:
    """What to inject; the default injects nothing. Each field is a setting's definition."""

    latency_ms: tuple[float, float] = _setting(
        "N",
        "delay added to every response, in ms: 5, or a range 50-200",
        _latency,
        read=_read_text,
        text=_latency_text,
    )
    error_rate: float = _number(
        "R",
        "fraction 0..1 of requests answered 503 srn:error:service_unavailable (default: 0)",
        "a ratio >= 0 and <= 1",
        0.0,
        minimum=0,
        maximum=1,
    )
    fault_seed: int | None = _number(
        "N",
        "seed of the --error-rate draws and latency range, for reproducible runs",
        "a whole number",
        whole=True,
    )
    token_outage: float = _number(
        "S",
        "the token endpoint answers 503 for the first S seconds",
        "a number of seconds >= 0",
        0.0,
        minimum=0,
    )
    rotate_keys_every: float | None = _number(
        "S",
        "rotate the encryption key every S seconds (the next key is made ahead: a "
        "rotation swaps keys, it does not stall the service)",
        "a positive number of seconds",
        above=0,
    )
    pause_every: float | None = _number(
        "S",
        "a stop-the-world pause at the start of every S-second period since start "
        "(with --pause-ms)",
        "a positive number of seconds",
        above=0,
    )
    pause_ms: float | None = _number(
        "P",
        "the pause's length in ms: no response is sent during it; held ones go out when "
        "it ends (with --pause-every)",
        "a positive number of milliseconds",
        above=0,
    )
    service_time_us: int | None = _number(
        "N",
        "every authorize response goes out exactly N µs after its service began (held to a "
        "few µs; the time each took is measured: GET /sandbox/v1/service-time)",
        f"a whole number of microseconds >= 1 up to {MAX_SERVICE_TIME_US:,}",
        whole=True,
        minimum=1,
        maximum=MAX_SERVICE_TIME_US,
    )
    concurrency: int | None = _number(
        "N",
        "at most N authorize requests in service at once, the rest wait in line: with a "
        "service time L ms (--latency-ms, --service-time-us) the service takes at most "
        "N*1000/L requests/s",
        "a whole number of requests >= 1",
        whole=True,
        minimum=1,
    )
    degrade_ms_per_min: float = _number(
        "X",
        "every response X ms slower for each minute since start: a service that degrades "
        "as it runs (what an endurance run's drift shows)",
        "a number of milliseconds per minute >= 0",
        0.0,
        minimum=0,
    )

    @classmethod
    def of(cls, **given: Any) -> Faults:
        """Validated settings, given by name (``Sandbox(...)``'s fault keywords); a
        :class:`ConfigError` names the bad one. ``seed`` is ``fault_seed``'s former name."""
        if "seed" in given:
            from authzkit.wire.deprecation import deprecated

            if "fault_seed" in given:
                raise TypeError("give fault_seed only (seed is its deprecated name)")
            deprecated("Faults.of(seed=...)", "fault_seed=...")
            given["fault_seed"] = given.pop("seed")
        return cls.checked(given)

    @classmethod
    def checked(cls, given: Mapping[str, Any], *, flags: bool = False) -> Faults:
        """:meth:`of` for a mapping; ``flags``: a bad value is named by its flag
        (``--pause-ms``), as on a command line."""
        settings = {s.name: s for s in FAULT_SETTINGS}
        unknown = sorted(set(given) - set(settings))
        if unknown:
            raise TypeError(f"unexpected keyword argument {unknown[0]!r}")

        def label(name: str) -> str:
            return settings[name].flag if flags else name

        kept = {name: settings[name].checked(value, label(name)) for name, value in given.items()}
        faults = cls(**kept)
        faults._check_pause(label)
        return faults

    def _check_pause(self, label: Callable[[str], str]) -> None:
        """Both pause settings or neither, the pause shorter than its period."""
        every, length = label("pause_every"), label("pause_ms")
        how = f"the pause lasts {length} at the start of every {every} seconds"
        if self.pause_every is None and self.pause_ms is not None:
            raise ConfigError(f"{every} is required with {length}: {how}")
        if self.pause_every is not None and self.pause_ms is None:
            raise ConfigError(f"{length} is required with {every}: {how}")
        if self.pause_every and self.pause_ms and self.pause_ms >= self.pause_every * 1000:
            raise ConfigError(
                f"{length} must be shorter than the period ({every} = {self.pause_every:g} "
                f"s), got {self.pause_ms:g} ms: the sandbox would never answer"
            )

    @property
    def seed(self) -> int | None:
        """Deprecated: :attr:`fault_seed`."""
        from authzkit.wire.deprecation import deprecated

        deprecated("Faults.seed", "Faults.fault_seed")
        return self.fault_seed

    def given(self) -> dict[str, Any]:
        """The settings not at their "none", by name, as given (the latency as text):
        what run.json records and :meth:`arguments` passes on."""
        return {
            s.name: s.text(getattr(self, s.name))
            for s in FAULT_SETTINGS
            if getattr(self, s.name) != s.check(s.default)
        }

    def arguments(self) -> list[str]:
        """:meth:`given` as ``authzkit sandbox`` flags."""
        settings = {s.name: s for s in FAULT_SETTINGS}
        return [
            item
            for name, value in self.given().items()
            for item in (settings[name].flag, str(value))
        ]

    @property
    def active(self) -> bool:
        """True when anything is injected."""
        return bool(self.given().keys() - {"fault_seed"})

    def degradation_ms(self, elapsed_s: float) -> float:
        """The delay ``--degrade-ms-per-min`` adds ``elapsed_s`` seconds after start: a
        service that slows as it runs, for an endurance run's drift to find."""
        return self.degrade_ms_per_min * max(elapsed_s, 0.0) / 60.0

    def describe(self) -> str:
        """One line for the sandbox's start-up banner (``none`` when nothing is injected)."""
        low, high = self.latency_ms
        parts = []
        if high:
            parts.append(f"latency {low:g}-{high:g} ms" if low != high else f"latency {low:g} ms")
        if self.error_rate:
            seed = f" (seed {self.fault_seed})" if self.fault_seed is not None else ""
            parts.append(f"503 rate {self.error_rate:g}{seed}")
        if self.token_outage:
            parts.append(f"token outage for the first {self.token_outage:g} s")
        if self.rotate_keys_every:
            parts.append(f"key rotation every {self.rotate_keys_every:g} s")
        if self.pause_every:
            # .15g: a long pause reads 600000 ms, not 6e+05 ms
            parts.append(f"pause {self.pause_ms:.15g} ms every {self.pause_every:.15g} s")
        if self.service_time_us:
            parts.append(f"authorize service time {self.service_time_us:,} µs")
        if self.concurrency:
            parts.append(f"at most {self.concurrency:,} authorize requests in service at once")
        if self.degrade_ms_per_min:
            parts.append(f"every response {self.degrade_ms_per_min:g} ms slower per minute")
        return ", ".join(parts) or "none"


# The ten settings in the order of their flags, each named after its field.
FAULT_SETTINGS: tuple[FaultSetting, ...] = tuple(
    dataclasses.replace(f.metadata["setting"], name=f.name) for f in dataclasses.fields(Faults)
)


class FaultOptions(TypedDict, total=False):
    """The fault keywords of ``Sandbox(...)`` and ``SandboxProcess(...)``, as they may be
    given (the fields of :class:`Faults`; a test keeps the two the same)."""

    latency_ms: str | float | tuple[float, float] | None
    error_rate: float
    fault_seed: int | None
    token_outage: float
    rotate_keys_every: float | None
    pause_every: float | None
    pause_ms: float | None
    service_time_us: int | None
    concurrency: int | None
    degrade_ms_per_min: float


__all__ = [
    "FAULT_SETTINGS",
    "MAX_SERVICE_TIME_US",
    "FaultOptions",
    "FaultSetting",
    "Faults",
    "parse_latency",
]
