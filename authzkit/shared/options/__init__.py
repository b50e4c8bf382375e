"""The options commands share, each defined once with its type and range.

Bad input is refused while the command line is parsed, before a process, a sandbox or a
request starts: every ``type=`` here raises :class:`argparse.ArgumentTypeError`, so argparse
names the option and the value in one line and exits 2. The checks themselves raise
:class:`ConfigError` (``check_output_path``, ``run_time_seconds`` …), for values that come
from elsewhere (a default, a variable) and must be refused the same way.

Two kinds of names (keep them stable, other modules import them from here):

- ``add_*(parser, …)``: add a shared option (``--dialect``, ``--key-size``, ``--action`` and
  ``--challenge-action``, ``--allow-wrong-answers``, ``--token-ttl``) with its one definition
  (:mod:`~authzkit.shared.options.definitions`); :func:`add_load_options` adds those of a
  load run (``--wait-time``, ``--subjects``, ``--rate`` … ``--max-lag-ms``) to the command's
  parser and to Locust's alike (:mod:`~authzkit.shared.options.load`);
- ``type=`` callables: :func:`count` / :func:`number` (factories with a range),
  :func:`run_time`, :func:`token_ttl`, :func:`wait_range`, :func:`latency_range`,
  :func:`action_name` (:mod:`~authzkit.shared.options.values`); :func:`existing_file`,
  :func:`existing_file_name`, :func:`existing_directory`, :func:`output_file`,
  :func:`output_file_or_stdout`, :func:`output_directory`
  (:mod:`~authzkit.shared.options.paths`); :func:`port`.

Like the module it was, the package imports only the wire layer: the sandbox's command line
imports it too.
"""

from __future__ import annotations

from authzkit.shared.options.definitions import (
    SANDBOX_OPTIONS,
    add_action_options,
    add_allow_wrong_answers,
    add_dialect,
    add_key_size,
    add_sandbox_options,
    add_token_ttl,
    sandbox_options,
)
from authzkit.shared.options.load import (
    ARRIVALS,
    DEFAULT_MAX_IN_FLIGHT,
    LOAD_OPTIONS,
    Option,
    add_load_options,
    max_in_flight,
)
from authzkit.shared.options.paths import (
    check_output_path,
    existing_directory,
    existing_file,
    existing_file_name,
    output_directory,
    output_file,
    output_file_or_stdout,
)
from authzkit.shared.options.values import (
    action_name,
    argument_type,
    check_number,
    count,
    latency_range,
    number,
    parse_duration,
    port,
    positive_milliseconds,
    positive_rate,
    positive_seconds,
    ratio,
    run_time,
    run_time_seconds,
    token_ttl,
    wait_range,
)

__all__ = [
    "ARRIVALS",
    "DEFAULT_MAX_IN_FLIGHT",
    "LOAD_OPTIONS",
    "SANDBOX_OPTIONS",
    "Option",
    "action_name",
    "add_action_options",
    "add_allow_wrong_answers",
    "add_dialect",
    "add_key_size",
    "add_load_options",
    "add_sandbox_options",
    "add_token_ttl",
    "argument_type",
    "check_number",
    "check_output_path",
    "count",
    "existing_directory",
    "existing_file",
    "existing_file_name",
    "latency_range",
    "max_in_flight",
    "number",
    "output_directory",
    "output_file",
    "output_file_or_stdout",
    "parse_duration",
    "port",
    "positive_milliseconds",
    "positive_rate",
    "positive_seconds",
    "ratio",
    "run_time",
    "run_time_seconds",
    "sandbox_options",
    "token_ttl",
    "wait_range",
]
