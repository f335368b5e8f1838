"""Pruning a running job from its per-epoch validation, read from its .out while it runs.

A BigDL job prints one ``Top1Accuracy is Accuracy(...)`` line per validated epoch, with the
wall clock so far; a job that reports JSON (TorchDistributor, XGBoost) a ``sparkdl-epoch`` line
(:mod:`logparse.epochlines`); a ``results = "output"`` job the lines its ``figures`` regex with an ``epoch``
group matches (:class:`harness.outputfigures.EpochTail`: its ``accuracy``, printed or derived, and its
``wall_clock_s``, the time so far, when it prints one). :class:`CurveTail` reads the lines a running job's .out
gained since the last call (the runner's watch calls it every 0.25 s). After each new epoch, short of the last,
the rules are asked in order; the first that gives a reason stops the job, which the harness then
records as ``pruned`` (never ``failed``):

* :class:`TargetRule`: the accuracy curve cannot reach ``target`` by the planned last epoch, assuming
  no later epoch gains more than the best epoch so far (learning curves are concave in epochs; the
  first epoch's gain is counted from chance, 1/classes). A run that cannot reach the target is of no
  use to "the fastest run reaching A".
* :class:`MedianRule`: at epoch e, the job is dominated in (wall clock at e: less is better, accuracy
  at e: more is better) by at least half of the earlier runs that reached epoch e (Optuna's median
  pruner, made two-objective: a fast, inaccurate run is not pruned for its accuracy alone). An epoch
  without a time (an output job that prints none) dominates none and is dominated by none.
* :class:`HalvingRule`: successive halving's rungs, epochs 1, eta, eta^2, ...: at a rung, the job
  goes on only while fewer than 1/eta of the runs that reached that rung dominate it.
* :class:`FrontRule`: the job's last epoch is dominated by a point that any earlier run measured, at any epoch
  (the front so far, which a per-epoch harvest builds from every validated epoch). More aggressive than the median
  rule: a run that lags the front stops at once, whatever the runs at its own epoch did.

Optuna's own pruners cannot be used on the two objectives: they take one intermediate value, and Optuna
refuses ``trial.report`` in multi-objective studies. The rules see only runs measured before (a history of
curves rebuilt from the study on resume), and need ``min_runs`` of them at the epoch.

* :class:`StudyPrunerRule`: Optuna's own pruner (successive halving, Hyperband, median) on one scalar, the
  cost of each epoch (``cost(wall clock, accuracy)``, e.g. T/A^2), in a single-objective study: each new
  epoch is reported to the trial and the study's pruner decides. It is bound to each trial by the search
  loop (:meth:`StudyPrunerRule.for_trial`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

from harness.figurespec import FigureSpec
from harness.outputfigures import EpochTail, has_epochs
from logparse import epochlines
from logparse import patterns as P
from optimize.errors import SearchOptionError

CHANCE = 0.1  # MNIST: ten classes
#: ``--pruner``: our rules (none, or one of them); Optuna's own pruners are the comparison's arms only
PRUNERS = ("none", "median", "halving", "front")


@dataclass(frozen=True)
class EpochFigure:
    """One validated epoch: its number, the wall clock at the validation (None: the job printed none), and
    Top1 accuracy."""

    epoch: int
    wall_clock_s: float | None
    accuracy: float


Curve = Sequence[EpochFigure]


def figure_of_line(line: bytes) -> EpochFigure | None:
    """The epoch figure of one complete validation line: BigDL's Top1Accuracy line, or a JSON job's
    ``sparkdl-epoch`` line (:mod:`logparse.epochlines`); else None."""
    if epochlines.TAG in line:
        found = epochlines.parse_line(line)
        return None if found is None else EpochFigure(found.epoch, found.wall_clock_s, found.accuracy)
    m = P.EVENT.search(line)
    if m is None or m.group(P.VALIDATION_GROUP) != b"Top1Accuracy":
        return None
    fields = dict(P.METRIC_FIELD.findall(m.group(P.VALIDATION_GROUP + 2)))
    if b"accuracy" not in fields:
        return None
    return EpochFigure(int(m.group(1)), float(m.group(5)), float(fields[b"accuracy"]))


def figure_of_row(row: Mapping[str, object]) -> EpochFigure | None:
    """The epoch figure of an output job's epoch row (:mod:`harness.outputfigures`): None without an accuracy."""
    epoch, wall, accuracy = row.get("epoch"), row.get("wall_clock_s"), row.get("accuracy")
    if not isinstance(epoch, int) or not isinstance(accuracy, (int, float)):
        return None
    return EpochFigure(epoch, float(wall) if isinstance(wall, (int, float)) else None, float(accuracy))


class CurveTail:
    """The validated epochs of a growing .out, read incrementally (only whole lines count).

    ``figures``: a ``results = "output"`` job's declared figures; when a regex of them has an ``epoch`` group, the
    epochs are its rows (in the .out, else the .err), read by :class:`harness.outputfigures.EpochTail`."""

    def __init__(self, path: Path, figures: FigureSpec | None = None) -> None:
        self.path, self.offset, self.partial = path, 0, b""
        self.curve: list[EpochFigure] = []
        self.rows = EpochTail(path, figures) if figures is not None and has_epochs(figures) else None

    def read(self) -> list[EpochFigure]:
        """Read what the file gained; return the epoch figures new since the last call."""
        if self.rows is not None:
            return self._add([f for f in map(figure_of_row, self.rows.read()) if f is not None])
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        return self._add([fig for fig in map(figure_of_line, lines) if fig is not None])

    def _add(self, figures: Sequence[EpochFigure]) -> list[EpochFigure]:
        new = []
        for fig in figures:
            if not self.curve or fig.epoch > self.curve[-1].epoch:
                self.curve.append(fig)
                new.append(fig)
        return new


def dominates(a: EpochFigure, b: EpochFigure) -> bool:
    """a is no slower and no less accurate than b, and strictly better on one (never without both times)."""
    if a.wall_clock_s is None or b.wall_clock_s is None:
        return False
    return (a.wall_clock_s <= b.wall_clock_s and a.accuracy >= b.accuracy
            and (a.wall_clock_s < b.wall_clock_s or a.accuracy > b.accuracy))


def at_epoch(history: Sequence[Curve], epoch: int) -> list[EpochFigure]:
    """The figure at ``epoch`` of every earlier run that validated it."""
    return [f for curve in history for f in curve if f.epoch == epoch]


class Rule(Protocol):
    def check(self, curve: Curve, planned: int, history: Sequence[Curve]) -> str | None: ...


@dataclass(frozen=True)
class TargetRule:
    target: float
    chance: float = CHANCE

    def check(self, curve: Curve, planned: int, history: Sequence[Curve]) -> str | None:
        last = curve[-1]
        accs = [self.chance] + [f.accuracy for f in curve]
        gain = max(0.0, max(b - a for a, b in zip(accs, accs[1:])))
        best_case = last.accuracy + (planned - last.epoch) * gain
        if best_case < self.target:
            return (f"epoch {last.epoch} of {planned}: accuracy {last.accuracy:.4f}; gaining at most {gain:.4f} per "
                    f"epoch (its best epoch) it ends below {best_case:.4f} < target {self.target:g}")
        return None


@dataclass(frozen=True)
class MedianRule:
    min_runs: int = 3

    def check(self, curve: Curve, planned: int, history: Sequence[Curve]) -> str | None:
        last = curve[-1]
        peers = at_epoch(history, last.epoch)
        if len(peers) < self.min_runs:
            return None
        beaten_by = sum(dominates(p, last) for p in peers)
        if beaten_by >= math.ceil(len(peers) / 2):
            return (f"epoch {last.epoch}: {beaten_by} of {len(peers)} earlier runs were faster and more accurate at "
                    f"this epoch (wall clock {last.wall_clock_s:.1f} s, accuracy {last.accuracy:.4f}): median rule")
        return None


@dataclass(frozen=True)
class HalvingRule:
    eta: int = 3
    min_runs: int = 3

    def check(self, curve: Curve, planned: int, history: Sequence[Curve]) -> str | None:
        last = curve[-1]
        rung = round(math.log(last.epoch, self.eta)) if last.epoch >= 1 else -1
        if self.eta ** rung != last.epoch:
            return None
        peers = at_epoch(history, last.epoch)
        if len(peers) < self.min_runs:
            return None
        beaten_by = sum(dominates(p, last) for p in peers)
        if beaten_by >= len(peers) / self.eta:
            return (f"epoch {last.epoch} (rung {rung}): {beaten_by} of {len(peers)} earlier runs dominate it, "
                    f"not in the top 1/{self.eta}: successive halving")
        return None


@dataclass(frozen=True)
class FrontRule:
    """Stop a run whose last ``patience`` epochs were each dominated by a point an earlier run already measured.

    Every point an earlier run validated is on the table, whatever its epoch: with a per-epoch harvest, a run's
    epochs are configurations of their own, and one that an earlier point beats adds nothing to the front. A run
    could still leave the dominated region later (a slow learner that ends the most accurate): ``patience`` epochs
    in a row dominated is the evidence asked for (Optuna's PatientPruner's idea, on two objectives)."""

    patience: int = 1
    min_runs: int = 3

    def check(self, curve: Curve, planned: int, history: Sequence[Curve]) -> str | None:
        if len(history) < self.min_runs or len(curve) < self.patience:
            return None
        earlier = [f for c in history for f in c]
        if not all(any(dominates(p, f) for p in earlier) for f in curve[-self.patience:]):
            return None
        last = curve[-1]
        held = f" for {self.patience} epochs" if self.patience > 1 else ""
        return (f"epoch {last.epoch}: wall clock {last.wall_clock_s:.1f} s, accuracy {last.accuracy:.4f}, "
                f"dominated by a point of the {len(history)} earlier runs{held}: front rule")


class Reporting(Protocol):
    """What :class:`StudyPrunerRule` needs of an Optuna trial (optuna.trial.Trial is one)."""

    def report(self, value: float, step: int) -> None: ...
    def should_prune(self) -> bool: ...


@dataclass(frozen=True)
class StudyPrunerRule:
    """Optuna's pruner of the study, on the scalar ``cost(wall clock, accuracy)`` of each epoch (see the module doc)."""

    cost: Callable[[float, float], float]
    name: str = "the study's pruner"
    trial: Reporting | None = None

    def for_trial(self, trial: Reporting) -> "StudyPrunerRule":
        return StudyPrunerRule(self.cost, self.name, trial)

    def check(self, curve: Curve, planned: int, history: Sequence[Curve]) -> str | None:
        last = curve[-1]
        if self.trial is None or last.wall_clock_s is None:
            return None
        value = float(self.cost(last.wall_clock_s, last.accuracy))
        self.trial.report(value, last.epoch)
        if self.trial.should_prune():
            return f"epoch {last.epoch}: cost {value:.4g}: {self.name} stops it"
        return None


@dataclass
class TrialWatch:
    """The runner's watch for one job: reads new epochs from its .out and asks the rules after each."""

    rules: Sequence[Rule]
    planned: float  # the last epoch the run validates (inf: unknown, a job without the fidelity)
    history: Sequence[Curve]
    tail: CurveTail | None = None
    reasons: list[str] = field(default_factory=list)
    figures: FigureSpec | None = None  # a results = "output" job's figures: its epochs are its regexes' rows

    def __call__(self, out: Path) -> str | None:
        if self.tail is None or self.tail.path != out:
            self.tail = CurveTail(out, self.figures)
        new = self.tail.read()
        curve = self.tail.curve
        if not new or curve[-1].epoch >= self.planned:
            return None
        for rule in self.rules:
            reason = rule.check(curve, self.planned, self.history)
            if reason:
                self.reasons.append(reason)
                return reason
        return None

    @property
    def curve(self) -> list[EpochFigure]:
        return [] if self.tail is None else list(self.tail.curve)


def default_pruner(given: str | None, per_epoch: bool) -> str:
    """``--pruner``, else the front rule for a per-epoch search (every validated epoch is a point of its front, so
    an epoch an earlier point dominates adds nothing to it) and the median rule for a search of whole runs."""
    if given is not None:
        return given
    return "front" if per_epoch else "median"


def make_rules(pruner: str, target: float | None, min_runs: int = 3, eta: int = 3) -> list[Rule]:
    """The rules of ``--pruner none|median|halving|front`` plus the target rule when a target is given."""
    if target is not None and not 0.0 < target <= 1.0:
        raise SearchOptionError(f"--target-accuracy {target!r} must be an accuracy in (0, 1], e.g. 0.95")
    if min_runs < 1 or eta < 2:
        raise SearchOptionError(f"min_runs={min_runs!r} must be >= 1 and eta={eta!r} >= 2")
    rules: list[Rule] = [TargetRule(target)] if target is not None else []
    if pruner == "median":
        rules.append(MedianRule(min_runs))
    elif pruner == "halving":
        rules.append(HalvingRule(eta, min_runs))
    elif pruner == "front":
        rules.append(FrontRule(min_runs=min_runs))
    return rules
