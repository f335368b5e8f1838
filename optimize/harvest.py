"""Per-epoch harvesting: every validated epoch of a run is a point of the time/accuracy front (multi-fidelity).

BigDL validates after every epoch. A job run for E epochs passes through the training state a job
run for e < E epochs ends in (same weight-init seed, same data order, a learning-rate decay per
iteration, not per planned epoch), so its validation at epoch e measures the configuration with
``epochs = e``: the wall clock at that validation (which, as in a fresh e-epoch job, includes the
validations of the epochs before) and the Top1 accuracy there. A run of E epochs thus yields E
points of the front for the price of one job; in Hyperband's terms the epoch is the fidelity, and
the lower fidelities of a configuration are observed on the way to the higher ones.

Which runs: those with status ``ok`` and ``pruned`` (a pruned run validated its epochs before it was
stopped; pruning plus harvesting keeps what the pruned job did measure). ``failed`` and
``incomplete`` runs are left out and counted: their timing may be that of a broken cluster.

Caveat: BigDL's accuracies are not bit-reproducible between runs, so a fresh run of e epochs may
differ from the harvested point by the same noise as two replicates do; the harvested point is a real
model, validated.

    from optimize.harvest import harvest
    h = harvest(pd.read_csv("runs/NAME/results.csv"), Path("runs/NAME"))
    h.table()        # one row per validated epoch: run, replicate, point ("3-1@2"), epoch, the factors
                     # with epochs = epoch, run_epochs, run_status, status (ok), wall_clock_s, accuracy

``sparkdl pareto CAMPAIGN --per-epoch`` draws the front of these points.

The fidelity need not be ``epochs``: XGBoost validates after every boosting round, so with
``fidelity="rounds"`` (``sparkdl search --fidelity rounds``) the validated round r of a run of R rounds is the
configuration with ``rounds = r``; ``factors`` then names the run's design columns (the campaign's manifest's)
that each point carries. A job that reports its epochs as rows (``results = "output"`` or
``"mlflow"``: ``runs/<key>/epochs.csv``, kept for a pruned output run too) has a point for each row with both a
``wall_clock_s`` and an ``accuracy``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol, Sequence

import pandas as pd

import logparse
from logparse import Status, epochlines
from optimize.errors import CampaignDataError, SearchOptionError
from harness.runepochs import EPOCHS_FILE, read_run_epochs
from sparkdl.campaign import CampaignDir


class Objective(Protocol):
    """What :func:`check_objectives` reads of an objective (:class:`optimize.pareto.ObjectiveSpec`, which
    imports this module: named here by its shape, so the two do not import each other)."""

    @property
    def column(self) -> str: ...


#: The statuses whose validated epochs are harvested.
HARVESTED = (Status.OK, Status.PRUNED)
#: The design factors carried over to each point (``epochs`` replaced by the point's epoch).
FACTORS = ("model", "nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size")
#: The factor a validated epoch stands for, unless told another (``--fidelity``).
FIDELITY = "epochs"
#: Objectives a validated epoch has: its wall clock, its accuracy, and the cost computed from both.
PER_EPOCH_OBJECTIVES = ("wall_clock_s", "accuracy", "cost")
#: Columns of a harvested table, besides the factors.
POINT_COLUMNS = ("run", "replicate", "point", "epoch", "run_epochs", "run_status", "status", "wall_clock_s", "accuracy")
#: Relative tolerance between an ok run's recorded figures and its log's last validation.
AGREEMENT = 1e-6


@dataclass(frozen=True)
class EpochPoint:
    """One validated epoch of one run: a measured configuration with ``epochs = epoch``."""

    run: int
    replicate: int
    epoch: int
    run_epochs: int | None  # the epochs the run was planned for (its own ``epochs`` factor, or the fidelity's)
    run_status: str  # ok or pruned
    wall_clock_s: float  # BigDL's wall clock at this epoch's validation
    accuracy: float  # Top1 accuracy at this epoch's validation
    factors: Mapping[str, object]  # the run's factors, with epochs (the fidelity) = epoch

    @property
    def key(self) -> str:
        """The run's key, ``<run>-<replicate>``."""
        return f"{self.run}-{self.replicate}"

    @property
    def label(self) -> str:
        """The point's name, ``<run>-<replicate>@<epoch>``."""
        return f"{self.key}@{self.epoch}"

    def row(self) -> dict[str, object]:
        return {"run": self.run, "replicate": self.replicate, "point": self.label, "epoch": self.epoch,
                **self.factors, "run_epochs": self.run_epochs, "run_status": self.run_status, "status": str(Status.OK),
                "wall_clock_s": self.wall_clock_s, "accuracy": self.accuracy}


@dataclass(frozen=True)
class Harvest:
    """The points harvested from a campaign's runs, and how many runs gave them or were left out."""

    points: tuple[EpochPoint, ...]
    runs: int  # ok and pruned runs read
    excluded: int  # runs neither ok nor pruned (failed, incomplete), left out

    def table(self) -> pd.DataFrame:
        """One row per point (see the module doc); the columns are there even without a point."""
        rows = [p.row() for p in self.points]
        if not rows:
            return pd.DataFrame(columns=[*POINT_COLUMNS[:4], *FACTORS, *POINT_COLUMNS[4:]])
        return pd.DataFrame(rows)


def run_log(row: Mapping[str, object], root: Path) -> Path:
    """The .out of a results row: its ``log`` column (relative to the campaign), else ``logs/<run>-<replicate>.out``."""
    log = row.get("log")
    if isinstance(log, str) and log.strip():
        return root / log
    return CampaignDir(root).logs / f"{int(row['run'])}-{int(row['replicate'])}.out"  # type: ignore[call-overload]


def epoch_figures(path: Path) -> list[tuple[int, float, float]]:
    """(epoch, wall clock, Top1 accuracy) of each validated epoch of a log; the last validation of an epoch counts.

    BigDL's validation lines, or (a job reporting JSON) its ``sparkdl-epoch`` lines.
    """
    lines = epochlines.read_epochs(path)
    if lines:
        return [(e.epoch, e.wall_clock_s, e.accuracy) for e in lines]
    by_epoch: dict[int, tuple[int, float, float]] = {}
    for v in logparse.parse(path, full=True).validations:
        accuracy = v.accuracy
        if accuracy is None or v.wall_clock_s is None:
            continue
        if math.isfinite(accuracy) and math.isfinite(v.wall_clock_s):
            by_epoch[int(v.epoch)] = (int(v.epoch), float(v.wall_clock_s), float(accuracy))
    return [by_epoch[e] for e in sorted(by_epoch)]


def table_figures(path: Path) -> list[tuple[int, float, float]]:
    """(epoch, wall clock, accuracy) of a run's ``runs/<key>/epochs.csv`` (a ``results = "output"`` or ``"mlflow"``
    job's epoch rows, :mod:`harness.runepochs`): the rows that have both figures; [] without the file."""
    out = []
    for row in read_run_epochs(path) if path.is_file() else []:
        epoch, wall, accuracy = row.get("epoch"), _float(row.get("wall_clock_s")), _float(row.get("accuracy"))
        if isinstance(epoch, int) and wall is not None and accuracy is not None:
            out.append((epoch, wall, accuracy))
    return out


def run_points(row: Mapping[str, object], root: Path, fidelity: str = FIDELITY,
               factor_names: Sequence[str] | None = None) -> list[EpochPoint]:
    """The points of one ok or pruned run (its log must exist; an ok run's last point must be its recorded one);
    ``fidelity`` is the factor each point's epoch sets, ``factor_names`` the factors carried (default FACTORS)."""
    ids = {c: _whole(row.get(c)) for c in ("run", "replicate")}
    empty = [c for c, v in ids.items() if v is None]
    if empty:
        value = row.get(empty[0])
        shown = f"an empty {empty[0]} cell" if value is None or value != value or str(value).strip() == "" else \
            f"{empty[0]} {str(value)[:40]!r}"
        raise CampaignDataError(f"a {row['status']} row of results.csv has {shown}: every run has a whole run and "
                                "replicate number; fix that row")
    key = f"{ids['run']}-{ids['replicate']}"
    path = run_log(row, root)
    problem = _not_a_log(path)
    if problem:
        raise CampaignDataError(f"run {key} is {row['status']} but its log {str(path)[:300]} {problem}: per-epoch "
                                "points are read from the campaign's logs/, copy them with results.csv")
    figures = epoch_figures(path) or table_figures(root / CampaignDir.RUNS / key / EPOCHS_FILE)
    if row["status"] == Status.OK and figures:
        _check_last(key, row, figures[-1])
    planned = _int(row.get(fidelity))
    factors = {c: row[c] for c in (FACTORS if factor_names is None else factor_names) if c in row}
    return [EpochPoint(int(row["run"]), int(row["replicate"]), e, planned, str(row["status"]),  # type: ignore[call-overload]
                       wall, acc, {**factors, fidelity: e} if fidelity in factors else factors)
            for e, wall, acc in figures]


def _check_last(key: str, row: Mapping[str, object], last: tuple[int, float, float]) -> None:
    """An ok run's recorded training-loop time and accuracy are its last validation's: else the log is another
    run's. The epochs' clock is the training loop's (``train_loop_s``; BigDL's Wall Clock is its
    ``wall_clock_s`` too); a run whose ``wall_clock_s`` is another span (``fit``) is checked on accuracy alone."""
    of = row.get("wall_clock_of")
    of = of if isinstance(of, str) and of else "bigdl-wall-clock"  # a table from before the time vocabulary
    loop = "train_loop_s" if _float(row.get("train_loop_s")) is not None else (
        "wall_clock_s" if of == "bigdl-wall-clock" else None)
    checks = ((loop, last[1]),) if loop else ()
    for column, value in (*checks, ("accuracy", last[2])):
        recorded = _float(row.get(column))
        if recorded is not None and not math.isclose(recorded, value, rel_tol=AGREEMENT, abs_tol=1e-9):
            raise CampaignDataError(f"run {key}: results.csv has {column} {recorded:g} but its log's last validation "
                                    f"{value:g}: the log is not this run's; re-run it or restore its log")


def harvest(table: pd.DataFrame, root: Path, fidelity: str = FIDELITY,
            factors: Sequence[str] | None = None) -> Harvest:
    """Every validated epoch of the ok and pruned runs of ``table`` (a campaign's results.csv), logs under ``root``;
    each epoch sets the factor ``fidelity`` of its point (see the module doc), which carries ``factors`` (default
    :data:`FACTORS`; () too)."""
    if "status" not in table.columns or not {"run", "replicate"} <= set(table.columns):
        raise CampaignDataError("the table has no run, replicate or status column: give a campaign's results.csv")
    points: list[EpochPoint] = []
    runs = 0
    for row in table.to_dict("records"):
        if row["status"] not in HARVESTED:
            continue
        runs += 1
        points.extend(run_points(row, root, fidelity, factors or None))
    return Harvest(tuple(points), runs, len(table) - runs)


def check_objectives(objectives: Sequence[Objective]) -> None:
    """Per-epoch fronts know each epoch's wall clock and accuracy (and cost from them), no other figure."""
    bad = [o.column for o in objectives if o.column not in PER_EPOCH_OBJECTIVES]
    if bad:
        raise SearchOptionError(f"--objectives {', '.join(bad)}: a validated epoch has only "
                                f"{', '.join(PER_EPOCH_OBJECTIVES)}; drop --per-epoch or those objectives")


def _float(value: object) -> float | None:
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return out if math.isfinite(out) else None


def _whole(value: object) -> int | None:
    """A run or replicate number (a whole number >= 1 of at most 18 digits), else None."""
    number = _float(value)
    return int(number) if number is not None and number.is_integer() and 1 <= number < 1e18 else None


def _not_a_log(path: Path) -> str:
    """Why ``path`` cannot be read as a log ("" when it can): missing, not a regular file, a refused name."""
    import os
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "is missing"
    except (OSError, ValueError) as e:
        return f"cannot be read ({getattr(e, 'strerror', None) or e})"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file (a FIFO, socket, device or folder)"
    return ""


def _int(value: object) -> int | None:
    number = _float(value)
    return None if number is None else int(number)
