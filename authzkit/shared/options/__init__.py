"""The options commands share, each defined once with its type and range.

``add_*(parser, …)`` adds a shared option; the ``type=`` callables refuse bad input while
the command line is parsed (one line, exit 2). Other modules import these names from here;
the package imports only the wire layer (docs/internals.md, "Shared options").
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
