"""Execution order: replications, randomization from an explicit seed, split plots, CSV output.

Without hard-to-change factors every job (run x replicate) is placed in one random permutation
(complete randomization). With ``hard_to_change`` factors (``nodes``: a cluster rescale;
``runtime``, ``jvm``: a cluster restart) the design is run as a split-plot experiment:

* a *whole plot* is one replicate's jobs at one combination of the hard-to-change levels, so
  every replicate has its own whole plots and a level has as many whole plots as replicates;
* the whole plots run in one random order (across replicates), the jobs of a whole plot
  (its *subplots*) in random order inside it;
* each job carries its whole plot's number (``whole_plot``, 1, 2, ... in execution order), so
  the campaign rescales or restarts the cluster only between whole plots and the analysis tests
  the hard-to-change factors against the variation between whole plots (their error), not
  against the run-to-run residual.

With one replicate a level has a single whole plot, and its effect cannot be told apart from
whatever else changed between whole plots (drift, load, a warm cache): the summary warns.
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
from sparkdl.runspec import MAX_DESIGN_ROWS


@dataclass(frozen=True)
class Job:
    """One execution of a design point: its standard-order run number and replicate (1-based)."""

    run: int
    replicate: int
    values: tuple[Level, ...]
    whole_plot: int | None = None


@dataclass(frozen=True)
class Schedule:
    """The jobs of a design in execution order."""

    design: Design
    jobs: tuple[Job, ...]
    replications: int
    seed: int | None
    randomized: bool
    whole_plot_factors: tuple[str, ...] = ()

    @property
    def split_plot(self) -> bool:
        return bool(self.whole_plot_factors)

    @property
    def columns(self) -> tuple[str, ...]:
        cell = ("run", "replicate", "whole_plot") if self.split_plot else ("run", "replicate")
        return (*cell, *self.design.names, *(n for n, _ in self.design.factors.constants))

    def level_sequence(self, name: str) -> list[Level]:
        j = self.design.names.index(self.design.factors.by_name(name).name)
        return [job.values[j] for job in self.jobs]

    def changes(self, name: str) -> int:
        """How many times factor ``name`` changes level between consecutive jobs."""
        seq = self.level_sequence(name)
        return sum(a != b for a, b in zip(seq, seq[1:]))

    def whole_plot_levels(self) -> list[tuple[Level, ...]]:
        """Each job's combination of the whole-plot factors' levels (empty tuples without split plots)."""
        cols = [self.design.names.index(self.design.factors.by_name(n).name) for n in self.whole_plot_factors]
        return [tuple(job.values[j] for j in cols) for job in self.jobs]

    @property
    def n_whole_plots(self) -> int:
        return len({job.whole_plot for job in self.jobs}) if self.split_plot else 0

    @property
    def whole_plot_error_df(self) -> int:
        """Whole plots minus the whole-plot level combinations: the df the whole-plot factors are tested on."""
        return self.n_whole_plots - len(set(self.whole_plot_levels())) if self.split_plot else 0

    def cluster_changes(self) -> int:
        """Rescales or restarts the campaign makes: one at every whole-plot boundary (a new whole plot
        resets its hard-to-change factors even at the same levels), else at every change of level."""
        if self.split_plot:
            return self.n_whole_plots - 1
        return 0

    def expected_random_changes(self, name: str | None = None) -> float:
        """Mean number of level changes of ``name`` (default: the whole-plot level combination) between
        consecutive jobs under complete randomization of these jobs."""
        seq: list[object] = self.level_sequence(name) if name else list(self.whole_plot_levels())
        counts = np.array(list(Counter(seq).values()), dtype=float)
        n = counts.sum()
        if n < 2:
            return 0.0
        return float((n - 1) * (1 - (counts * (counts - 1)).sum() / (n * (n - 1))))

    def rows(self) -> list[list[Level]]:
        consts = [v for _, v in self.design.factors.constants]
        if self.split_plot:
            return [[job.run, job.replicate, job.whole_plot or 0, *job.values, *consts] for job in self.jobs]
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
    hard_to_change: tuple[str, ...] = (),
) -> Schedule:
    """Replicate ``design`` and order its jobs; a randomized order needs an explicit ``seed``.

    ``hard_to_change`` factors make a split-plot order (see the module docstring)."""
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
    names = tuple(design.factors.by_name(n).name for n in hard_to_change)
    n = design.n_runs
    runs = np.tile(np.arange(n), replications)  # replicate-major standard order
    rng = np.random.default_rng(seed) if randomize else None
    plots: list[np.ndarray]
    if not names:
        plots = [rng.permutation(runs.size) if rng is not None else np.arange(runs.size)]
    else:
        cols = [design.names.index(name) for name in names]
        replicate = np.repeat(np.arange(replications), n)
        keys = np.column_stack([replicate, design.index[runs][:, cols]])
        plots = _whole_plots(keys, rng)
    points = design.points
    seen: Counter[int] = Counter()
    jobs = []
    for number, positions in enumerate(plots, start=1):
        for pos in positions.tolist():
            run = int(runs[pos])
            seen[run] += 1  # completely randomized: a run's replicates are numbered in execution order
            replicate = pos // n + 1 if names else seen[run]  # split plots: the replicate the whole plot belongs to
            jobs.append(Job(run + 1, replicate, points[run], number if names else None))
    return Schedule(design, tuple(jobs), replications, seed, randomize, names)


def _whole_plots(keys: np.ndarray, rng: np.random.Generator | None) -> list[np.ndarray]:
    """Job positions grouped by whole plot (equal rows of ``keys``: replicate, then the hard-to-change
    levels): the whole plots in random order across replicates and the jobs in random order in each when
    ``rng`` is given, else in standard order."""
    unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    standard = np.argsort(first, kind="stable")  # whole plots in order of their first job
    order = rng.permutation(standard) if rng is not None else standard
    plots = []
    for plot in order.tolist():
        members = np.flatnonzero(inverse == plot)
        plots.append(rng.permutation(members) if rng is not None else members)
    return plots


def _cell(value: Level) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)
