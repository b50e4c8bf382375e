"""The listeners of a Locust process: every request's latency into the histograms, the
workers' reports to the master, and the end of the run (thresholds, summary files).

A report rides just before Locust's stats over the same connection, so both count the same
requests (docs/internals.md, "The listeners").
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import gevent
from locust import events
from locust.runners import STATE_MISSING, MasterRunner, WorkerRunner

from authzkit.loadtest.record.data import DataCounter, sent_bytes
from authzkit.loadtest.record.drift import judge
from authzkit.loadtest.record.evaluations import COUNTS
from authzkit.loadtest.record.histograms import LatencyRecorder, values_at
from authzkit.loadtest.record.locust_setup import STOP_SENDING, state
from authzkit.loadtest.record.quiet import QUIET
from authzkit.loadtest.record.schedule import ScheduleStats
from authzkit.loadtest.record.summary import (
    LIVE_FILE,
    RECENT_S,
    build_summary,
    error_entries,
    live_figures,
    write_run_files,
)
from authzkit.loadtest.record.timeline import SecondRecorder, TimelineMerger
from authzkit.loadtest.record.timing import ANSWERED_AT, HELD_ROWS, SERVICE_MS
from authzkit.loadtest.record.workers import MASTER_LOST, MASTER_SILENT_S, WorkerRoster

log = logging.getLogger(__name__)
_now = time.time

# The open model's schedule counters and lag (its users start and finish the calls).
schedule_stats = ScheduleStats()

# -- latency histograms: recorded per request, sent beside Locust's stats ----------------------

_latencies = LatencyRecorder()  # the run's histograms, fed by _seconds as each second closes
_service = LatencyRecorder()  # open model: times from the actual send
_seconds = SecondRecorder(run=_latencies)  # response times by the second they completed in
_timeline = TimelineMerger()  # the master's (or lone process's) merge of every drain
_data = DataCounter()  # body bytes sent and received, per row
_HISTOGRAMS_KEY = "authzkit_latency_us"
_SERVICE_KEY = "authzkit_service_us"
_SCHEDULE_KEY = "authzkit_schedule"
_COUNTERS_KEY = "authzkit_token_provider"
_TIMELINE_KEY = "authzkit_seconds"
_FAILED_KEY = "authzkit_failed_seconds"
_DATA_KEY = "authzkit_data"
_DECISIONS_KEY = "authzkit_decision_us"  # an AuthZEN run's per-decision histogram


@events.request.add_listener
def _record_latency(
    request_type: str,
    name: str,
    response_time: float | None,
    response_length: int = 0,
    response: Any = None,
    context: Any = None,
    exception: Any = None,
    start_time: float | None = None,
    url: str | None = None,
    **_: Any,
) -> None:
    """Every request, once: its time appended to the current second's buffer of its row,
    which becomes the timeline's second and goes into the run's histograms when the second
    closes. Locust's keyword arguments are named one by one (a catch-all of half of them
    made every call build a dictionary: this runs for every request of the run)."""
    keyed = isinstance(context, dict)
    answered_at = context.get(ANSWERED_AT) if keyed else None  # a row told after its answer
    completed_at = _now() if answered_at is None else answered_at
    _seconds.record(request_type, name, response_time, completed_at, exception is not None)
    _data.record(request_type, name, sent_bytes(response, context), response_length)
    if schedule_stats.active:
        service = context.get(SERVICE_MS, response_time) if keyed else None
        _service.record(request_type, name, response_time if service is None else service)


def _reset_all() -> None:
    _latencies.reset()
    _service.reset()
    schedule_stats.reset()
    _seconds.reset()
    _timeline.reset()
    _data.reset()
    COUNTS.reset()
    _held.clear()


# When the load started (test_start): the live line counts the run from here, not from
# the start of a master's wait for its workers.
_run: dict[str, float] = {}


@events.test_start.add_listener
def _new_test(**_: Any) -> None:
    # Locust clears its stats right before test_start (master, worker and local runner).
    _reset_all()
    _run.pop("stopped", None)
    _run["started"] = _now()
    _roster.started(_run["started"])


@events.test_stop.add_listener
def _test_stopped(**_: Any) -> None:
    """When the load ended (its users stopped, their last calls answered): ``run_s`` counts
    to here, not to the exit after a master's wait for its workers' last reports."""
    if "started" in _run and "stopped" not in _run:
        _run["stopped"] = _now()


@events.reset_stats.add_listener
def _stats_reset(**_: Any) -> None:
    _reset_all()


@events.init.add_listener
def _follow_reset_stats_option(environment: Any, **_: Any) -> None:
    """``--reset-stats``: Locust resets its stats when spawning completes; so do we."""

    def reset(**_: Any) -> None:
        if environment.reset_stats:
            _reset_all()

    environment.events.spawning_complete.add_listener(reset)


# -- end of run: token counters, thresholds, summary ---------------------------------------------


def _provider_counters() -> dict[str, int]:
    found = state.get("shared")
    provider = found.token_provider if found is not None else None
    if provider is None:  # no process state yet, or an AuthZEN run sending no token
        return {"token_calls": 0, "refreshes": 0, **COUNTS.as_counters()}
    return {
        "token_calls": provider.token_calls,
        "refreshes": provider.refreshes,
        **COUNTS.as_counters(),  # an AuthZEN run's decisions
    }


REPORT_MESSAGE = "authzkit_report"  # a Locust custom message, worker → master


def _worker_report() -> dict[str, Any]:
    """What a worker recorded since its last report (deltas, like Locust's own stats), and
    its token provider's counters (totals)."""
    seconds = _seconds.drain()  # first: closing the current second feeds the histograms
    report: dict[str, Any] = {
        _COUNTERS_KEY: _provider_counters(),
        _HISTOGRAMS_KEY: _latencies.drain(),
        _TIMELINE_KEY: seconds,
        _FAILED_KEY: _seconds.drain_failures(),
        _DATA_KEY: _data.drain(),
    }
    decisions = COUNTS.drain()
    if decisions is not None:
        report[_DECISIONS_KEY] = decisions
    if schedule_stats.active:
        report[_SERVICE_KEY] = _service.drain()
        report[_SCHEDULE_KEY] = schedule_stats.drain()
    return report


_worker_counters: dict[str, dict[str, int]] = {}
_roster = WorkerRoster()  # the master's: who connected, reported, fell silent
_held: dict[str, list[dict[str, Any]]] = {}  # the master's: worker → reports not yet merged


def _hold_worker_report(environment: Any, msg: Any, **_: Any) -> None:
    """The master's side of :data:`REPORT_MESSAGE`: hold it until the same worker's stats
    report, which the worker sends right after it, arrives.

    Merging at once would count a set of requests in our histograms before Locust counts
    them in its stats; a master quitting on its run time stops listening half a second after
    it tells the workers to quit, and can stop between the two messages of a last report."""
    _roster.connected(msg.node_id, time.time())
    _held.setdefault(msg.node_id, []).append(msg.data or {})


def _merge_held(node: str) -> None:
    """Merge what ``node`` sent before the stats report now being counted (exact: counts add
    up) and keep its latest counters."""
    for data in _held.pop(node, ()):
        if _COUNTERS_KEY in data:
            _worker_counters[node] = data[_COUNTERS_KEY]
        _latencies.add_encoded(data.get(_HISTOGRAMS_KEY, {}))
        _service.add_encoded(data.get(_SERVICE_KEY, {}))
        schedule_stats.add(data.get(_SCHEDULE_KEY))
        _timeline.add(data.get(_TIMELINE_KEY), data.get(_FAILED_KEY))
        _data.add(data.get(_DATA_KEY))
        COUNTS.add_encoded(data.get(_DECISIONS_KEY))


@events.init.add_listener
def _exchange_reports(environment: Any, **_: Any) -> None:
    """Workers send their histograms to the master in a custom message, right before each of
    Locust's own stats reports and from the same greenlet: one worker's messages reach the
    master in the order sent, so the master merges a held message when the stats report
    after it fires ``worker_report``, the very event in which Locust counts those stats (the
    merged counts equal Locust's ``num_requests`` row by row, final report included)."""
    runner = environment.runner
    if isinstance(runner, MasterRunner):
        runner.register_message(REPORT_MESSAGE, _hold_worker_report)
        _follow_workers(environment)
        _hear_last_reports(environment)
    elif isinstance(runner, WorkerRunner):

        def send(**_: Any) -> None:
            runner.send_message(REPORT_MESSAGE, _worker_report())

        environment.events.report_to_master.add_listener(send)


def _follow_workers(environment: Any) -> None:
    """The master's roster: each connection (``workers.json`` rewritten, so a master that
    gives up waiting for its workers still says who came) and each stats report's count."""
    options = environment.parsed_options
    _roster.expected = getattr(options, "expect_workers", None)
    summary_file = getattr(options, "summary_file", "") or ""

    def connected(client_id: str, **_: Any) -> None:
        _roster.connected(client_id, time.time())
        if summary_file:
            _roster.write(Path(summary_file).parent, time.time())

    def reported(client_id: str, data: Any, **_: Any) -> None:
        _merge_held(client_id)
        total = (data or {}).get("stats_total") or {}
        _roster.reported(client_id, int(total.get("num_requests") or 0), time.time())

    environment.events.worker_connect.add_listener(connected)
    environment.events.worker_report.add_listener(reported)


@events.init.add_listener
def _leave_a_lost_master(environment: Any, **_: Any) -> None:
    """A worker whose master stopped answering quits with one line saying so and
    :data:`MASTER_LOST`, instead of sending load for nobody (or retrying for minutes)."""
    runner = environment.runner
    if not isinstance(runner, WorkerRunner):
        return
    # init fires once the worker is connected (Locust's runner waits for the master's ack
    # before): counted from then, a master gone before its first heartbeat is seen too.
    heard = {"at": time.monotonic()}

    def heartbeat(**_: Any) -> None:
        heard["at"] = time.monotonic()

    def watch() -> None:
        while True:
            gevent.sleep(1.0)
            if time.monotonic() - heard["at"] > MASTER_SILENT_S:
                log.error(
                    "authzkit: lost the master at %s:%s: no heartbeat for %g s; stopping "
                    "this worker (exit %d)",
                    runner.master_host,
                    runner.master_port,
                    MASTER_SILENT_S,
                    MASTER_LOST,
                )
                environment.process_exit_code = MASTER_LOST
                runner.quit()
                return

    environment.events.heartbeat_received.add_listener(heartbeat)
    gevent.spawn(watch)


# How long a headless master waits for its workers' last reports beyond --stop-timeout.
LAST_REPORT_WAIT_S = 3.0


def _hear_last_reports(environment: Any) -> None:
    """Locust's headless master tells its workers to quit and listens half a second more; a
    worker first lets its users finish (``--stop-timeout``: an open model's schedule runs
    to its end) and only then sends its last report, which a busy machine's master never
    heard: its requests were in no total (a 3 s run's, all of them). So when the run stops,
    the master tells its workers to quit itself and waits until each has quit (its last
    report arrives before its quit message), or until Locust marks it missing: at most
    twice ``--stop-timeout`` (a schedule not yet begun may take that long to begin, and as
    long again to end) + :data:`LAST_REPORT_WAIT_S`."""
    runner = environment.runner

    def stopped(**_: Any) -> None:
        _roster.stopped(_now())
        if not getattr(environment.parsed_options, "headless", False):
            return  # the web UI's stop: the workers stay for the next run
        runner.send_message("quit")  # to every worker
        deadline = time.monotonic() + 2 * (environment.stop_timeout or 0) + LAST_REPORT_WAIT_S
        while time.monotonic() < deadline and any(
            client.state != STATE_MISSING for client in runner.clients.values()
        ):
            gevent.sleep(0.05)

    environment.events.test_stop.add_listener(stopped)


# The live figures are rewritten this often for the command's progress line (LIVE_FILE).
LIVE_EVERY_S = 1.0


@events.init.add_listener
def _write_live_figures(environment: Any, **_: Any) -> None:
    """On the master (or a lone process) writing a summary: :data:`LIVE_FILE` beside it,
    rewritten every :data:`LIVE_EVERY_S` (atomically), for ``authzkit loadtest``'s
    progress line: the run's figures so far, and the p99 of its last :data:`RECENT_S`
    whole seconds (``recent_p99_us``; a lone process drains its seconds into the merge
    for it). A worker's figures reach the master with its reports."""
    if isinstance(environment.runner, WorkerRunner) or environment.parsed_options is None:
        return
    summary_file = getattr(environment.parsed_options, "summary_file", "") or ""
    if not summary_file:
        return
    path = Path(summary_file).with_name(LIVE_FILE)
    partial = path.with_name(f".{LIVE_FILE}.partial")
    lone = not isinstance(environment.runner, MasterRunner)

    def write_every() -> None:
        while True:
            gevent.sleep(LIVE_EVERY_S)
            if lone:  # its own seconds into the merge (a master's come with the reports)
                QUIET.wait()  # each step in a stretch with no start due (record.quiet)
                _timeline.add(_seconds.drain(), _seconds.drain_failures())
            QUIET.wait()
            figures: dict[str, float] = {**live_figures(_latencies.histograms)}
            QUIET.wait()
            figures.update(_timeline.recent(RECENT_S))
            if "started" in _run:  # seconds of load so far (none while a master waits)
                figures["run_s"] = round(_now() - _run["started"], 1)
            QUIET.wait()
            try:
                partial.write_text(json.dumps(figures))
                partial.replace(path)
            except OSError:  # a progress figure: never worth failing a run for
                pass

    gevent.spawn(write_every)


@events.init.add_listener
def _schedule_before_stop(environment: Any, **_: Any) -> None:
    """An open-model process told to stop before its schedule began (a busy machine's
    worker spawned its user after the master's run time was over) waits for the schedule
    to begin, at most ``--stop-timeout``; the graceful stop then lets it run to its end, as
    it lets every schedule end: a finished run intends every start it planned."""
    runner = environment.runner
    if isinstance(runner, MasterRunner) or not any(
        hasattr(user_class, "follow_schedule") for user_class in environment.user_classes
    ):
        return

    def stopping(**_: Any) -> None:
        if not getattr(environment.parsed_options, "rate", None):
            return  # a closed-loop run (a worker learns --rate from its master's spawn)
        deadline = time.monotonic() + (environment.stop_timeout or 0)
        while time.monotonic() < deadline and not state.get("scheduled") and "error" not in state:
            gevent.sleep(0.05)

    environment.events.test_stopping.add_listener(stopping)


# How long an interrupted process waits for its open-model calls in flight to be answered
# before it writes its summary (an answer is usually milliseconds away).
CALLS_END_WAIT_S = 1.0


def _let_calls_end() -> None:
    """Interrupted mid-schedule (Locust writes the summary before it stops its users): no call
    starts any more, and the calls sent get up to :data:`CALLS_END_WAIT_S` to end, so that
    every call sent is a row of the summary."""
    state[STOP_SENDING] = True
    if gevent.getcurrent() is gevent.get_hub():
        return  # no waiting from the loop itself
    deadline = time.monotonic() + CALLS_END_WAIT_S
    while schedule_stats.in_flight > 0 and time.monotonic() < deadline:
        gevent.sleep(0.005)


@events.quitting.add_listener
def _at_exit(environment: Any, **_: Any) -> None:
    """On the master (or a lone process): thresholds → exit code, and the summary files."""
    if isinstance(environment.runner, WorkerRunner) or environment.parsed_options is None:
        return
    if schedule_stats.in_flight > 0:
        _let_calls_end()
    HELD_ROWS.tell_all()  # answered calls whose rows the interrupted schedule still held
    options = environment.parsed_options
    total = environment.stats.total
    # a lone process's own seconds (a master has none)
    _timeline.add(_seconds.drain(), _seconds.drain_failures())
    histograms = _latencies.histograms
    service = _service.histograms if schedule_stats.active else None
    schedule = schedule_stats.summary(options.rate) if schedule_stats.active else None
    if schedule is not None:  # beside lag_p99_us: the lag p50 the report sets beside latency p50
        lag = schedule_stats.lag
        schedule["lag_p50_us"] = values_at(lag, [50.0])[50.0]
    # seconds of load, from the test's start to its stop (an interrupted run's: to now)
    run_s = round(_run.get("stopped", _now()) - _run["started"], 1) if "started" in _run else None
    summary = build_summary(
        requests=total.num_requests,
        failures=total.num_failures,
        p95_ms=total.get_response_time_percentile(0.95) or 0.0,
        errors=error_entries(environment.stats.errors.values()),
        counters=list(_worker_counters.values()) or [_provider_counters()],
        max_p95_ms=options.max_p95_ms,
        max_failure_ratio=options.max_failure_ratio,
        max_lag_ms=getattr(options, "max_lag_ms", None),
        max_p99_ms=getattr(options, "max_p99_ms", None),
        max_p999_ms=getattr(options, "max_p999_ms", None),
        histograms=histograms,
        service_histograms=service,
        schedule=schedule,
        workers=_workers_at_exit(environment.runner),
        drift=_drift(options),
        run_s=run_s,
        data=_data.summary(run_s),
        per_decision=COUNTS.per_decision,
    )
    verdict = summary["thresholds"]
    lost = (summary.get("workers") or {}).get("problems") or []
    if lost:  # a worker lost mid-run: the run did not offer the load planned
        verdict["problems"] = verdict["problems"] + lost
        verdict["passed"] = False
        verdict["checked"] = True
    if verdict["checked"] and environment.process_exit_code != 2:
        environment.process_exit_code = 0 if verdict["passed"] else 1
        for problem in verdict["problems"]:
            log.error("authzkit threshold broken: %s", problem)
    log.info(
        "authzkit: token provider made %(token_calls)d token calls (%(refreshes)d "
        "refreshes) in %(processes)d process(es)",
        summary["token_provider"],
    )
    if options.summary_file:
        Path(options.summary_file).with_name(LIVE_FILE).unlink(missing_ok=True)
        write_run_files(
            options.summary_file, summary, histograms, service, timeline=_timeline.table()
        )


def _drift(options: Any) -> dict[str, Any]:
    """summary.json's ``drift``: the merged seconds judged (see
    :mod:`~authzkit.loadtest.record.drift`)."""
    seconds, failed = _timeline.seconds()
    return judge(
        seconds,
        failed,
        max_drift=getattr(options, "max_drift", None),
        max_failure_drift=getattr(options, "max_failure_drift", None),
        window_s=getattr(options, "drift_window", None),
        warm_up_s=getattr(options, "warm_up", None),
    )


def _workers_at_exit(runner: Any) -> dict[str, Any] | None:
    """The roster's verdict on a master (None on a lone process: it has no workers)."""
    if not isinstance(runner, MasterRunner):
        return None
    return _roster.summary(time.time(), missing=[client.id for client in runner.clients.missing])


__all__ = ["LIVE_EVERY_S", "REPORT_MESSAGE", "schedule_stats"]
