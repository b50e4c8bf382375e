"""``authzkit loadtest --soak``: what it presets, and that the command line wins."""

from __future__ import annotations

import argparse

from authzkit.loadtest.arguments import add_loadtest_arguments
from authzkit.loadtest.soak import SOAK_RATE, SOAK_RUN_TIME, soak_presets, soak_words


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_loadtest_arguments(parser)
    return parser.parse_args(list(argv))


def test_soak_presets_an_open_model_endurance_run_with_the_drift_judged() -> None:
    args = parsed("--soak")
    presets = soak_presets(args, sandbox=True)
    assert (presets["run_time"], presets["rate"]) == (SOAK_RUN_TIME, SOAK_RATE)
    assert (presets["max_drift"], presets["max_failure_drift"]) == (1.5, 1.0)
    assert (presets["token_ttl"], presets["rotate_keys_every"]) == (60, 300.0)
    assert args.run_time == "30s" and args.rate is None  # the parsed options stay as parsed
    assert soak_words(presets) == [
        "-t 30m",
        "--max-drift 1.5",
        "--max-failure-drift 1",
        "--rate 50",
        "--token-ttl 60",
        "--rotate-keys-every 300",
    ]


def test_what_the_command_line_gives_wins_and_a_service_elsewhere_gets_no_sandbox_flags() -> None:
    args = parsed("--soak", "-t", "30s", "--rate", "200", "--max-drift", "3")
    presets = soak_presets(args, sandbox=False)
    assert presets == {"max_failure_drift": 1.0}
    assert soak_words(presets) == ["--max-failure-drift 1"]
    plain = parsed()
    assert soak_presets(plain, sandbox=True) == {} and plain.run_time == "30s"
    assert plain.rate is None
