"""The front of design points on replicated data, by a seeded bootstrap over each point's replicates.

A design point (a configuration) is one combination of the factor columns: the campaign manifest's
factors when known, else the ``run`` column (a campaign numbers its design rows by run and their
replicates by replicate), else the usual factor columns present. Per objective each point gets the
mean of its ok runs and a t interval, mean +- t(level, n-1) s / sqrt(n) (none with one run).

Resampling: in each of B resamples, every point's ok runs are drawn with replacement (as many as it
has), the means recomputed, and the points no other point dominates counted. A point's probability
of being on the front is the share of resamples in which it is non-dominated; the front is the points
with a probability above the threshold. The hypervolume of the observed means is reported with the
percentile interval of the resampled means' hypervolumes, against one fixed reference (the worst mean
of each objective moved out by 10 % of the means' range, unless given).

Caveats the text repeats: a point with one ok run never varies in the resamples, so its probability
reflects only the others' noise; with few replicates the bootstrap understates the spread by a
factor (n-1)/n in variance; the hypervolume of noisy means is biased upwards (the front picks the
lucky ones), so its interval is about the observed means, not a correction of that bias.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from optimize.errors import CampaignDataError, SearchOptionError
from optimize.fronts.result import ConfigurationFront, DesignPoint
from optimize.dominance import (FACTOR_COLUMNS, ObjectiveSpec, default_reference, hypervolume, minimisation_matrix,
                             non_dominated, ok_runs, point_label)

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
DEFAULT_THRESHOLD = 0.5
DEFAULT_LEVEL = 0.95
#: Bound on the booleans held at once by the dominance test (resamples x points x points x objectives).
CHUNK_CELLS = 4_000_000
UNREPLICATED_NOTE = ("no design point has more than one ok run, so there is no replicate noise to resample: "
                     "the front is of the individual runs (as with --per-run)")


def point_columns(runs: pd.DataFrame, factors: Sequence[str] = ()) -> tuple[str, ...]:
    """The columns that name a design point: ``factors`` present in ``runs``, else ``run``, else the usual factors."""
    given = tuple(c for c in factors if c in runs.columns)
    if given:
        return given
    if "run" in runs.columns:
        return ("run",)
    found = tuple(c for c in FACTOR_COLUMNS if c in runs.columns)
    if not found:
        raise CampaignDataError("the table has no run column and none of the factor columns "
                                f"({', '.join(FACTOR_COLUMNS)}): nothing names a design point; use --per-run")
    return found


def is_replicated(runs: pd.DataFrame, factors: Sequence[str] = ()) -> bool:
    """True when some design point of ``runs`` (ok runs with finite objectives) has two or more rows."""
    if runs.empty:
        return False
    return bool(runs.groupby(list(point_columns(runs, factors)), sort=False, dropna=False).size().max() > 1)


def check_options(resamples: int, threshold: float, level: float) -> None:
    if resamples < 1:
        raise SearchOptionError(f"--resamples {resamples} must be a positive number of bootstrap resamples, e.g. 2000")
    if not 0.0 <= threshold < 1.0:
        raise SearchOptionError(f"--front-threshold {threshold:g} must be a probability in [0, 1), e.g. 0.5")
    if not 0.0 < level < 1.0:
        raise SearchOptionError(f"--level {level:g} must be in (0, 1), e.g. 0.95")


# ---------------------------------------------------------------- the bootstrap, vectorised


def bootstrap_means(groups: Sequence[np.ndarray], resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(B, P, k) means: for each of ``resamples`` draws, each group's rows (n_i x k) resampled with replacement."""
    k = groups[0].shape[1]
    out = np.empty((resamples, len(groups), k))
    for i, g in enumerate(groups):
        idx = rng.integers(0, len(g), size=(resamples, len(g)))
        out[:, i, :] = g[idx].mean(axis=1)
    return out


def non_dominated_share(means: np.ndarray) -> np.ndarray:
    """(B, P) booleans: in each resample, the points (minimised) that no other point dominates.

    Same definition as :func:`optimize.pareto.non_dominated`: j dominates i when j is no worse on every
    objective and better on one. 2-D by one sort per resample; more objectives pairwise against the points
    whose resampled ranges allow it, chunked over resamples to bound memory."""
    if means.shape[2] == 2:
        return _non_dominated_2d(means)
    b, p, k = means.shape
    low, high = means.min(axis=0), means.max(axis=0)
    # j can dominate i in some resample only if j's best is no worse than i's worst on every objective
    candidates = np.all(low[:, None, :] <= high[None, :, :], axis=2) & ~np.eye(p, dtype=bool)  # [j, i]
    out = np.ones((b, p), dtype=bool)
    for i in range(p):
        js = np.flatnonzero(candidates[:, i])
        step = max(1, CHUNK_CELLS // max(1, len(js) * k))
        for start in range(0, b, step):
            j, m = means[start:start + step, js, :], means[start:start + step, i, None, :]
            dominated = np.any(np.all(j <= m, axis=2) & np.any(j < m, axis=2), axis=1)
            out[start:start + step, i] = ~dominated
    return out


def _non_dominated_2d(means: np.ndarray) -> np.ndarray:
    """2-D: sorted by (x, y), every dominator of a point comes before it and only copies of it sit between; so
    a point is dominated when the least y before its run of copies is no larger than its own y."""
    b, p, _ = means.shape
    order = np.lexsort((means[:, :, 1], means[:, :, 0]), axis=1)
    x = np.take_along_axis(means[:, :, 0], order, 1)
    y = np.take_along_axis(means[:, :, 1], order, 1)
    before = np.minimum.accumulate(np.concatenate([np.full((b, 1), np.inf), y[:, :-1]], axis=1), axis=1)
    idx = np.broadcast_to(np.arange(p), (b, p))
    new = np.ones((b, p), dtype=bool)
    new[:, 1:] = (x[:, 1:] != x[:, :-1]) | (y[:, 1:] != y[:, :-1])
    first = np.maximum.accumulate(np.where(new, idx, 0), axis=1)  # where each run of copies starts
    free = np.take_along_axis(before, first, 1) > y
    out = np.empty((b, p), dtype=bool)
    np.put_along_axis(out, order, free, 1)
    return out


def hypervolumes(means: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """(B,) exact hypervolume of each resample's points against ``reference`` (all minimised).

    Vectorised over resamples: 2-D by a sweep (sort by the first objective; each point adds the strip between its
    second value and the best one before it), 3-D by slices along the last objective, each a 2-D sweep; 4-D or
    more calls :func:`optimize.pareto.hypervolume` per resample."""
    ref = np.asarray(reference, dtype=float)
    k = means.shape[2]
    if k > 3:
        return np.array([hypervolume(m, ref) for m in means])
    inside = np.all(means < ref, axis=2)
    pts = np.where(inside[:, :, None], means, ref)  # points not better than the reference add nothing
    if k == 2:
        return _sweep_2d(pts, ref)
    order = np.argsort(pts[:, :, 2], axis=1, kind="stable")
    pts = np.take_along_axis(pts, order[:, :, None], 1)
    upper = np.concatenate([pts[:, 1:, 2], np.full((len(pts), 1), ref[2])], axis=1)
    total = np.zeros(len(pts))
    for i in range(pts.shape[1]):
        total += (upper[:, i] - pts[:, i, 2]) * _sweep_2d(pts[:, : i + 1, :2], ref[:2])
    return total


def _sweep_2d(pts: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """(B,) 2-D hypervolumes of (B, P, 2) points each inside the reference box or at its corner."""
    x, y = pts[:, :, 0], pts[:, :, 1]
    order = np.lexsort((y, x), axis=1)
    x, y = np.take_along_axis(x, order, 1), np.take_along_axis(y, order, 1)
    best_before = np.minimum.accumulate(np.concatenate([np.full((len(y), 1), ref[1]), y[:, :-1]], axis=1), axis=1)
    return np.sum((ref[0] - x) * np.clip(best_before - y, 0.0, None), axis=1)


# ---------------------------------------------------------------- the front of a table


def _t_interval(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(values)
    mean = values.mean(axis=0)
    if n < 2:
        nan = np.full(values.shape[1], np.nan)
        return mean, nan, nan
    half = stats.t.ppf(0.5 + level / 2, n - 1) * values.std(axis=0, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def described(runs: pd.DataFrame, keys: Sequence[str], groups: Iterable[np.ndarray]) -> tuple[str, ...]:
    """The usual factor columns beside ``keys`` that are constant within every point (shown, e.g., beside ``run``)."""
    groups = list(groups)
    out = []
    for c in FACTOR_COLUMNS:
        if c in runs.columns and c not in keys:
            values = runs[c].astype(str).to_numpy()
            if all(len(set(values[g])) == 1 for g in groups):
                out.append(c)
    return tuple(out)


def _plain(v: object) -> object:
    return v.item() if isinstance(v, np.generic) else v


def configuration_front(table: pd.DataFrame, objectives: Sequence[ObjectiveSpec], factors: Sequence[str] = (),
                        reference: Sequence[float] | None = None, cost: str | None = None,
                        resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                        threshold: float = DEFAULT_THRESHOLD, level: float = DEFAULT_LEVEL) -> ConfigurationFront:
    """The front of ``table``'s design points (see the module doc); ``reference`` in the objectives' own units."""
    check_options(resamples, threshold, level)
    objectives = tuple(objectives)
    runs, excluded = ok_runs(table, objectives, cost)
    if runs.empty:
        raise CampaignDataError("no ok run with finite objective values: nothing to put on a front")
    keys = point_columns(runs, factors)
    matrix = minimisation_matrix(runs, objectives)
    signs = np.array([o.sign for o in objectives])
    grouped = runs.groupby(list(keys), sort=False, dropna=False).indices
    settings = list(grouped)
    groups = [matrix[grouped[s]] for s in settings]
    means_min = np.array([g.mean(axis=0) for g in groups])
    ref_min = default_reference(means_min) if reference is None else signs * np.asarray(reference, float)
    if len(ref_min) != len(objectives):
        raise SearchOptionError(f"the reference has {len(ref_min)} value(s) for {len(objectives)} objectives")
    boot = bootstrap_means(groups, resamples, np.random.default_rng(seed))
    free = non_dominated_share(boot)
    probability = free.mean(axis=0)
    volumes = hypervolumes(boot[:, free.any(axis=0), :], ref_min)  # a point never on a resample's front adds nothing
    tail = (1 - level) / 2
    interval = (float(np.quantile(volumes, tail)), float(np.quantile(volumes, 1 - tail)))
    observed = non_dominated(means_min)
    shown = (*keys, *described(runs, keys, grouped.values()))
    own = runs[[o.column for o in objectives]].to_numpy(float)
    levels = runs[list(shown)].to_numpy(object)
    label_columns = [c for c in ("run", "replicate", "point") if c in runs.columns]
    labels = ([point_label(r) for r in runs[label_columns].to_dict("records")] if label_columns
              else [f"row {i + 1}" for i in range(len(runs))])  # a table with no run column: its row numbers
    points = []
    for i, s in enumerate(settings):
        rows = grouped[s]
        mean, low, high = _t_interval(own[rows], level)
        points.append(DesignPoint(tuple((k, _plain(v)) for k, v in zip(shown, levels[rows[0]])),
                                  tuple(labels[r] for r in rows),
                                  tuple(float(v) for v in mean), tuple(float(v) for v in low),
                                  tuple(float(v) for v in high), float(probability[i]),
                                  bool(probability[i] > threshold), not bool(observed[i])))
    notes = []
    single = sum(len(g) == 1 for g in groups)
    if single:
        notes.append(f"{single} of {len(groups)} design points have one ok run: the resamples never move them, so "
                     "their probability reflects only the other points' noise")
    return ConfigurationFront(objectives, keys, tuple(points), float(threshold), int(resamples), int(seed),
                              float(level), tuple(float(v) for v in signs * ref_min),
                              float(hypervolume(means_min, ref_min)), interval, int(len(runs)), int(excluded),
                              tuple(notes))
