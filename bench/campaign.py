"""Where a campaign's time goes, and what the harness adds above an empty Spark application.

    .venv/bin/python bench/campaign.py [--designs demo,seed001] [--train-samples N] [--test-samples N]

For each design (``demo``: examples/demo.csv, 4 LeNet runs of 1 epoch; ``seed001``: 4 bi-RNN runs
shaped like Marinos 2021's design, on the sample), on a fresh local standalone cluster on free ports,
two arms, each with its own floor:

* ``before``: the campaign as it ran when issue 14 was filed: every job decodes the MNIST sample,
  BigDL's jars are shipped to every executor, Java's default JVMs, and the job of that time
  (jobs/train.py of git 0cea95c, written into the work folder: it waits for its executors before
  preparing anything, and builds the samples in a Python worker on every executor);
* ``after``: the campaign as it runs now (data decoded once per campaign, jars read in place, the
  local backend's tuned JVMs: class-data archive, MKL unpacked once, parallel collector, C1 JIT;
  jobs/train.py).

The floor of an arm: spark-submit of an empty PySpark application (bench/empty_app.py) with each
run shape's exact options of that arm (cores, executors, memory, jars, JVM options), so it
includes starting the driver and waiting for the executors. Each run goes through the harness's
own Campaign loop; every run writes Spark's event log and is sampled (harness.observer). Printed:
the mean phase breakdown, the per-run overhead above the floor (elapsed - training - validation -
floor of its shape and arm) and the campaign's efficiency (training time / campaign wall time),
and each run's CPU seconds (driver JVM, driver Python, executor JVMs, read from /proc) against its
floor's: on a machine whose cores are all busy, ``elapsed - floor`` cannot be less than the extra
CPU over the cores. Runs are never overlapped.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Sequence

# bench/logparse.py would shadow the logparse package: the project root goes first
sys.path[:1] = [str(Path(__file__).resolve().parent.parent)]

from cluster.local import LocalCluster, free_port, parse_memory_mb
from cluster.processes import EXECUTOR_CLASS
from cluster.sparkenv import SparkEnv
from harness.backends import LocalBackend
from harness.campaign import CampaignPlan, CampaignSettings, open_campaign
from harness.command import SubmitOptions, submit_argv
from harness.job import JobChoice, load_job
from harness.runner import ProcessRunner
from harness.phases import PHASES, campaign_efficiency
from harness.designfile import read_design
from harness.until import t_interval
from jobs.args import positive
from sparkdl.runspec import RunSpec
from sparkdl.campaign import CampaignDir, Manifest
from sparkdl.cli import run_cli
from sparkdl.options import CommandParser
from bench.workdir import work_folder

ROOT = Path(__file__).resolve().parent.parent
EMPTY_APP = Path(__file__).with_name("empty_app.py")
BEFORE_REVISION = "0cea95c"  # the job and its descriptions as they were when issue 14's job changes began
TICK = os.sysconf("SC_CLK_TCK")
SEED001 = """run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size
1,birnn,1,1,1,1,0.01,64
2,birnn,2,1,2,1,0.1,64
3,birnn,1,2,2,1,0.1,128
4,birnn,2,2,1,1,0.01,128
"""


class CpuMeter:
    """CPU seconds of the processes of each run, by kind: driver JVM, driver Python, executor JVMs.

    A thread reads /proc every 50 ms; a process is charged to the segment (run or floor) that was
    current when it was first seen, with the last CPU time read before it exited (so a process's
    final 50 ms can be missed). Runs are never overlapped, so segments do not mix.
    """

    KINDS = ("driver_jvm", "driver_py", "executors")

    EXECUTOR = EXECUTOR_CLASS.encode()  # in an executor JVM's command line
    DRIVER = b"org.apache.spark.deploy.SparkSubmit"  # in a driver JVM's; its children are the driver's Python

    def __init__(self, period_s: float = 0.05, executor: bytes = EXECUTOR, driver: bytes = DRIVER) -> None:
        self.period_s, self.segment = period_s, ""
        self.executor, self.driver = executor, driver
        self.share = 0.0  # the meter's own CPU time over its wall time: what it takes from the runs
        self.seen: dict[tuple[int, int], tuple[str, str, float]] = {}  # (pid, start) -> segment, kind, cpu
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "CpuMeter":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join()

    def mark(self, segment: str) -> None:
        self.segment = segment

    def _loop(self) -> None:
        started = time.monotonic()
        cmdlines: dict[tuple[str, bytes, bytes], bytes] = {}  # (pid, start time, name) -> its command line
        while not self.stopping.wait(self.period_s):
            self.share = time.thread_time() / max(time.monotonic() - started, 1e-9)  # of one core, so far
            found = self._scan(cmdlines)
            drivers = {pid for pid, cmd, _ in found if self.driver in cmd}
            for pid, cmd, stat in found:
                kind = ("executors" if self.executor in cmd else
                        "driver_jvm" if pid in drivers else "driver_py" if int(stat[1]) in drivers else None)
                if kind is not None:
                    key = (pid, int(stat[19]))  # a pid with its start time: pids are reused
                    segment = self.seen.get(key, (self.segment,))[0]
                    self.seen[key] = (segment, kind, (int(stat[11]) + int(stat[12])) / TICK)

    @staticmethod
    def _scan(cmdlines: dict[tuple[str, bytes, bytes], bytes]) -> list[tuple[int, bytes, list[bytes]]]:
        """Every process's pid, command line and stat fields after its name.

        One read of ``stat`` per process and tick; its command line is read once, and again only when its
        name changes (an exec: spark-submit's script becomes the driver JVM). Reading both files of every
        process at every tick took 12 % of one core in a bench run; this takes about 4 %.
        """
        found, alive = [], set()
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                head, _, tail = _read_proc(f"/proc/{name}/stat").rpartition(b")")
                stat = tail.split()
                key = (name, stat[19], head.partition(b"(")[2])
                alive.add(key)
                cmd = cmdlines.get(key)
                if cmd is None:
                    cmd = cmdlines[key] = _read_proc(f"/proc/{name}/cmdline")
            except (OSError, IndexError):  # exited meanwhile
                continue
            found.append((int(name), cmd, stat))
        for key in cmdlines.keys() - alive:
            del cmdlines[key]
        return found

    def of(self, segment: str) -> dict[str, float]:
        """CPU seconds of one segment by kind, and their total."""
        out = dict.fromkeys(self.KINDS, 0.0)
        for seg, kind, cpu in list(self.seen.values()):
            if seg == segment:
                out[kind] += cpu
        out["total"] = sum(out[k] for k in self.KINDS)
        return out


def _read_proc(path: str) -> bytes:
    """A /proc file's bytes, without pathlib's and the text layer's cost (the meter reads hundreds a second)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = [os.read(fd, 1 << 16)]
        while len(chunks[-1]) == 1 << 16:  # a command line can be longer (up to the kernel's ARG_MAX)
            chunks.append(os.read(fd, 1 << 16))
        return b"".join(chunks)
    finally:
        os.close(fd)


def before_job(model: str, work: Path) -> Path:
    """jobs/train.py and jobs/<model>.toml of BEFORE_REVISION, written under ``work`` from git; the .toml's path."""
    folder = work / "before-job"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("train.py", f"{model}.toml"):
        done = subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE_REVISION}:jobs/{name}"],
                              capture_output=True)
        if done.returncode != 0:
            raise SystemExit(f"error: the before arm needs jobs/{name} of commit {BEFORE_REVISION} "
                             f"({done.stderr.decode(errors='replace').strip()}): run in a full clone of the project")
        text = done.stdout
        if name.endswith(".toml"):
            # jobs of that time ran on the one Spark there was, BigDL's 3.1.3; a job's runtime now defaults to spark4
            text = text.replace(b"[job]\n", b'[job]\nruntime = "bigdl"\n', 1)
        (folder / name).write_bytes(text)
    return folder / f"{model}.toml"


def shape(spec: RunSpec) -> tuple[int, int, int]:
    return (spec.nodes, spec.executors, spec.executor_cores)


def floor_s(spec: RunSpec, options: SubmitOptions, env: SparkEnv, backend: LocalBackend, log: Path,
            repeats: int, meter: CpuMeter, label: str) -> tuple[float, dict[str, float]]:
    """Median elapsed time and median CPU seconds (by kind) of the empty application with this run's options."""
    backend.prepare(spec)
    argv = submit_argv(spec, options, env)
    app = str(options.jobs.for_spec(spec).application)
    argv = [*argv[:argv.index(app)], str(EMPTY_APP)]
    times = []
    for i in range(repeats):
        meter.mark(f"{label} floor {shape(spec)} {i}")
        started = time.monotonic()
        with open(log, "wb") as f:
            code = subprocess.run(argv, env=env.environ(), stdout=f, stderr=subprocess.STDOUT).returncode
        if code != 0:
            raise SystemExit(f"error: the empty application exited {code}; see {log}")
        times.append(time.monotonic() - started)
    time.sleep(3 * meter.period_s)
    cpu = [meter.of(f"{label} floor {shape(spec)} {i}") for i in range(repeats)]
    return statistics.median(times), {k: statistics.median(c[k] for c in cpu) for k in cpu[0]}


def run_campaign(label: str, specs: Sequence[RunSpec], options: SubmitOptions, backend: LocalBackend, out: Path,
                 cache: bool, env: SparkEnv, meter: CpuMeter) -> tuple[list[dict], float]:
    """One campaign through the harness's own loop (open_campaign); per-run rows and the campaign's wall time.

    The wall time includes opening the campaign, so the one-time decode of the data cache counts.
    """
    started = time.monotonic()
    folder = CampaignDir(out)
    plan = CampaignPlan(design_id=f"bench-{label}", shapes=tuple(specs),
                        settings=CampaignSettings(options=options, timeout=1800, retries=0, data_cache=cache),
                        manifest=Manifest.for_design(specs), provenance={"bench": label})
    with open_campaign(folder, plan, backend, resume=False, env=env, runner=ProcessRunner(),
                       progress=lambda m: said(label, m, meter)) as campaign:
        summary = campaign.run(specs)
    wall = time.monotonic() - started
    time.sleep(3 * meter.period_s)
    rows = [{"key": r.key, "shape": shape(r.spec), "status": str(r.status), "elapsed_s": r.elapsed_s,
             "wall_clock_s": r.wall_clock_s, "cpu": meter.of(f"{label} run {r.key}"), **r.metrics}
            for r in summary.records]
    return rows, wall


def said(label: str, message: str, meter: CpuMeter) -> None:
    """Print the campaign's progress; a run starting opens its CPU segment."""
    started = re.search(r"\] run (\S+): ", message)
    if started:
        meter.mark(f"{label} run {started.group(1)}")
    print(f"  [{label}] {message}", flush=True)


def cpu_report(ok: list[dict], floors: dict[tuple[int, int, int], float],
               floor_cpu: dict[tuple[int, int, int], dict[str, float]], meter_share: float) -> None:
    """CPU seconds per run against its floor's: is the time above the floor CPU work this machine had to do?

    With every core busy, a run cannot end sooner than (its CPU - the floor's CPU) / cores after the
    floor: the column ``extra/cores``, to set against ``elapsed - floor`` (training included in both).
    """
    cores = os.cpu_count() or 1
    print(f"  CPU seconds (driver JVM + driver Python + executor JVMs), run vs floor, on {cores} cores "
          f"(reading them took {100 * meter_share:.1f} % of one core):")
    print(f"  run   {'driver':>8}{'executors':>10}{'total':>8}  {'floor':>6}{'extra':>7}"
          f"  {'elapsed-floor':>14}{'extra/cores':>12}")
    for r in ok:
        c, f = r["cpu"], floor_cpu[r["shape"]]
        extra = c["total"] - f["total"]
        print(f"  {r['key']:<6}{c['driver_jvm'] + c['driver_py']:8.1f}{c['executors']:10.1f}{c['total']:8.1f}  "
              f"{f['total']:6.1f}{extra:7.1f}  {r['elapsed_s'] - floors[r['shape']]:14.1f}{extra / cores:12.1f}")


def report(label: str, rows: list[dict], wall: float, floors: dict[tuple[int, int, int], float],
           floor_cpu: dict[tuple[int, int, int], dict[str, float]], meter_share: float) -> dict[str, float]:
    ok = [r for r in rows if r["status"] == "ok" and r.get("phase_training_s") is not None]
    print(f"\n{label}: {len(rows)} run(s), {len(ok)} ok, campaign wall time {wall:.1f} s")
    head = "  run   " + "".join(f"{p:>11}" for p in PHASES) + "    elapsed   floor  overhead"
    print(head)
    overheads = []
    for r in ok:
        cells = "".join(f"{r.get(f'phase_{p}_s') or 0.0:11.2f}" for p in PHASES)
        f = floors[r["shape"]]
        over = r["elapsed_s"] - r["phase_training_s"] - r["phase_validation_s"] - f
        overheads.append(over)
        print(f"  {r['key']:<6}{cells} {r['elapsed_s']:10.1f} {f:7.1f} {over:9.1f}")
    if ok:
        means = "".join(f"{statistics.fmean(r.get(f'phase_{p}_s') or 0.0 for r in ok):11.2f}" for p in PHASES)
        print(f"  mean  {means} {statistics.fmean(r['elapsed_s'] for r in ok):10.1f} "
              f"{statistics.fmean(floors[r['shape']] for r in ok):7.1f} {statistics.fmean(overheads):9.1f}")
    cpu_report(ok, floors, floor_cpu, meter_share)
    eff = campaign_efficiency(ok, wall)
    share = [r.get("host_sampler_share") for r in ok if r.get("host_sampler_share") is not None]
    print(f"  training {eff.training_s:.1f} s + validation {eff.validation_s:.1f} s of {wall:.1f} s: "
          f"efficiency {100 * eff.efficiency:.1f} %; sum of BigDL wall clocks "
          f"{sum(r['wall_clock_s'] or 0 for r in ok):.1f} s; host sampler cost "
          f"{100 * max(share, default=0):.3f} % of a run at most")
    return {"efficiency": eff.efficiency, "overhead": statistics.fmean(overheads) if overheads else float("nan"),
            "floor": statistics.fmean(floors[r["shape"]] for r in ok) if ok else float("nan"), "wall": wall}


def arm_env(label: str, backend: LocalBackend) -> SparkEnv:
    """The SparkEnv of an arm: ``after`` is the backend's own for BigDL jobs (the runtime's, tuned as they
    ask); ``before`` ships the jars to plain JVMs."""
    env = backend.environment_for("bigdl", "tuned")
    return env if label == "after" else replace(env, ship_jars=True, driver_java_options=(),
                                                 executor_java_options=())


def bench_design(name: str, specs: list[RunSpec], args: argparse.Namespace, work: Path) -> None:
    with CpuMeter() as meter:
        bench_arms(name, specs, args, work, meter)


def bench_arms(name: str, specs: list[RunSpec], args: argparse.Namespace, work: Path, meter: CpuMeter) -> None:
    print(f"\n=== {name}: {len(specs)} run(s) ===", flush=True)
    cluster = LocalCluster(work / name / "cluster", port=free_port(), webui_port=free_port())
    mem = parse_memory_mb(args.executor_memory)
    backend = LocalBackend(cluster, mem, keep_running=False, progress=lambda m: print(f"  {m}", flush=True))
    models = {str(s.get("model")) for s in specs}
    if len(models) != 1:
        raise SystemExit(f"error: design {name} mixes models {sorted(models)}; the before arm needs one job")
    jobs = {"before": JobChoice(load_job(before_job(models.pop(), work / name))), "after": JobChoice()}
    results: dict[str, list[dict[str, float]]] = {label: [] for label in args.arms}
    try:
        for round_ in range(1, args.repeats + 1):
            if args.repeats > 1:
                print(f"\n--- {name}: round {round_} of {args.repeats} ---", flush=True)
            for label in round_order(args.arms, round_):
                out = work / name / (label if args.repeats == 1 else f"{label}-{round_}")
                results[label].append(bench_arm(name, label, specs, args, out, meter, backend, jobs[label]))
        summary = {label: {k: statistics.fmean(r[k] for r in rounds) for k in rounds[0]}
                   for label, rounds in results.items()}
        if args.repeats > 1:
            for label, rounds in results.items():
                print(overhead_verdict(f"{name} {label}", [r["overhead"] for r in rounds]), flush=True)
        if len(summary) < 2:
            return
        before, after = summary["before"], summary["after"]
        print(f"\n{name}: efficiency {100 * before['efficiency']:.1f} % -> {100 * after['efficiency']:.1f} %, "
              f"mean overhead above the floor {before['overhead']:.1f} s -> {after['overhead']:.1f} s, "
              f"mean floor {before['floor']:.1f} s -> {after['floor']:.1f} s, "
              f"campaign {before['wall']:.0f} s -> {after['wall']:.0f} s", flush=True)
    finally:
        cluster.stop()


def bench_arm(name: str, label: str, specs: list[RunSpec], args: argparse.Namespace, out: Path, meter: CpuMeter,
              backend: LocalBackend, job: JobChoice) -> dict[str, float]:
    """One arm's floors, then its campaign in ``out``; the figures :func:`report` returns."""
    cluster = backend.cluster
    backend.open(specs, "bigdl")  # each arm's campaign stops the cluster when it ends
    env = arm_env(label, backend)
    options = SubmitOptions(master_url=cluster.master_url, executor_memory=args.executor_memory,
                            train_samples=args.train_samples, test_samples=args.test_samples, jobs=job)
    floors: dict[tuple[int, int, int], float] = {}
    floor_cpu: dict[tuple[int, int, int], dict[str, float]] = {}
    for spec in specs:
        if shape(spec) not in floors:
            floors[shape(spec)], floor_cpu[shape(spec)] = floor_s(
                spec, options, env, backend, out.parent / f"floor-{label}.log", args.floor_repeats, meter, label)
            print(f"  [{label}] floor {shape(spec)} (nodes, executors, cores): {floors[shape(spec)]:.1f} s, "
                  f"{floor_cpu[shape(spec)]['total']:.1f} CPU s", flush=True)
    what = ("each job decodes the data; jars shipped; plain JVMs; the job of 0cea95c" if label == "before"
            else "data decoded once per campaign; jars in place; tuned JVMs; jobs/train.py")
    return report(f"{name} {label} ({what})",
                  *run_campaign(label, specs, options, backend, out, cache=label == "after", env=env, meter=meter),
                  floors, floor_cpu, meter.share)


GOAL_S = 2.0  # the per-run overhead above the empty application this bench is held to
CONFIDENCE = 0.95


def overhead_verdict(label: str, round_means: Sequence[float], goal_s: float = GOAL_S,
                     confidence: float = CONFIDENCE) -> str:
    """The mean overhead over rounds, its t interval (rounds are the replicates: each has its own floors), and
    whether the goal is met: only when the whole interval is at or below it; not met when the whole interval
    is above it; otherwise this many rounds cannot tell at this machine's noise."""
    interval = t_interval(list(round_means), confidence)
    if interval.upper <= goal_s:
        verdict = f"the {goal_s:g} s goal is met"
    elif interval.lower > goal_s:
        verdict = f"the {goal_s:g} s goal is not met"
    else:
        verdict = f"{interval.n} rounds cannot tell whether the {goal_s:g} s goal is met"
    return (f"{label}: mean overhead above the floor {interval.mean:.2f} s over {interval.n} rounds "
            f"({', '.join(f'{m:.1f}' for m in round_means)}), {100 * confidence:.0f} % interval "
            f"{interval.lower:.2f} to {interval.upper:.2f} s: {verdict}")


ARMS = ("before", "after")


def round_order(chosen: Sequence[str], round_: int) -> tuple[str, ...]:
    """The arms of round ``round_`` (from 1): as given in odd rounds, reversed in even ones, so that over rounds
    neither arm always runs second, after the other has warmed the page cache and the cluster's daemons."""
    return tuple(chosen) if round_ % 2 else tuple(reversed(chosen))


def arms(text: str) -> tuple[str, ...]:
    """``--arms``: a comma-separated subset of :data:`ARMS`."""
    chosen = tuple(a.strip() for a in text.split(",") if a.strip())
    unknown = [a for a in chosen if a not in ARMS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"unknown arm {', '.join(unknown) or '(none)'}: give before, after or both")
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--designs", default="demo,seed001", help="comma-separated: demo, seed001")
    p.add_argument("--train-samples", type=int, help="default: all 4,000 training digits of the sample")
    p.add_argument("--test-samples", type=int)
    p.add_argument("--arms", type=arms, default=ARMS,
                   help="comma-separated: before, after (default both; one arm for an A/B of a change); run in this "
                        "order, and in the reverse order in every second round of --repeats")
    p.add_argument("--executor-memory", default="700m")
    p.add_argument("--floor-repeats", type=int, default=3, help="empty applications per shape and arm (median)")
    p.add_argument("--repeats", type=positive(int, "--repeats"), default=1,
                   help="whole rounds of the arms, one after the other, each with its own floors (default 1); with "
                        "2 or more, each arm's mean overhead gets a 95 %% t interval over the rounds, and a verdict "
                        "on the 2 s goal (one round can be 1-2 s off the next on this machine)")
    p.add_argument("--work", type=Path, help="folder for the campaigns, kept (default: a new temporary one, removed "
                                              "at the end)")
    args = p.parse_args(argv)
    with work_folder("bench-campaign-", args.work) as work:
        seed_design = work / "seed001.csv"
        seed_design.write_text(SEED001)
        designs = {"demo": ROOT / "examples" / "demo.csv", "seed001": seed_design}
        print(f"work folder {work}")
        for name in args.designs.split(","):
            bench_design(name, read_design(designs[name]), args, work)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
