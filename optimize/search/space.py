"""The search space: which design factors a search varies, and over what ranges (space.toml).

::

    [learning_rate]          # a float range; log = true samples it on a log scale
    low = 0.01
    high = 0.5
    log = true

    [batch_size]             # a list of values (any factor)
    choices = [32, 64, 128]

    [epochs]                 # an integer range (step 1 unless given)
    low = 1
    high = 2

Any subset of the design factors (``sparkdl.runspec.RunSpec``: nodes, executors, executor_cores,
epochs, learning_rate, batch_size, model); the others come from ``--job``. Integer factors take
integer ranges; ``learning_rate`` a float range; ``model`` only ``choices``.

For any other job (``--job xgboost``, ``--job my_job.toml``) the factors are the cluster factors and the job's
own parameters (the fields of its args), each as its ``[params.NAME]`` table declares it: an ``int`` takes an
integer range, a ``float`` a float range (``log = true`` allowed), a ``str`` only ``choices``, inside the declared
min/max and choices; a parameter the job does not declare takes integers or numbers as written.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from optimize.errors import SearchOptionError
from sparkdl import config
from sparkdl.runspec import ParamRule, format_value, parse_value

#: The most points a grid may have (``--sampler grid``), checked before any is built.
MAX_GRID_POINTS = 100_000

INT_FACTORS = ("nodes", "executors", "executor_cores", "epochs", "batch_size")
FLOAT_FACTORS = ("learning_rate",)
TEXT_FACTORS = ("model",)
FACTORS = INT_FACTORS + FLOAT_FACTORS + TEXT_FACTORS
CLUSTER_FACTORS = ("nodes", "executors", "executor_cores")


class Suggester(Protocol):
    """What a factor needs from an Optuna trial (optuna.trial.Trial is one)."""

    def suggest_float(self, name: str, low: float, high: float, *, log: bool = False) -> float: ...
    def suggest_int(self, name: str, low: int, high: int, *, step: int = 1, log: bool = False) -> int: ...
    def suggest_categorical(self, name: str, choices: Sequence[object]) -> object: ...


@dataclass(frozen=True)
class Factor:
    """One factor of the space: a range (``low``..``high``, ``log``, ``step``) or a list of ``choices``."""

    name: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    step: int = 1
    choices: tuple[object, ...] = ()
    kind: str = ""  # "int" or "float" for a job's own parameter; "" : by the name (FLOAT_FACTORS)

    @property
    def floating(self) -> bool:
        """A float range (else integer levels)."""
        return self.kind == "float" if self.kind else self.name in FLOAT_FACTORS

    def suggest(self, trial: Suggester) -> object:
        if self.choices:
            return trial.suggest_categorical(self.name, list(self.choices))
        if self.floating:
            return trial.suggest_float(self.name, float(self.low), float(self.high), log=self.log)  # type: ignore[arg-type]
        return trial.suggest_int(self.name, int(self.low), int(self.high), step=self.step, log=self.log)  # type: ignore[arg-type]

    def at(self, u: float) -> object:
        """The value at quantile ``u`` in [0, 1) of the factor's range (log scale when ``log``), or of its levels."""
        if self.choices:
            return self.choices[min(int(u * len(self.choices)), len(self.choices) - 1)]
        if not self.floating:
            count = self.count()
            return int(self.low) + min(int(u * count), count - 1) * self.step  # type: ignore[arg-type]
        lo, hi = float(self.low), float(self.high)  # type: ignore[arg-type]
        if self.log:
            return math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
        return lo + u * (hi - lo)

    def count(self, points: int = 3) -> int:
        """How many levels :meth:`levels` has, without building them."""
        if self.choices:
            return len(self.choices)
        if not self.floating:
            return len(range(int(self.low), int(self.high) + 1, self.step))  # type: ignore[arg-type]
        return points

    def levels(self, points: int = 3) -> tuple[object, ...]:
        """The grid levels: the choices, every integer step, or ``points`` float levels (log-spaced when ``log``)."""
        if self.choices:
            return self.choices
        if not self.floating:
            return tuple(range(int(self.low), int(self.high) + 1, self.step))  # type: ignore[arg-type]
        lo, hi = float(self.low), float(self.high)  # type: ignore[arg-type]
        if points == 1:
            return (lo,)
        if self.log:
            return tuple(float(f"{math.exp(math.log(lo) + i * (math.log(hi) - math.log(lo)) / (points - 1)):.6g}")
                         for i in range(points))
        return tuple(float(f"{lo + i * (hi - lo) / (points - 1):.6g}") for i in range(points))


@dataclass(frozen=True)
class SearchSpace:
    factors: tuple[Factor, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.factors)

    def suggest(self, trial: Suggester) -> dict[str, object]:
        return {f.name: f.suggest(trial) for f in self.factors}

    def grid_size(self, float_points: int = 3) -> int:
        """How many points :meth:`grid` has (computed, not built)."""
        return math.prod(f.count(float_points) for f in self.factors)

    def check_grid(self, float_points: int = 3) -> None:
        """Refuse a grid of more than :data:`MAX_GRID_POINTS` before any point is built."""
        if float_points < 1:
            raise SearchOptionError(f"--grid-points must be >= 1, got {float_points}")
        size = self.grid_size(float_points)
        if size > MAX_GRID_POINTS:
            raise SearchOptionError(f"the grid over space.toml has {size} points, more than the {MAX_GRID_POINTS} "
                                    "allowed: use fewer levels (a larger step, fewer choices) or another sampler")

    def shapes(self) -> list[dict[str, object]]:
        """Every combination of the cluster factors the space varies (what sizes the workers), others left out."""
        return SearchSpace(tuple(f for f in self.factors if f.name in CLUSTER_FACTORS)).grid(1)

    def grid(self, float_points: int = 3) -> list[dict[str, object]]:
        """The full factorial over every factor's levels (see Factor.levels), at most :data:`MAX_GRID_POINTS`."""
        self.check_grid(float_points)
        names = self.names
        return [dict(zip(names, combo)) for combo in itertools.product(*(f.levels(float_points) for f in self.factors))]

    def without(self, name: str) -> "SearchSpace":
        """The space less the factor ``name``."""
        return SearchSpace(tuple(f for f in self.factors if f.name != name))

    def describe(self) -> dict[str, object]:
        return {f.name: ({"choices": list(f.choices)} if f.choices else
                         {"low": f.low, "high": f.high, "log": f.log, "step": f.step}) for f in self.factors}


def latin_hypercube(space: SearchSpace, points: int, seed: int) -> list[dict[str, object]]:
    """``points`` settings of a Latin hypercube over ``space`` (McKay, Beckman and Conover 1979), seeded.

    Each factor's range is cut into ``points`` equal strata (on the log scale when ``log``) and each
    stratum holds exactly one setting, sampled uniformly within it; the strata are paired at random
    across factors. A list of choices, or an integer range, takes the level under each stratum's
    centre, so each level appears ``points // levels`` or one more times (and no level twice while
    ``points`` <= levels). A search's start-up trials drawn this way cover every factor's range,
    where as many random ones may all land in one corner.
    """
    if points < 1:
        raise SearchOptionError(f"--startup-trials must be >= 1 for a Latin hypercube start, got {points}")
    rng = random.Random(seed)
    design: list[dict[str, object]] = [{} for _ in range(points)]
    for f in space.factors:
        strata = list(range(points))
        rng.shuffle(strata)
        discrete = bool(f.choices) or not f.floating
        for row, stratum in zip(design, strata):
            row[f.name] = f.at((stratum + (0.5 if discrete else rng.random())) / points)
    return design


def at_largest_epochs(space: SearchSpace, job_epochs: int) -> tuple[SearchSpace, int]:
    """For a per-epoch search: the space without ``epochs``, and the epochs every trial runs (the factor's largest
    level, else ``job_epochs``). A run of E epochs validates every epoch e < E on its way (optimize.harvest), so
    searching the other factors at the largest E and harvesting the lower epochs covers the epochs factor."""
    return at_largest(space, "epochs", job_epochs)


def at_largest(space: SearchSpace, fidelity: str, job_level: object) -> tuple[SearchSpace, int]:
    """:func:`at_largest_epochs` for any fidelity (``--fidelity rounds``: XGBoost's boosting rounds): the space
    without the factor ``fidelity``, and the level every trial runs at (its largest, else ``job_level``)."""
    factor = next((f for f in space.factors if f.name == fidelity), None)
    if factor is None:
        if job_level is None:
            raise SearchOptionError(f"--per-epoch runs every trial at the largest {fidelity}, which neither space.toml "
                                    f"nor --fixed gives: vary it in space.toml ([{fidelity}]) or give --fixed "
                                    f"{fidelity}=N")
        level = job_level
        where = f"--fixed {fidelity}"
    else:
        rest = space.without(fidelity)
        if not rest.factors:
            raise SearchOptionError(f"space.toml varies only {fidelity}: with --per-epoch one run at the largest "
                                    f"{fidelity} measures every lower one; add a factor to search or drop --per-epoch")
        space, level, where = rest, max(factor.levels()), f"space.toml [{fidelity}]"
    if not isinstance(level, int) or isinstance(level, bool) or level < 1:
        what = "epochs" if fidelity == "epochs" else fidelity
        raise SearchOptionError(f"{where}: {level!r} is not a whole number of {what} >= 1")
    return space, level


def factor_from_table(name: str, table: dict[str, object], job: JobParams | None = None) -> Factor:
    """One [factor] table of space.toml, checked (see the module doc); ``job``: the parameters of a job that is not
    LeNet-style (None: the design factors above)."""
    where = f"space.toml [{name}]"
    if job is not None and name not in CLUSTER_FACTORS:
        return job_factor(name, table, job)
    if name not in FACTORS:
        raise SearchOptionError(f"{where}: not a design factor; use one of {', '.join(FACTORS)}")
    unknown = set(table) - {"low", "high", "log", "step", "choices"}
    if unknown:
        raise SearchOptionError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; use low/high/log/step or choices")
    if "choices" in table:
        choices = table["choices"]
        if not isinstance(choices, list) or not choices or len(set(map(repr, choices))) != len(choices):
            raise SearchOptionError(f"{where}: choices must be a non-empty list of distinct values, e.g. [32, 64]")
        _check_schema(name, table)
        return Factor(name, choices=tuple(choices))
    if name in TEXT_FACTORS:
        raise SearchOptionError(f"{where}: give choices = [\"lenet\", \"birnn\"]; {name} has no range")
    low, high = table.get("low"), table.get("high")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high)):
        raise SearchOptionError(f"{where}: give numbers low and high (or choices = [...])")
    if name in INT_FACTORS and not (isinstance(low, int) and isinstance(high, int)):
        raise SearchOptionError(f"{where}: {name} is a whole number: write low = 1, high = 4")
    log = bool(table.get("log", False))
    smallest = 1 if name in INT_FACTORS else 0
    if not (low < high and low > 0 and low >= smallest):  # type: ignore[operator]
        raise SearchOptionError(f"{where}: need 0 < low < high (whole numbers >= 1 for {', '.join(INT_FACTORS)})")
    step = table.get("step", 1)
    if not isinstance(step, int) or step < 1 or (log and step != 1):
        raise SearchOptionError(f"{where}: step must be a whole number >= 1 (and 1 with log = true)")
    _check_schema(name, table)
    return Factor(name, float(low) if name in FLOAT_FACTORS else low, float(high) if name in FLOAT_FACTORS else high,
                  log, step)


@dataclass(frozen=True)
class JobParams:
    """The parameters a job that is not LeNet-style takes, with their declared rules (:class:`ParamRule`)."""

    job: str  # its name, for messages
    rules: dict[str, ParamRule]

    def unknown(self, where: str) -> str:
        return (f"{where}: not a parameter of the job {self.job} nor a cluster factor; use one of "
                f"{', '.join((*CLUSTER_FACTORS, *self.rules))}")


def job_factor(name: str, table: dict[str, object], job: JobParams) -> Factor:
    """A [factor] table of a job's own parameter, checked against its declared rule (see the module doc)."""
    where = f"space.toml [{name}]"
    if name not in job.rules:
        raise SearchOptionError(job.unknown(where))
    rule = job.rules[name]
    unknown = set(table) - {"low", "high", "log", "step", "choices"}
    if unknown:
        raise SearchOptionError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; use low/high/log/step or choices")
    from sparkdl.schemas import SpaceTable

    config.convert(table, SpaceTable, "space.toml", "search space", SearchOptionError, where=f"[{name}]")

    def checked(value: object) -> object:
        text = format_value(value) if isinstance(value, (int, float, str)) and not isinstance(value, bool) else None
        got, problem = parse_value(name, text, rule) if text is not None else (None, f"{name}={value!r} is not a value")
        if problem:
            raise SearchOptionError(f"{where}: {problem} (the job {job.job}'s [params.{name}])")
        return got

    if "choices" in table:
        choices = table["choices"]
        if not isinstance(choices, list) or not choices or len(set(map(repr, choices))) != len(choices):
            raise SearchOptionError(f"{where}: choices must be a non-empty list of distinct values, e.g. [32, 64]")
        return Factor(name, choices=tuple(checked(c) for c in choices))
    if rule.kind == "str" or rule.choices:
        raise SearchOptionError(f"{where}: {name} takes {rule.describe()}: give choices = [...], not a range")
    low, high = table.get("low"), table.get("high")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high)):
        raise SearchOptionError(f"{where}: give numbers low and high (or choices = [...])")
    integer = rule.kind == "int" or (rule.kind == "auto" and isinstance(low, int) and isinstance(high, int))
    if integer and not (isinstance(low, int) and isinstance(high, int)):
        raise SearchOptionError(f"{where}: {name} is a whole number: write low = 1, high = 4")
    log = bool(table.get("log", False))
    if not low < high or (log and low <= 0):  # type: ignore[operator]
        raise SearchOptionError(f"{where}: need low < high (and 0 < low with log = true)")
    step = table.get("step", 1)
    if not isinstance(step, int) or step < 1 or (log and step != 1) or (step != 1 and not integer):
        raise SearchOptionError(f"{where}: step must be a whole number >= 1 (and 1 with log = true or a float range)")
    low, high = (checked(v) if integer else checked(float(v)) for v in (low, high))  # type: ignore[arg-type]
    return Factor(name, low, high, log, step, kind="int" if integer else "float")  # type: ignore[arg-type]


def _check_schema(name: str, table: dict[str, object]) -> None:
    """The declared schema of a factor's table (:class:`sparkdl.schemas.SpaceTable`): types, and every value
    inside the range the harness allows that factor (no -1 epochs, no 1e-320..inf learning rate)."""
    from sparkdl.schemas import SpaceTable, check_space_factor

    checked = config.convert(table, SpaceTable, "space.toml", "search space", SearchOptionError, where=f"[{name}]")
    try:
        check_space_factor(name, checked, integer=name in INT_FACTORS)
    except ValueError as e:
        raise SearchOptionError(f"space.toml [{name}]: {e}") from None


def load_space(path: Path, job: JobParams | None = None) -> SearchSpace:
    """Read and check space.toml (through :mod:`sparkdl.config`: a regular UTF-8 file of at most 1 MiB); ``job``:
    the parameters of a job that is not LeNet-style, which the space may vary besides the cluster factors."""
    if not Path(path).exists() and not Path(path).is_symlink():
        raise SearchOptionError(f"{path} does not exist: write a space.toml (see optimize/search/space.py)")
    data = config.read_toml(path, "search space", error=SearchOptionError)
    if not data:
        raise SearchOptionError(f"{path} names no factor: add e.g. [learning_rate] low = 0.01 high = 0.5 log = true")
    bad = [k for k, v in data.items() if not isinstance(v, dict)]
    if bad:
        raise SearchOptionError(f"{path}: {', '.join(bad)} must be tables ([{bad[0]}] with low/high or choices)")
    return SearchSpace(tuple(factor_from_table(k, v, job) for k, v in data.items()))
