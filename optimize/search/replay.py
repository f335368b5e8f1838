"""Replaying a recorded surface: a search's trials run against real runs recorded before, not a cluster.

A surface is a campaign folder (``bench/surface.py`` records one): a full grid of design points, each
run several times (replicates), every run's log kept, of any job (LeNet, ``--job xgboost``, a job file). A
point's factors are the recording's own (its manifest's), each keyed by its declared kind (int, float, text)
alike in the recorded rows and the specs a search makes; the job and the fidelity (what a validated epoch
counts: ``epochs``, xgboost's ``rounds``) are provenance.json's (:class:`Recording`; the first LeNet recordings
name neither: lenet and epochs). :class:`ReplayCluster` stands where the cluster
and spark-submit stand in a real search (it is the campaign's backend and its runner, the process
boundary): everything from the trial loop up (:class:`optimize.search.study.MultiObjectiveSearch`, the
session, the campaign, its store, logparse's judgement, the pruning watch) is the code of a real search.

For each run it is handed, the replay

* finds the run's design point on the surface (a point off the grid is refused: :class:`ReplayError`);
* draws one of the point's recorded ok replicates, seeded by (``seed``, the point, how many times this
  replay asked for it before): two replays with one seed draw alike, whatever they search;
* writes that replicate's recorded log into the new run's .out up to each validated epoch, and after
  each asks the pruning watch, as :class:`harness.runner.ProcessRunner` does while a job runs; a reason
  stops it there (the prune line appended, exactly as a real stop);
* charges the cluster time (``elapsed_s``) the recorded run took to that point: its recorded
  ``elapsed_s`` when it runs to its end, else its start-up (the recorded ``elapsed_s`` less the wall
  clock of its last validated epoch: everything outside BigDL's training loop) plus the wall clock at
  the epoch it was stopped at.

Departures from a real run: a real pruned job is stopped up to one watch interval (1 s) after the
validation line, while it trains on; the replay stops it at the line. A real pruned job's end (the
process group ended) is charged like the recorded run's own end. A job that prints its epochs only once
trained (xgboost's ``sparkdl-epoch`` lines, written after ``fit``, each round's wall clock the boosting loop's
time to its end) cannot be stopped mid-training on a cluster; the replay charges it as if it had been, at the
recorded start-up plus that round's time: what a run of that many rounds costs, not what a real pruned run of
that job spends.
"""

from __future__ import annotations

import math
import random
import shlex
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from cluster.sparkenv import SparkEnv
from harness.command import METRICS_FLAG
from harness.job import JobFileError, builtin_names, resolve_job
from harness.runner import Completed, OnStart, Watch, write_prune_line
from sparkdl import config
from sparkdl.runspec import CLUSTER_RULES, RunSpec
from logparse import Status
from optimize.errors import SearchOptionError
from optimize.harvest import epoch_figures, run_log
from optimize.pareto import manifest_factors, read_campaign
from optimize.search.pruning import figure_of_line
from optimize.search.space import CLUSTER_FACTORS, FLOAT_FACTORS, TEXT_FACTORS, Factor, SearchSpace
from optimize.session import JobConfig, job_params

#: A LeNet-style surface's point factors, in the order its points are keyed (and its draws seeded).
POINT_FACTORS = ("model", "nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size")
#: A real run ended by the watch reports this code (ProcessRunner ends its process group).
STOPPED_CODE = -15
#: Where bench/surface.py keeps what it recorded and how (the job, the fidelity, the commands).
PROVENANCE = "provenance.json"
#: A recording that names neither (the first LeNet ones): LeNet, its validated epochs counting ``epochs``.
DEFAULT_JOB, DEFAULT_FIDELITY = "lenet", "epochs"
KINDS = ("int", "float", "str")

Point = tuple[tuple[str, object], ...]


class ReplayError(SearchOptionError):
    """A replay cannot run what was asked (a point off the recorded grid, a surface that is not one)."""


@dataclass(frozen=True)
class PointKey:
    """How a surface keys a design point: its factors in order, and each one's kind (int, float or str).

    The recorded rows and the specs a search makes go through the same key, so 32 and 32.0 are one level: a float
    factor to 12 significant digits, an int one as a whole number, a text one as its text."""

    columns: tuple[str, ...]
    kinds: tuple[tuple[str, str], ...]  # (factor, kind); a factor not named is an int

    def value(self, name: str, value: object) -> object:
        kind = dict(self.kinds).get(name, "int")
        if kind == "float":
            return float(f"{float(value):.12g}")  # type: ignore[arg-type]
        if kind == "str":
            return str(value)
        return int(value)  # type: ignore[call-overload]

    def of(self, values: Mapping[str, object]) -> Point:
        """The key of a design row or a spec's factors (the factors it has a value for)."""
        return tuple((name, self.value(name, values[name])) for name in self.columns if name in values
                     and values[name] is not None and not (isinstance(values[name], float) and math.isnan(values[name])))


#: A LeNet-style surface's key (what every surface was keyed by before any job could be recorded).
LENET_KEY = PointKey(POINT_FACTORS, (*((n, "float") for n in FLOAT_FACTORS), *((n, "str") for n in TEXT_FACTORS)))


def point_of(values: Mapping[str, object], key: PointKey = LENET_KEY) -> Point:
    """The surface's key of a design row or a spec's factors (default: a LeNet-style surface's)."""
    return key.of(values)


def describe_point(point: Point) -> str:
    return " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in point)


@dataclass(frozen=True)
class Recording:
    """What a surface's runs ran: the job (``bench/surface.py --job``: a built-in's name or a job file) and the
    parameter its validated epochs count (``--fidelity``)."""

    job: str = DEFAULT_JOB
    fidelity: str = DEFAULT_FIDELITY

    @classmethod
    def read(cls, folder: Path, model: str = DEFAULT_JOB) -> "Recording":
        """From the folder's provenance.json: its ``job`` and ``fidelity`` (bench/surface.py writes them), else the
        ``--job`` and ``--fidelity`` of its last recorded command, else ``model`` (the runs' one ``model``) and
        :data:`DEFAULT_FIDELITY` (the first LeNet recordings name neither)."""
        path = Path(folder) / PROVENANCE
        if not path.is_file():
            return cls(model)
        facts = config.read_json(path, f"--replay {folder}: {PROVENANCE} (restore it from the recording or remove "
                                       "it: the job is then lenet, the fidelity epochs)", error=ReplayError)
        facts = facts if isinstance(facts, dict) else {}
        sessions = [s for s in facts.get("sessions") or () if isinstance(s, dict)]
        command = recorded_flags(str(sessions[-1].get("command", ""))) if sessions else {}
        job, fidelity = (facts.get(k) or command.get(k) for k in ("job", "fidelity"))
        return cls(str(job or model), str(fidelity or DEFAULT_FIDELITY))

    def resolve(self, folder: Path) -> JobConfig:
        """The recorded job, with none of its parameters set: a built-in by name, else the job file (a relative
        path is the recording command's, from the repository's root)."""
        try:
            described = resolve_job(self.job)
        except JobFileError as e:
            raise ReplayError(f"--replay {folder}: its job {self.job!r} ({PROVENANCE}) cannot be read: {e}; give "
                              "the job its runs ran as \"job\" in provenance.json") from None
        if self.job in builtin_names():
            return JobConfig(model=self.job)
        return JobConfig(model=described.name, job=described)


def recorded_flags(command: str) -> dict[str, str]:
    """``--job`` and ``--fidelity`` of a recorded ``python bench/surface.py ...`` command (those it gives)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return {}
    out: dict[str, str] = {}
    for i, word in enumerate(words):
        for flag in ("job", "fidelity"):
            if word == f"--{flag}" and i + 1 < len(words):
                out[flag] = words[i + 1]
            elif word.startswith(f"--{flag}="):
                out[flag] = word.partition("=")[2]
    return out


def point_key(job: JobConfig, columns: Sequence[str], table: pd.DataFrame) -> PointKey:
    """The key of a surface of ``job`` whose design columns are ``columns`` (``model`` first, as a LeNet-style
    surface always was): each factor's kind as the job declares it ([params.NAME] type), a cluster factor an int,
    ``model`` a text; a parameter of undeclared type (auto) by its recorded values (whole numbers: an int)."""
    ordered = tuple(sorted(columns, key=lambda c: c != "model"))
    described = job.described()
    kinds = []
    for name in ordered:
        declared = "str" if name in TEXT_FACTORS else "int" if name in CLUSTER_RULES else described.rule(name).kind
        kinds.append((name, declared if declared in KINDS else recorded_kind(table[name])))
    return PointKey(ordered, tuple((n, k) for n, k in kinds if k != "int"))


def recorded_kind(values: pd.Series) -> str:
    """A column's kind as recorded: int when written as whole numbers, float when as numbers, else str."""
    values = values.dropna()
    if pd.to_numeric(values, errors="coerce").isna().any():
        return "str"
    return "int" if pd.api.types.is_integer_dtype(values) else "float"


@dataclass(frozen=True)
class RecordedRun:
    """One recorded ok run: its log, cluster time and validated epochs (epoch, wall clock, accuracy)."""

    key: str
    log: Path
    elapsed_s: float
    exit_code: int
    epochs: tuple[tuple[int, float, float], ...]

    @property
    def startup_s(self) -> float:
        """Everything outside the training loop: the recorded elapsed_s less the last validation's wall clock."""
        return max(0.0, self.elapsed_s - self.epochs[-1][1]) if self.epochs else self.elapsed_s

    def charged_s(self, epoch: int | None) -> float:
        """The cluster time to the end (``epoch`` None) or to the validation of ``epoch``, start-up included."""
        if epoch is None:
            return self.elapsed_s
        wall = next((w for e, w, _ in self.epochs if e == epoch), None)
        if wall is None:
            raise ReplayError(f"run {self.key} of the surface has no validated epoch {epoch} in {self.log}")
        return self.startup_s + wall


def design_columns(folder: Path, job: JobConfig, table: pd.DataFrame) -> tuple[str, ...]:
    """The design columns of a recording's runs: its manifest's factors (as bench/surface.py wrote them), else the
    job's (the cluster factors, its parameters, ``model``), those results.csv has."""
    named = manifest_factors(folder) or ("model", *CLUSTER_FACTORS, *job_params(job.described()))
    return tuple(c for c in named if c in table.columns)


@dataclass
class Surface:
    """A recorded grid: each design point's ok runs, read from a campaign folder (results.csv and logs/), the job
    they ran, and the parameter their validated epochs count (``fidelity``: epochs, or xgboost's rounds)."""

    folder: Path
    points: dict[Point, list[RecordedRun]]
    factors: tuple[str, ...]  # the factors that vary over the grid
    excluded: int = 0  # runs that were not ok (left out)
    key: PointKey = LENET_KEY  # the point's factors and their kinds
    fidelity: str = DEFAULT_FIDELITY
    job: JobConfig = field(default_factory=lambda: JobConfig(model=DEFAULT_JOB))  # none of its parameters set

    @classmethod
    def load(cls, folder: Path) -> "Surface":
        """The surface in ``folder``: its points' factors are the recording's (its manifest's, else the job's
        columns), the job and fidelity those :class:`Recording` reads (a LeNet recording that names neither: lenet
        and epochs)."""
        folder = Path(folder)
        if not (folder / "results.csv").is_file():
            raise ReplayError(f"--replay {folder}: no results.csv there; give a surface recorded by bench/surface.py "
                              "(a campaign folder with its logs)")
        table = read_campaign(folder)
        missing = [c for c in ("run", "replicate", "status", "elapsed_s") if c not in table.columns]
        if missing:
            raise ReplayError(f"--replay {folder}: results.csv has no {', '.join(missing)} column: it is not a surface")
        ok = table[table["status"] == Status.OK]
        models = ok["model"].dropna().unique() if "model" in ok.columns else ()
        recording = Recording.read(folder, str(models[0]) if len(models) == 1 else DEFAULT_JOB)
        job = recording.resolve(folder)
        key = point_key(job, design_columns(folder, job, table), ok)
        if recording.fidelity not in key.columns:
            raise ReplayError(f"--replay {folder}: its fidelity {recording.fidelity!r} is not a factor of its "
                              f"{job.model} runs ({', '.join(key.columns)}): give the parameter its validated epochs "
                              f"count as \"fidelity\" in {PROVENANCE} (bench/surface.py --fidelity)")
        points: dict[Point, list[RecordedRun]] = {}
        for row in ok.to_dict("records"):
            log = run_log(row, folder)
            if not log.is_file():
                raise ReplayError(f"--replay {folder}: run {row['run']}-{row['replicate']}'s log {log} is missing: "
                                  "a surface keeps every run's log")
            run = RecordedRun(f"{int(row['run'])}-{int(row['replicate'])}", log, float(row["elapsed_s"]),
                              int(row.get("exit_code", 0) or 0), tuple(epoch_figures(log)))
            points.setdefault(key.of(row), []).append(run)
        if not points:
            raise ReplayError(f"--replay {folder}: no ok run to replay")
        varying = tuple(n for n in key.columns if ok[n].nunique() > 1)
        return cls(folder, points, varying, len(table) - len(ok), key, recording.fidelity, job)

    def check_job(self, job: JobConfig, fidelity: str | None) -> None:
        """Refuse a search of another job than the recorded one, or (``fidelity`` given) at another fidelity."""
        if job.model != self.job.model:
            raise ReplayError(f"--job {job.model}: the surface {self.folder} recorded the job {self.job.model}; "
                              f"give --job {self.job.model if self.job.job is None else self.job.job.source}")
        if fidelity is not None and fidelity != self.fidelity:
            raise ReplayError(f"--fidelity {fidelity}: the surface {self.folder} counts its validated epochs as "
                              f"{self.fidelity}; give --fidelity {self.fidelity}")

    def point_of(self, values: Mapping[str, object]) -> Point:
        """The key of a design row or a spec's factors on this surface."""
        return self.key.of(values)

    def job_config(self) -> JobConfig:
        """The recorded job with the factors the surface does not vary at their recorded level."""
        constants = {k: v for k, v in self.constants().items() if k != "model"}
        return replace(self.job, **constants)  # type: ignore[arg-type]

    def levels(self) -> dict[str, tuple[object, ...]]:
        """Every factor's recorded levels, sorted."""
        out: dict[str, set[object]] = {}
        for point in self.points:
            for name, value in point:
                out.setdefault(name, set()).add(value)
        return {k: tuple(sorted(v, key=lambda x: (str(type(x)), x))) for k, v in out.items()}  # type: ignore[arg-type]

    def constants(self) -> dict[str, object]:
        """The factors with one recorded level, and that level."""
        return {k: v[0] for k, v in self.levels().items() if len(v) == 1}

    def space(self) -> SearchSpace:
        """The grid as a search space: each varying factor's recorded levels as its choices."""
        levels = self.levels()
        return SearchSpace(tuple(Factor(n, choices=levels[n]) for n in self.factors))

    def replicates(self, point: Point) -> list[RecordedRun]:
        found = self.points.get(point)
        if found is None:
            raise ReplayError(self.off_grid(point))
        return found

    def off_grid(self, point: Point) -> str:
        levels = self.levels()
        wrong = [f"{k}={v!r} (recorded: {', '.join(map(str, levels.get(k, ())))})" for k, v in point
                 if v not in levels.get(k, ())]
        why = "; ".join(wrong) if wrong else "this combination was not recorded"
        return (f"the point {describe_point(point)} is off the recorded grid of {self.folder}: {why}; a replay runs "
                "only recorded points: give the surface's levels as choices in space.toml (or leave --space out)")

    def check(self, space: SearchSpace, base: Mapping[str, object]) -> None:
        """Refuse, before any trial, a space with a continuous range or any point off the grid."""
        for f in space.factors:
            if not f.choices and f.floating:
                levels = self.levels().get(f.name, ())
                raise ReplayError(f"space.toml [{f.name}]: a replay has only the recorded levels; write choices = "
                                  f"[{', '.join(map(repr, levels))}]")
        for combo in space.grid(1):
            point = self.point_of({**base, **combo})
            if point not in self.points:
                raise ReplayError(self.off_grid(point))

    def mean_points(self) -> pd.DataFrame:
        """Every configuration the surface measures, per validated epoch: the mean wall clock and accuracy over
        every recorded run of the point's other factors that validated that epoch (a run of E epochs measures
        epochs 1..E on its way, optimize.harvest). One row per configuration, its fidelity (``epochs``, ``rounds``)
        the epoch."""
        rows: dict[Point, list[tuple[float, float]]] = {}
        for point, runs in self.points.items():
            rest = dict(point)
            for run in runs:
                for e, wall, acc in run.epochs:
                    rows.setdefault(self.point_of({**rest, self.fidelity: e}), []).append((wall, acc))
        return pd.DataFrame([{**dict(p), "wall_clock_s": math.fsum(w for w, _ in v) / len(v),
                              "accuracy": math.fsum(a for _, a in v) / len(v), "n": len(v)}
                             for p, v in rows.items()])

    def grid_time_s(self) -> float:
        """The cluster time of the whole grid run once: each point's mean recorded elapsed_s, summed."""
        return math.fsum(math.fsum(r.elapsed_s for r in runs) / len(runs) for runs in self.points.values())

    def most_pruning_saves(self) -> float:
        """The share of cluster time that stopping every recorded run at the fidelity's largest level at its first
        validation would save: no pruning rule can save more on this surface (a per-epoch search runs there)."""
        top = max(dict(p)[self.fidelity] for p in self.points)
        runs = [r for p, rs in self.points.items() if dict(p)[self.fidelity] == top for r in rs if r.epochs]
        full = math.fsum(r.elapsed_s for r in runs)
        return 1.0 - math.fsum(r.charged_s(r.epochs[0][0]) for r in runs) / full if full > 0 else 0.0


def _arg(argv: Sequence[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None


@dataclass
class Replayed:
    """What the replay did for one run: the point, the replicate drawn, and the epoch it was stopped at."""

    key: str | None
    point: Point
    replicate: str
    stopped_at: int | None
    charged_s: float


class ReplayCluster:
    """The backend and the runner of a replayed search (see the module doc); ``watch`` as ProcessRunner's."""

    drivers_here = False  # nothing is submitted: no runtime to prepare, no data to decode

    def __init__(self, surface: Surface, seed: int = 0, watch: Watch | None = None) -> None:
        self.surface, self.seed, self.watch = surface, seed, watch
        self.master_url = f"replay://{surface.folder}"
        self.asked: dict[Point, int] = {}
        self.current: RunSpec | None = None
        self.log: list[Replayed] = []

    # -- the backend
    def open(self, specs: Sequence[RunSpec], runtime: str = "") -> None:
        pass

    def environment(self) -> tuple[SparkEnv, "ReplayCluster"]:
        return self.environment_for("", ""), self

    def environment_for(self, runtime: str, jvm: str) -> SparkEnv:
        home = Path("/replay")
        return SparkEnv(python=home / "python", java_home=home, spark_home=home)

    def check(self, spec: RunSpec) -> list[str]:
        return []

    def prepare(self, spec: RunSpec) -> None:
        """The run about to start: its point must be on the grid (else :class:`ReplayError`, before its attempt)."""
        self.surface.replicates(self.surface.point_of(spec.as_row()))
        self.current = spec

    def describe(self) -> dict[str, object]:
        return {"backend": "replay", "surface": str(self.surface.folder), "seed": self.seed}

    def find_app(self, name: str) -> None:
        return None

    def close(self) -> None:
        pass

    # -- the runner
    def draw(self, point: Point) -> RecordedRun:
        """The replicate of ``point`` for its next run: seeded by (seed, point, times asked before)."""
        runs = self.surface.replicates(point)
        k = self.asked.get(point, 0)
        self.asked[point] = k + 1
        return runs[random.Random(f"{self.seed}|{describe_point(point)}|{k}").randrange(len(runs))]

    def run(self, argv: list[str], env: Mapping[str, str], out: Path, err: Path, timeout: float | None,
            on_start: OnStart | None = None, cwd: Path | None = None) -> Completed:
        if self.current is None:
            raise ReplayError("the replay was asked to run a job before the campaign prepared it")
        spec, self.current = self.current, None
        point = self.surface.point_of(spec.as_row())
        run = self.draw(point)
        recorded_err = run.log.with_suffix(".err")
        err.write_bytes(recorded_err.read_bytes() if recorded_err.is_file() else b"")
        metrics = _arg(argv, METRICS_FLAG)
        if metrics:  # a json job's figures
            source = run.log.parent.parent / "runs" / run.key / "metrics.json"
            if source.is_file():
                Path(metrics).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, metrics)
        stopped, epoch = self._write(run, out)
        charged = run.charged_s(epoch)
        self.log.append(Replayed(spec.key, point, run.key, epoch, charged))
        if stopped is not None:
            write_prune_line(out, stopped)
            return Completed(tuple(argv), STOPPED_CODE, charged, stopped=stopped)
        return Completed(tuple(argv), run.exit_code, charged)

    def _write(self, run: RecordedRun, out: Path) -> tuple[str | None, int | None]:
        """Copy the recorded log, asking the watch after each validated epoch; (reason, epoch) when it stopped."""
        data = run.log.read_bytes()
        with open(out, "wb") as f:
            start = 0
            while True:
                end = data.find(b"\n", start)
                if end < 0:
                    f.write(data[start:])
                    return None, None
                line = data[start:end + 1]
                f.write(line)
                start = end + 1
                figure = figure_of_line(line) if self.watch is not None else None
                if figure is not None:
                    f.flush()
                    reason = self.watch(out)  # type: ignore[misc]
                    if reason:
                        return reason, figure.epoch
