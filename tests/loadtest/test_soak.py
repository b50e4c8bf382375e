"""``authzkit loadtest --soak``: what it presets, and that the command line wins."""

from __future__ import annotations

import argparse

from authzkit.loadtest.arguments import add_loadtest_arguments
from authzkit.loadtest.soak import SOAK_RATE, SOAK_RUN_TIME, apply_soak


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_loadtest_arguments(parser)
    return parser.parse_args(list(argv))


def test_soak_presets_an_open_model_endurance_run_with_the_drift_judged() -> None:
    args = parsed("--soak")
    said = apply_soak(args, sandbox=True)
    assert (args.run_time, args.rate) == (SOAK_RUN_TIME, SOAK_RATE)
    assert (args.max_drift, args.max_failure_drift) == (1.5, 1.0)
    assert (args.token_ttl, args.rotate_keys_every) == (60, 300.0)
    assert said == [
        "-t 30m",
        "--max-drift 1.5",
        "--max-failure-drift 1",
        "--rate 50",
        "--token-ttl 60",
        "--rotate-keys-every 300",
    ]


def test_what_the_command_line_gives_wins_and_a_service_elsewhere_gets_no_sandbox_flags() -> None:
    args = parsed("--soak", "-t", "30s", "--rate", "200", "--max-drift", "3")
    said = apply_soak(args, sandbox=False)
    assert (args.run_time, args.rate, args.max_drift) == ("30s", 200.0, 3.0)
    assert args.token_ttl is None and args.rotate_keys_every is None
    assert said == ["--max-failure-drift 1"]
    plain = parsed()
    assert apply_soak(plain, sandbox=True) == [] and plain.run_time == "30s"
    assert plain.rate is None
