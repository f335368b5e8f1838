"""Execution order: replications, randomization from an explicit seed, blocking, CSV output.

Without blocking every job (run x replicate) is placed in one random permutation
(complete randomization). With ``block_on`` the jobs are grouped by the level of that
hard-to-change factor, so it changes only (levels - 1) times: the block order and the
order inside each block are random. That restriction makes the blocked factor a
whole-plot factor of a split-plot experiment: its effect is confounded with any drift
between blocks, and an ordinary ANOVA overstates its significance.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.design._base import Design
from harness.design.factors import Level
from harness.errors import DesignError
from harness.runspec import MAX_DESIGN_ROWS


@dataclass(frozen=True)
class Job:
    """One execution of a design point: its standard-order run number and replicate (1-based)."""

    run: int
    replicate: int
    values: tuple[Level, ...]


@dataclass(frozen=True)
class Schedule:
    """The jobs of a design in execution order."""

    design: Design
    jobs: tuple[Job, ...]
    replications: int
    seed: int | None
    randomized: bool
    block_on: str | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return ("run", "replicate", *self.design.names, *(n for n, _ in self.design.factors.constants))

    def level_sequence(self, name: str) -> list[Level]:
        j = self.design.names.index(self.design.factors.by_name(name).name)
        return [job.values[j] for job in self.jobs]

    def changes(self, name: str) -> int:
        """How many times factor ``name`` changes level between consecutive jobs."""
        seq = self.level_sequence(name)
        return sum(a != b for a, b in zip(seq, seq[1:]))

    def expected_random_changes(self, name: str) -> float:
        """Mean number of level changes of ``name`` under complete randomization of these jobs."""
        counts = np.array(list(Counter(self.level_sequence(name)).values()), dtype=float)
        n = counts.sum()
        if n < 2:
            return 0.0
        return float((n - 1) * (1 - (counts * (counts - 1)).sum() / (n * (n - 1))))

    def rows(self) -> list[list[Level]]:
        consts = [v for _, v in self.design.factors.constants]
        return [[job.run, job.replicate, *job.values, *consts] for job in self.jobs]

    def write_csv(self, path: str | Path) -> None:
        """One row per job in execution order; numbers as written in the factors file."""
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(self.columns)
            writer.writerows([[_cell(v) for v in row] for row in self.rows()])


def schedule(
    design: Design,
    replications: int = 1,
    seed: int | None = None,
    randomize: bool = True,
    block_on: str | None = None,
) -> Schedule:
    """Replicate ``design`` and order its jobs; a randomized order needs an explicit ``seed``."""
    if replications < 1:
        raise DesignError(f"--replications must be >= 1, got {replications}")
    if design.n_runs * replications > MAX_DESIGN_ROWS:
        raise DesignError(f"{design.n_runs} design points x {replications} replications = "
                          f"{design.n_runs * replications} jobs, more than the {MAX_DESIGN_ROWS} a campaign takes: "
                          "lower --replications (or split the design)")
    if randomize and seed is None:
        raise DesignError("a randomized run order needs a seed: give --seed S (or --no-randomize)")
    if seed is not None and seed < 0:
        raise DesignError(f"--seed must be >= 0, got {seed}")
    n = design.n_runs
    runs = np.tile(np.arange(n), replications)  # replicate-major standard order
    rng = np.random.default_rng(seed) if randomize else None
    if block_on is None:
        order = rng.permutation(runs.size) if rng is not None else np.arange(runs.size)
    else:
        j = design.names.index(design.factors.by_name(block_on).name)
        order = _blocked_order(design.index[runs, j], len(design.factors.factors[j].levels), rng)
    points = design.points
    seen: Counter[int] = Counter()
    jobs = []
    for run in runs[order].tolist():
        seen[run] += 1
        jobs.append(Job(run + 1, seen[run], points[run]))
    return Schedule(design, tuple(jobs), replications, seed, randomize, block_on)


def _blocked_order(block: np.ndarray, n_levels: int, rng: np.random.Generator | None) -> np.ndarray:
    """Positions grouped by block level: random block order and within-block order if rng given."""
    levels = rng.permutation(n_levels) if rng is not None else np.arange(n_levels)
    parts = []
    for level in levels.tolist():
        members = np.flatnonzero(block == level)
        parts.append(rng.permutation(members) if rng is not None else members)
    return np.concatenate(parts)


def _cell(value: Level) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)
