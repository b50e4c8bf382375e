"""The token-calls plot: cumulative token calls against the token's lifetime, or the
sentence that replaces it when the run did not span several lifetimes.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from authzkit.loadtest.read.plots.style import empty, legend, row_colors, save
from authzkit.loadtest.read.run import TOKEN_ROW, RunResults


def token_calls(run: RunResults, path: Path) -> Path:
    """Cumulative token calls over the run (one line per token-related row)."""
    figure = Figure(figsize=(11, 3.5))
    axes = figure.subplots()
    per_second = run.per_second
    rows = (
        per_second[per_second["name"].str.startswith(TOKEN_ROW)]
        if not per_second.empty
        else per_second
    )
    if rows.empty:
        empty(axes, "no token calls recorded")
        return save(figure, path)
    colors = row_colors(run)
    for (kind, name), group in rows.groupby(["type", "name"]):
        cumulative = group.groupby("elapsed_s")["requests"].sum().cumsum()
        axes.step(
            cumulative.index,
            cumulative.values,
            where="post",
            label=f"{kind} {name}",
            color=colors.get(f"{kind} {name}"),
        )
    lifetime = token_lifetime(run)
    if lifetime:
        end = float(per_second["elapsed_s"].max())
        for number, at in enumerate(range(lifetime, int(end) + 1, lifetime)):
            axes.axvline(
                at,
                color="#999",
                linestyle=":",
                linewidth=1,
                label=f"token lifetime ({lifetime} s)" if number == 0 else None,
            )
    axes.set(
        title=f"Token calls (total {run.token_calls})",
        xlabel="elapsed s",
        ylabel="cumulative calls",
        ylim=(0, None),
    )
    legend(axes)
    return save(figure, path)


def token_lifetime(run: RunResults) -> int | None:
    """The sandbox's token lifetime in seconds when the run recorded it, else None."""
    ttl = run.meta.get("token_ttl")
    return int(ttl) if isinstance(ttl, int | float) and ttl > 0 else None


def spans_lifetimes(run: RunResults) -> bool:
    """Whether a token-calls plot says anything: several calls, and (lifetime known) a run
    at least two lifetimes long; otherwise the report says it in a sentence."""
    if run.token_calls <= 1:
        return False
    lifetime = token_lifetime(run)
    if lifetime is None or run.per_second.empty:
        return True
    return float(run.per_second["elapsed_s"].max()) >= 2 * lifetime


def token_calls_note(run: RunResults) -> str | None:
    """The sentence that replaces the token-calls plot when it would show a single step
    (one call, or a run shorter than two token lifetimes); ``None`` when the plot says
    something. The report and notebook 06 both show this."""
    if spans_lifetimes(run):
        return None
    return (
        f"Token calls: {run.token_calls} (the run did not span several token lifetimes; "
        "nothing to plot)."
    )


__all__ = ["spans_lifetimes", "token_calls", "token_calls_note", "token_lifetime"]
