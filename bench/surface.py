"""Record a surface: a full grid of real runs, each point replicated, every run's epochs and times kept.

    python bench/surface.py --local --out runs/surface-lenet                 # LeNet on the sample, 27 x 3 runs
    python bench/surface.py --local --out runs/surface-lenet --resume        # continue a stopped recording
    python bench/surface.py --pack runs/surface-lenet bench/data/surface-lenet   # the shipped copy (<= 5 MB)
    python bench/surface.py --local --out runs/surface-xgb --job xgboost --space space.toml \
        --fixed learning_rate=0.3 --fidelity rounds                          # any job, as sparkdl search takes it

The grid is the full factorial of the space (default: bench/search.py's, learning rate 0.01/0.071/0.5 x
batch 32/64/128 x epochs 1/2/3), each point run ``--replicates`` times (default 3), through the same
campaign loop as ``harness.submit`` (:class:`harness.campaign.Campaign`), so the recording is a campaign
folder that every command reads (results.csv, manifest.json, logs/, and the runs' per-epoch figures).
The runs go in randomized complete blocks: replicate r of every point, in an order shuffled with
``--order-seed``, before replicate r + 1, so a drift in the machine's speed spreads over every point.

After the runs the folder gets ``surface.csv`` (one row per validated epoch of every ok run: its run,
replicate, factors, epoch, wall clock and accuracy at that epoch, and the run's elapsed_s and start-up,
the time outside BigDL's training loop) and ``provenance.json`` (the command, the dates, the machine's
load average before and after, its CPUs; the job and the fidelity). ``optimize.search --replay`` and
``bench/search.py --replay`` replay it, whatever its job, at the fidelity it was recorded with.

``--job`` and ``--fixed`` are ``sparkdl search``'s (any job: a built-in or a job description, its space and
fixed parameters checked the same way; a job other than lenet, birnn or torch-lenet needs ``--space``), and
``--fidelity PARAM`` names what its validated epochs count (``rounds`` for xgboost): surface.csv's rows are
then one per validated round, ``PARAM`` set to that round.

``--pack SRC DEST`` copies what a replay needs into DEST (results.csv, manifest.json, surface.csv,
provenance.json, and each .out with the Spark scheduler's chatter left out and of each unbroken stretch of
BigDL's per-iteration lines (an epoch's) only the first and the last, checked: logparse judges the shortened
log exactly as the original, with the same epochs; a log that would differ is kept whole). An ok
run's .err goes without Spark's INFO records (its judgement never reads it), another's whole; a job that
reports its own figures (xgboost) has its ``runs/<key>/metrics.json`` (and an output job its epochs.csv) copied.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import logparse  # noqa: E402
from harness.backends import Backend  # noqa: E402
from harness.runner import Runner  # noqa: E402
from sparkdl.runspec import RunSpec  # noqa: E402
from harness.times import read_times  # noqa: E402
from cluster.sparkenv import SparkEnv  # noqa: E402
from optimize.errors import SearchOptionError  # noqa: E402
from optimize.harvest import epoch_figures, harvest  # noqa: E402
from logparse.patterns import EVENT, ITERATION_GROUP  # noqa: E402
from optimize.pareto import read_campaign  # noqa: E402
from optimize.search.__main__ import check_fidelity, check_given, parse_job, space_params  # noqa: E402
from optimize.search.space import Factor, SearchSpace, load_space  # noqa: E402
from optimize.session import ClusterOptions, JobConfig, job_params, open_session, submit_options  # noqa: E402
from sparkdl.cli import on_interrupt, run_cli  # noqa: E402
from sparkdl.campaign import CampaignDir, now as now_utc  # noqa: E402
from sparkdl.options import CommandParser, cluster_options  # noqa: E402

DEFAULT_SPACE = SearchSpace((Factor("learning_rate", 0.01, 0.5, log=True),
                             Factor("batch_size", choices=(32, 64, 128)), Factor("epochs", 1, 3)))
SURFACE_CSV = "surface.csv"
PROVENANCE = "provenance.json"
#: A record of Spark's own log in a driver's .err (log4j: ``26/11/29 10:13:33 INFO SparkContext: ...``), its level.
SPARK_RECORD = re.compile(rb"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ([A-Z]+) ")
#: What a replay of a job that reports its own figures reads beside its log, in ``runs/<key>/``.
RUN_FILES = ("metrics.json", "epochs.csv")
#: Loggers whose INFO lines no figure or status is read from (the scheduler's per-task chatter).
CHATTER = re.compile(rb"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO  (DAGScheduler|BlockManagerInfo|MemoryStore|"
                     rb"TaskSchedulerImpl|TaskSetManager|ContextHandler|TorrentBroadcast|MapPartitionsRDD|"
                     rb"SparkContext|ShutdownHookManager|SecurityManager|Utils|SparkEnv|"
                     rb"BlockManagerMasterEndpoint|ResourceUtils|ResourceProfile):\d+ - (?!Submitted application)")


def job_columns(job: JobConfig) -> tuple[str, ...]:
    """The design columns of the job's runs (a surface's factors): the cluster factors, its parameters, model."""
    return ("model", "nodes", "executors", "executor_cores", *job_params(job.described()))


def grid_specs(space: SearchSpace, job: JobConfig, replicates: int, grid_points: int, order_seed: int) -> list[RunSpec]:
    """Every point of the space's grid (run = its index + 1) ``replicates`` times, in randomized complete blocks."""
    if replicates < 1:
        raise SearchOptionError(f"--replicates {replicates}: give a whole number >= 1 (3 or more for a surface)")
    points = space.grid(grid_points)
    rng = random.Random(order_seed)
    specs = []
    for r in range(1, replicates + 1):
        order = list(range(len(points)))
        rng.shuffle(order)
        specs += [job.spec(i + 1, r, **points[i]) for i in order]
    return specs


def settings_of(space: SearchSpace, job: JobConfig, args: argparse.Namespace) -> dict[str, object]:
    """What defines the recording (hashed into the campaign: a folder never mixes two surfaces)."""
    return {"bench": "surface", "space": space.describe(), "job": job.settings(), "replicates": args.replicates,
            "grid_points": args.grid_points, "order_seed": args.order_seed, "train_samples": args.train_samples,
            "test_samples": args.test_samples, "job_seed": args.job_seed}


def record(out: Path, space: SearchSpace, job: JobConfig, args: argparse.Namespace, cluster: ClusterOptions,
           backend: Backend | None = None, runner: Runner | None = None, env: SparkEnv | None = None) -> int:
    """Run the grid (resumable); the number of runs not ok. ``backend``/``runner``/``env``: tests pass fakes."""
    specs = grid_specs(space, job, args.replicates, args.grid_points, args.order_seed)
    options = replace(submit_options(out, cluster, args.train_samples, args.test_samples, args.job_seed),
                      jobs=job.choice())
    say = lambda msg: print(f"[{out.name}] {msg}", flush=True)  # noqa: E731
    with open_session(out, settings_of(space, job, args), options, cluster, specs, args.resume, say,
                      backend=backend, runner=runner, env=env) as session:
        summary = session.campaign.run(specs)
    return sum(not r.ok for r in summary.records)


def write_surface_csv(out: Path, fidelity: str = "epochs", factors: Sequence[str] | None = None) -> Path:
    """``surface.csv``: every validated epoch of every ok run, with its run's elapsed_s and start-up; each epoch
    sets the factor ``fidelity`` of its row, which carries ``factors`` (default: LeNet's, optimize.harvest)."""
    table = read_campaign(out)
    ok = table[table["status"] == "ok"]
    points = harvest(ok, out, fidelity, factors).table()
    runs = ok.set_index(["run", "replicate"])
    last = points.groupby(["run", "replicate"])["wall_clock_s"].transform("max")
    elapsed = [float(runs.loc[(r, p), "elapsed_s"]) for r, p in zip(points["run"], points["replicate"])]
    points = points.assign(run_elapsed_s=elapsed)
    points = points.assign(run_startup_s=(points["run_elapsed_s"] - last).round(3))
    keep = [c for c in points.columns if c not in ("status", "run_status", "point")]
    points[keep].to_csv(out / SURFACE_CSV, index=False)
    return out / SURFACE_CSV


def write_provenance(out: Path, argv: Sequence[str], started: str, load_before: tuple[float, ...],
                     job: JobConfig | None = None, fidelity: str = "epochs") -> Path:
    """provenance.json: each session's command, dates, load and CPUs; the job (a built-in's name, else its file) and
    the fidelity, which a replay reads (optimize.search.replay.Recording)."""
    facts = {"command": "python bench/surface.py " + " ".join(shlex.quote(a) for a in argv), "started": started,
             "finished": now_utc(), "load_average_before": list(load_before),
             "load_average_after": list(os.getloadavg()), "cpus": os.cpu_count()}
    path = out / PROVENANCE
    old = json.loads(path.read_text()) if path.is_file() else {}
    sessions = old.get("sessions", []) + [facts]  # a resumed recording adds its session
    recorded = {} if job is None else {"job": job.model if job.job is None else str(job.job.source),
                                       "fidelity": fidelity}
    path.write_text(json.dumps({**recorded, "sessions": sessions}, indent=2) + "\n")
    return path


def is_iteration(line: bytes) -> bool:
    """BigDL's line for one iteration (one batch), as logparse reads it:
    ``[Epoch 1 32/4000][Iteration 1][Wall Clock 0.45s] Trained 32.0 records in ...``"""
    event = EVENT.search(line)
    return event is not None and event.group(ITERATION_GROUP) is not None


def shortened(text: bytes) -> bytes:
    """The log without the scheduler's chatter (see :data:`CHATTER`), and of each unbroken stretch of BigDL's
    per-iteration lines (``Trained 32.0 records in ...``, one per batch: an epoch's, once the chatter is gone) only
    the first and the last."""
    kept: list[bytes] = []
    pending: bytes | None = None  # the stretch's latest iteration line, kept if it turns out to be its last
    in_stretch = False
    for line in text.splitlines(keepends=True):
        if CHATTER.match(line):
            continue
        if is_iteration(line):
            if in_stretch:
                pending = line
            else:
                kept.append(line)
                in_stretch = True
            continue
        if pending is not None:
            kept.append(pending)
            pending = None
        in_stretch = False
        kept.append(line)
    if pending is not None:
        kept.append(pending)
    return b"".join(kept)


def quiet_err(text: bytes) -> bytes:
    """An ok run's .err without Spark's INFO records and their continuation lines (warnings, errors, and what
    comes before Spark's first record, kept)."""
    kept, keep = [], True
    for line in text.splitlines(keepends=True):
        record = SPARK_RECORD.match(line)
        if record:
            keep = record.group(1) != b"INFO"
        if keep:
            kept.append(line)
    return b"".join(kept)


def same_judgement(original: Path, short: Path, row: dict[str, object]) -> bool:
    """logparse reads the same status, reason, figures, epochs and times from both logs (a run of a job that is
    not BigDL: the same epochs, the figures it reports being outside its log)."""
    if not all(k in row for k in ("epochs", "learning_rate", "batch_size")):
        return epoch_figures(original) == epoch_figures(short)
    planned = logparse.Planned(int(row["epochs"]), float(row["learning_rate"]), int(row["batch_size"]))
    process = logparse.ProcessFacts(int(row.get("exit_code", 0) or 0), False, float(row["elapsed_s"]))
    a, b = logparse.judge_run(original, planned, process), logparse.judge_run(short, planned, process)
    return (a.status, a.reason) == (b.status, b.reason) and _figures(a.log) == _figures(b.log) and \
        epoch_figures(original) == epoch_figures(short) and dict(read_times(original)) == dict(read_times(short))


def _figures(log: "logparse.JobLog") -> dict[str, object]:
    return {k: v for k, v in log.summary().items() if k != "path"}


def pack(src: Path, dest: Path) -> tuple[int, int]:
    """Copy what a replay needs from ``src`` to ``dest`` (see the module doc): (logs shortened, logs kept whole)."""
    if dest.exists() and any(dest.iterdir()):
        raise SearchOptionError(f"--pack {dest}: the folder is not empty; give a new one")
    (dest / "logs").mkdir(parents=True, exist_ok=True)
    for name in ("results.csv", "manifest.json", SURFACE_CSV, PROVENANCE, "epochs.csv"):
        if (src / name).is_file():
            shutil.copyfile(src / name, dest / name)
    short, whole = 0, 0
    for row in read_campaign(src).to_dict("records"):
        log = src / str(row["log"])
        if not log.is_file():
            continue
        target = dest / str(row["log"])
        target.write_bytes(shortened(log.read_bytes()))
        if row["status"] == "ok" and not same_judgement(log, target, row):
            shutil.copyfile(log, target)
            whole += 1
        else:
            short += 1
        if log.with_suffix(".err").is_file():
            err = log.with_suffix(".err").read_bytes()
            target.with_suffix(".err").write_bytes(quiet_err(err) if row["status"] == "ok" else err)
        key = f"{int(row['run'])}-{int(row['replicate'])}"
        for name in RUN_FILES:
            source = src / CampaignDir.RUNS / key / name
            if source.is_file():
                (dest / CampaignDir.RUNS / key).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, dest / CampaignDir.RUNS / key / name)
    return short, whole


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="python bench/surface.py", parents=[cluster_options()],
                      description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, help="the recording's campaign folder")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--space", type=Path, help="space.toml (default: learning_rate 0.01..0.5 log at 3 levels, "
                                              "batch 32/64/128, epochs 1..3)")
    p.add_argument("--job", default="lenet", metavar="NAME|FILE",
                   help="the job, as optimize.search --job: a built-in or a job description (default lenet)")
    p.add_argument("--fixed", default="", help="the factors the space does not vary, as optimize.search --fixed")
    p.add_argument("--fidelity", metavar="PARAM", default="epochs",
                   help="the job's parameter that counts its validated epochs, as optimize.search --fidelity "
                        "(default epochs; xgboost: rounds)")
    p.add_argument("--replicates", type=int, default=3, help="runs of each point (default 3)")
    p.add_argument("--grid-points", type=int, default=3, help="levels per float range (default 3)")
    p.add_argument("--order-seed", type=int, default=0, help="the seed of the run order within each block")
    p.add_argument("--job-seed", type=int, default=42, help="every job's weight-init seed")
    p.add_argument("--train-samples", type=int, default=1024)
    p.add_argument("--test-samples", type=int, default=256)
    p.add_argument("--pack", nargs=2, type=Path, metavar=("SRC", "DEST"), help="only copy a recording for shipping")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.pack:
        short, whole = pack(*args.pack)
        size = sum(f.stat().st_size for f in args.pack[1].rglob("*") if f.is_file())
        print(f"packed {args.pack[0]} into {args.pack[1]}: {short} log(s) shortened, {whole} kept whole; "
              f"{size / 1e6:.2f} MB")
        return 0
    if args.out is None:
        raise SearchOptionError("--out is required: the recording's campaign folder (or --pack SRC DEST)")
    job = parse_job(args.job, args.fixed or None)
    if args.space is None and not job.lenet_style:
        raise SearchOptionError(f"--space is required for the job {job.model}: the default space is LeNet's "
                                "(learning_rate, batch_size, epochs)")
    space = load_space(args.space, space_params(job)) if args.space else DEFAULT_SPACE
    if args.fidelity != "epochs":
        check_fidelity(job, args.fidelity)
    check_given(job, space)
    cluster = ClusterOptions.from_args(args)
    started, load = now_utc(), os.getloadavg()
    on_interrupt(f"finished runs are kept under {args.out}; continue with --resume")
    t0 = time.monotonic()
    failed = record(args.out, space, job, args, cluster)
    write_surface_csv(args.out, args.fidelity,
                      None if job.lenet_style else [c for c in read_campaign(args.out).columns if c in job_columns(job)])
    write_provenance(args.out, argv, started, load, job, args.fidelity)
    print(f"recorded {args.out} in {(time.monotonic() - t0) / 60:.1f} min ({failed} run(s) not ok); "
          f"{args.out / SURFACE_CSV}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
