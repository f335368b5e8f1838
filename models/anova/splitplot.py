"""Split-plot analysis: REML with a random intercept per whole plot, and each term tested in its stratum.

A split-plot experiment changes its hard-to-change factors (``nodes``, ``runtime``) only between
whole plots, and randomizes the runs of the other factors (the subplots) within each whole plot.
The runs of one whole plot share whatever happened to it (a rescale, a restart, a warm cache,
drift), so the model is

    y = X b + u[whole plot] + e,    u ~ N(0, s2_w),    e ~ N(0, s2)

with the model terms (and the blocks, as fixed effects) in ``X``. :func:`fit_split_plot` fits it
by REML (the ratio s2_w / s2 by a one-dimensional search of the profiled REML likelihood,
unbounded below as JMP does, so that on balanced data it equals the ANOVA estimate), then tests
each term by a Type III Wald F test of its coefficients with the denominator df of its stratum,
chosen by the containment method:

* a term whose columns are constant within every whole plot (a whole-plot factor, a block, their
  interactions) is tested on the whole-plot error df = whole plots - rank of the whole-plot part
  of ``X``;
* any other term on the residual df = runs - rank of ``[X, whole-plot indicators]``.

On balanced data the F tests equal the classical stratum ANOVA's (whole-plot terms against the
whole-plot error mean square, subplot terms against the residual mean square). When the
whole-plot error has no df (e.g. one whole plot per level of ``nodes``), whole-plot terms get no
F and no p, but one line saying why.

:func:`split_plot_structure` finds the whole plots of a campaign's table (its ``whole_plot``
column) and the factors constant within them; :func:`whole_plot_groups` forms whole plots from
a block and the whole-plot factors' levels when there is no such column.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import linalg, optimize, stats

from models.anova.design import INTERCEPT, ModelMatrix, code_factors, estimable_terms, is_numeric, term_parts
from models.anova.fit import resolve_factors, resolve_terms, response_values, transform_response
from models.anova.splitplot_result import (
    SUBPLOT,
    WHOLE_PLOT,
    Coefficient,
    ErrorStratum,
    SplitPlotResult,
    SplitPlotRow,
    VarianceComponent,
    WholePlots,
)
from models.anova.terms import sum_coding
from models.errors import FormulaError, InvalidTableError, MissingColumnError

#: The column of a campaign's results table that names each run's whole plot.
WHOLE_PLOT_COLUMN = "whole_plot"
#: Search range of log(1 + m * s2_w / s2), m = the largest whole plot's size.
LOG_RATIO_BOUNDS = (-12.0, 12.0)
#: A column whose spread within every whole plot is below this fraction of its scale is constant there.
CONSTANT_TOL = 1e-9


class SplitPlotError(InvalidTableError):
    """The table cannot give a split-plot analysis (one whole plot, no runs share a whole plot, ...)."""


# --- whole plots -----------------------------------------------------------------------------------


def group_codes(labels: pd.DataFrame | pd.Series) -> np.ndarray:
    """0..G-1 codes of the distinct rows of ``labels``, in order of first appearance."""
    frame = labels.to_frame() if isinstance(labels, pd.Series) else labels
    keys = [tuple(r) for r in frame.astype(str).itertuples(index=False)]
    index: dict[tuple, int] = {}
    return np.array([index.setdefault(k, len(index)) for k in keys], dtype=int)


def constant_within(x: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Which columns of ``x`` take one value within every group."""
    x = np.asarray(x, dtype=float).reshape(len(groups), -1)
    n_groups = int(groups.max()) + 1
    sizes = np.bincount(groups, minlength=n_groups).astype(float)
    means = np.zeros((n_groups, x.shape[1]))
    np.add.at(means, groups, x)
    means /= sizes[:, None]
    spread = np.abs(x - means[groups]).max(axis=0)
    scale = np.maximum(np.abs(x).max(axis=0), 1.0)
    return spread <= CONSTANT_TOL * scale


def factors_constant_within(frame: pd.DataFrame, factors: Iterable[str], groups: np.ndarray) -> tuple[str, ...]:
    """The factors that take one level within every whole plot."""
    out = []
    for f in factors:
        codes = group_codes(frame[f])
        if bool(constant_within(codes.astype(float), groups)[0]):
            out.append(f)
    return tuple(out)


def split_plot_structure(frame: pd.DataFrame, factors: Sequence[str],
                         column: str = WHOLE_PLOT_COLUMN) -> tuple[tuple[str, ...], int] | None:
    """The whole-plot factors (declared factors constant within every whole plot) and the number of whole
    plots, when ``frame`` has a ``column`` with 2 or more whole plots some of which hold several runs; else None."""
    if column not in frame.columns or frame[column].isna().any():
        return None
    groups = group_codes(frame[column])
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    if n_groups < 2 or n_groups == len(frame):
        return None
    varying = [f for f in factors if f in frame.columns and frame[f].nunique(dropna=True) > 1]
    return factors_constant_within(frame, varying, groups), n_groups


def add_split_plot_options(p: argparse.ArgumentParser, what: str = "tests") -> None:
    """``--whole-plot FACTORS|none`` and ``--block COLUMN``: one meaning in every command that tests factors."""
    p.add_argument("--whole-plot", metavar="FACTORS",
                   help=f"split-plot {what}: the hard-to-change (whole-plot) factors, e.g. nodes,runtime; a whole "
                        "plot is each combination of block and their levels, unless the table has a "
                        f"{WHOLE_PLOT_COLUMN!r} column (then used with no flag). 'none': the ordinary analysis, as "
                        "if the runs were fully randomized")
    p.add_argument("--block", metavar="COLUMN",
                   help=f"block column of the split-plot {what} (a fixed effect), e.g. replicate")


def split_plot_request(whole_plot: str | None, block: str | None, frame: pd.DataFrame, factors: Sequence[str],
                       error: type[Exception] = SplitPlotError) -> tuple[tuple[str, ...] | None, str | None] | None:
    """What ``--whole-plot``/``--block`` ask for on ``frame``: (whole-plot factors, or None to infer them from
    the whole-plot column; that column or None) for the split-plot model, or None for the ordinary analysis."""
    wanted = None if whole_plot is None else whole_plot.strip()
    if wanted is not None and wanted.lower() == "none":
        if block:
            raise error("--block goes with the split-plot analysis; with --whole-plot none drop it (or put the "
                        "block in --terms, e.g. --terms 'C(replicate) + a + b')")
        return None
    column = WHOLE_PLOT_COLUMN if split_plot_structure(frame, factors) is not None else None
    if wanted is not None:
        names = tuple(n.strip() for n in wanted.split(",") if n.strip())
        unknown = [n for n in names if n not in factors]
        if unknown or not names:
            raise error(f"--whole-plot {wanted}: {', '.join(unknown) or 'no factor'} not among the factors "
                        f"{', '.join(factors)}: name hard-to-change factors, or none")
        return names, column
    if column is not None:
        return None, column
    if block:
        raise error(f"--block {block} needs whole plots: give --whole-plot FACTORS (the hard-to-change factors), "
                    f"or a table with a {WHOLE_PLOT_COLUMN!r} column")
    return None


def whole_plot_groups(frame: pd.DataFrame, whole_plot_factors: Sequence[str], whole_plot: str | None = None,
                      block: str | None = None) -> tuple[np.ndarray, str]:
    """Each run's whole plot (0..G-1) and how it was found: the ``whole_plot`` column when given, else each
    distinct combination of the block and the whole-plot factors' levels."""
    if whole_plot is not None:
        if whole_plot not in frame.columns:
            raise MissingColumnError(f"whole-plot column {whole_plot!r} is not in the table; columns are "
                                     f"{list(frame.columns)}")
        if frame[whole_plot].isna().any():
            raise SplitPlotError(f"column {whole_plot!r} is blank in {int(frame[whole_plot].isna().sum())} row(s): "
                                 "every run needs the whole plot it ran in")
        return group_codes(frame[whole_plot]), f"the {whole_plot!r} column"
    keys = ([block] if block else []) + list(whole_plot_factors)
    if not keys:
        raise SplitPlotError("no whole plots: give the whole-plot factors (--whole-plot nodes) or a table with a "
                             f"{WHOLE_PLOT_COLUMN!r} column")
    return group_codes(frame[keys]), "each combination of " + ", ".join(keys)


# --- the REML fit --------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RemlFit:
    """REML fit of ``y = X b + u[group] + e``: coefficients, their covariance, the two variances and the
    containment df. ``whole_plot_columns`` marks the columns of X that are constant within every group."""

    beta: np.ndarray
    cov: np.ndarray
    sigma2: float
    sigma2_w: float
    estimated: bool
    at_lower_bound: bool
    whole_plot_columns: np.ndarray
    df_whole_plot: int
    df_residual: int
    n_groups: int

    def test(self, columns: Sequence[int]) -> tuple[float, int, int]:
        """Wald F of ``b[columns] = 0``, its numerator df and its containment denominator df."""
        cols = list(columns)
        b = self.beta[cols]
        c = self.cov[np.ix_(cols, cols)]
        q = len(cols)
        F = float(b @ linalg.solve(c, b, assume_a="sym")) / q
        den = self.df_whole_plot if bool(np.all(self.whole_plot_columns[cols])) else self.df_residual
        return F, q, den


def _rank(x: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(x)) if x.size else 0


def _rss(x: np.ndarray, y: np.ndarray) -> float:
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    r = y - x @ beta
    return float(r @ r)


@dataclass(frozen=True, eq=False)
class _Sums:
    """X'X, X'y, y'y and the per-group sums the REML criterion needs (V^-1 is closed-form per group)."""

    xtx: np.ndarray
    xty: np.ndarray
    yty: float
    sx: np.ndarray  # groups x p: column sums of X per group
    sy: np.ndarray  # per-group sums of y
    sizes: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> _Sums:
        g = int(groups.max()) + 1
        sx = np.zeros((g, x.shape[1]))
        np.add.at(sx, groups, x)
        sy = np.bincount(groups, weights=y, minlength=g)
        return cls(x.T @ x, x.T @ y, float(y @ y), sx, sy, np.bincount(groups, minlength=g).astype(float))

    def gls(self, gamma: float) -> tuple[np.ndarray, np.ndarray, float]:
        """X'V^-1 X, the GLS coefficients and r'V^-1 r for V = I + gamma Z Z'."""
        c = gamma / (1.0 + self.sizes * gamma)
        xvx = self.xtx - (self.sx.T * c) @ self.sx
        xvy = self.xty - (self.sx.T * c) @ self.sy
        yvy = self.yty - float(c @ self.sy**2)
        beta = linalg.solve(xvx, xvy, assume_a="sym")
        return xvx, beta, yvy - float(beta @ xvy)

    def neg_reml(self, gamma: float, df: int) -> float:
        """Minus the REML log-likelihood with s2 profiled out (constants dropped)."""
        try:
            xvx, _, q = self.gls(gamma)
        except (np.linalg.LinAlgError, ValueError):
            return math.inf
        sign, logdet = np.linalg.slogdet(xvx)
        if q <= 0 or sign <= 0:
            return math.inf
        return 0.5 * (df * math.log(q / df) + float(np.sum(np.log1p(self.sizes * gamma))) + logdet)


def _score(x: np.ndarray, y: np.ndarray, groups: np.ndarray, sizes: np.ndarray, gamma: float, df: int) -> float:
    """d/d gamma of the profiled REML log-likelihood (times 2): (n-p) y'P ZZ'P y / y'P y - tr(P ZZ')."""
    n, g = len(y), len(sizes)
    z = np.zeros((n, g))
    z[np.arange(n), groups] = 1.0
    vinv = np.eye(n) - (z * (gamma / (1.0 + sizes * gamma))) @ z.T
    w = vinv @ x
    p = vinv - w @ linalg.solve(x.T @ w, w.T, assume_a="sym")
    py = p @ y
    zpy = z.T @ py
    return df * float(zpy @ zpy) / float(y @ py) - float(np.trace(z.T @ p @ z))


def _best_gamma(sums: _Sums, x: np.ndarray, y: np.ndarray, groups: np.ndarray, df: int) -> tuple[float, bool]:
    """The REML ratio s2_w / s2 (unbounded below, down to where V stops being positive definite) and whether
    it sits at that lower bound. Searched on t = log(1 + m * gamma): a grid brackets the maximum, whose score
    equation is then solved to machine precision (Brent's root finder)."""
    m = float(sums.sizes.max())

    def gamma_of(t: float) -> float:
        return math.expm1(t) / m

    lo, hi = LOG_RATIO_BOUNDS
    grid = np.linspace(lo, hi, 97)
    values = [sums.neg_reml(gamma_of(t), df) for t in grid]
    k = int(np.argmin(values))
    a, b = float(grid[max(k - 1, 0)]), float(grid[min(k + 1, len(grid) - 1)])
    score_a, score_b = (_score(x, y, groups, sums.sizes, gamma_of(t), df) for t in (a, b))
    if score_a > 0 > score_b:
        t = optimize.brentq(lambda u: _score(x, y, groups, sums.sizes, gamma_of(u), df), a, b, xtol=1e-14,
                            rtol=1e-15, maxiter=200)
    else:  # the maximum is at an end of the search range
        res = optimize.minimize_scalar(lambda u: sums.neg_reml(gamma_of(u), df), bounds=(a, b), method="bounded",
                                       options={"xatol": 1e-12})
        t = float(res.x) if res.fun <= values[k] else float(grid[k])
    return gamma_of(t), t <= lo + 1e-6


def reml_fit(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> RemlFit:
    """REML fit of ``y = X b + u[group] + e`` (X of full column rank) with containment df."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n, p = x.shape
    n_groups = int(groups.max()) + 1
    z = np.zeros((n, n_groups))
    z[np.arange(n), groups] = 1.0
    wp_cols = constant_within(x, groups)
    df_wp = n_groups - _rank(x[:, wp_cols])
    df_res = n - _rank(np.hstack([x, z]))
    if df_res <= 0:
        raise SplitPlotError(f"no residual df within whole plots ({n} runs, {n_groups} whole plots, {p} model "
                             "columns): the subplot terms use up every run; fit fewer terms or run more jobs")
    sums = _Sums.of(x, y, groups)
    if df_wp > 0:
        gamma, at_bound = _best_gamma(sums, x, y, groups, n - p)
    else:  # no whole-plot error contrasts: the REML likelihood does not depend on the whole-plot variance
        gamma, at_bound = 0.0, False
    xvx, beta, q = sums.gls(gamma)
    sigma2 = q / (n - p)
    cov = sigma2 * linalg.inv(xvx)
    return RemlFit(beta, cov, sigma2, gamma * sigma2, df_wp > 0, at_bound, wp_cols, df_wp, df_res, n_groups)


# --- the split-plot ANOVA --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Matrix:
    x: np.ndarray
    columns: tuple[str, ...]
    slices: dict[str, slice]


def _design(rhs: str, frame: pd.DataFrame) -> _Matrix:
    import patsy

    try:
        dm = patsy.dmatrix(rhs, frame, return_type="dataframe", NA_action="raise")
    except patsy.PatsyError as exc:
        raise FormulaError(f"terms {rhs!r}: {exc.message}") from None
    return _Matrix(dm.to_numpy(dtype=float), tuple(map(str, dm.columns)), dict(dm.design_info.term_name_slices))


def _check_block(frame: pd.DataFrame, block: str | None, factors: Sequence[str]) -> str | None:
    if block is None:
        return None
    if block not in frame.columns:
        raise MissingColumnError(f"block column {block!r} is not in the table; columns are {list(frame.columns)}")
    if block in factors:
        raise FormulaError(f"{block!r} is both a factor and the block; leave it out of --factors or of --block")
    if not block.isidentifier():
        raise FormulaError(f"block column {block[:60]!r} is not a plain name (letters, digits and _): rename it")
    if frame[block].isna().any():
        raise SplitPlotError(f"block column {block!r} is blank in {int(frame[block].isna().sum())} row(s)")
    return block if frame[block].nunique() > 1 else None


def _check_whole_plot_factors(frame: pd.DataFrame, wpf: Sequence[str], groups: np.ndarray) -> None:
    constant = set(factors_constant_within(frame, wpf, groups))
    for f in wpf:
        if f not in constant:
            raise SplitPlotError(f"whole-plot factor {f!r} changes within a whole plot, so it is not a whole-plot "
                                 "factor of these runs: check the whole_plot column or leave it out of --whole-plot")


def _factor_names(term: str) -> tuple[str, ...]:
    out = []
    for part in term_parts(term):
        name = part.strip()
        if name.startswith("C(") and name.endswith(")"):
            name = name[2:-1].split(",")[0].strip()
        out.append(name)
    return tuple(out)


def _untestable_line(term: str, frame: pd.DataFrame, groups: np.ndarray, n_groups: int, settings: int) -> str:
    names = _factor_names(term)
    label = ":".join(names)
    if all(n in frame.columns for n in names):
        plots_per_level = pd.Series(groups).groupby([frame[n].astype(str).to_numpy() for n in names]).nunique()
        if bool((plots_per_level == 1).all()):
            return f"{label}: one whole plot per level, its effect is confounded with drift"
    return (f"{label}: cannot be tested: no whole-plot error df ({n_groups} whole plots for {settings} whole-plot "
            "settings), so its effect is confounded with drift and anything else that changed between whole plots")


def _strata(x: np.ndarray, y: np.ndarray, groups: np.ndarray, fit: RemlFit) -> tuple[ErrorStratum, ErrorStratum]:
    n = len(y)
    z = np.zeros((n, fit.n_groups))
    z[np.arange(n), groups] = 1.0
    ss_wp = _rss(x[:, fit.whole_plot_columns], y) - _rss(z, y)
    ss_res = _rss(np.hstack([x, z]), y)
    wp = ErrorStratum("whole-plot error", fit.df_whole_plot, max(ss_wp, 0.0),
                      ss_wp / fit.df_whole_plot if fit.df_whole_plot > 0 else None)
    return wp, ErrorStratum("residual", fit.df_residual, ss_res, ss_res / fit.df_residual)


def _components(fit: RemlFit) -> tuple[VarianceComponent, VarianceComponent]:
    if not fit.estimated:  # no whole-plot error df: the whole-plot variance and the shares are unknown
        return (VarianceComponent("whole plot", math.nan, math.nan),
                VarianceComponent("residual", fit.sigma2, math.nan))
    w = max(fit.sigma2_w, 0.0)
    total = w + fit.sigma2
    return (VarianceComponent("whole plot", fit.sigma2_w, w / total if total > 0 else math.nan),
            VarianceComponent("residual", fit.sigma2, fit.sigma2 / total if total > 0 else math.nan))


def _variance_notes(fit: RemlFit, strata: tuple[ErrorStratum, ErrorStratum]) -> list[str]:
    if not fit.estimated:
        return ["the whole-plot variance cannot be estimated (no whole-plot error df); it is set to 0, so the "
                "subplot tests use the residual mean square"]
    if fit.at_lower_bound:
        return ["the REML search stopped at its lower bound (the whole plots vary far less than the runs within "
                "them): the whole-plot variance estimate is unreliable"]
    if fit.sigma2_w <= 0:
        wp, res = strata
        return [f"the REML estimate of the whole-plot variance is {fit.sigma2_w:.4g} (<= 0: the whole-plot error "
                f"mean square {wp.mean_sq or 0:.4g} is not above the residual's {res.mean_sq or 0:.4g}): no sign "
                "of variation between whole plots; it is kept unbounded, as JMP does, so that the tests equal the "
                "stratum ANOVA (a fit bounded at 0 would pool the two errors); read it as 0"]
    return []


def fit_split_plot(
    frame: pd.DataFrame,
    response: str,
    factors: Sequence[str] | None,
    *,
    whole_plot_factors: Sequence[str] | None,
    whole_plot: str | None = None,
    block: str | None = None,
    terms: str | None = None,
    transform: str | None = None,
    aliases: Iterable[str | Sequence[str]] = (),
    alpha: float = 0.05,
) -> SplitPlotResult:
    """Fit the split-plot model and test each term in its stratum (see the module docstring).

    ``whole_plot`` names the column that says each run's whole plot; without it a whole plot is each
    distinct combination of ``block`` and the ``whole_plot_factors``' levels. ``whole_plot_factors=None``
    (with ``whole_plot``) takes the factors constant within every whole plot. The block enters as a
    fixed effect. ``terms`` is the model's right-hand side (default: main effects and every estimable
    two-factor interaction).
    """
    df = frame.reset_index(drop=True)
    y = response_values(df, response)
    facs = resolve_factors(df, response, terms, factors)
    blk = _check_block(df, block, facs)
    unknown = [f for f in whole_plot_factors or () if f not in facs]
    if unknown:
        raise FormulaError(f"whole-plot factor(s) {unknown} are not among the factors {list(facs)}; "
                           "give factor names to --whole-plot")
    groups, source = whole_plot_groups(df, whole_plot_factors or (), whole_plot, blk)
    n_groups = int(groups.max()) + 1
    if n_groups < 2:
        raise SplitPlotError(f"all {len(df)} runs are in one whole plot: a split-plot analysis needs 2 or more")
    varying = [f for f in facs if df[f].nunique(dropna=True) > 1]
    wpf = (factors_constant_within(df, varying, groups) if whole_plot_factors is None
           else tuple(whole_plot_factors))
    _check_whole_plot_factors(df, wpf, groups)
    rhs, _ = resolve_terms(df, facs, terms, aliases)
    shown_rhs = f"C({blk}) + {rhs}" if blk else rhs
    matrix, names = _coded_design(df, facs, rhs, shown_rhs, blk)
    yt, label, _ = transform_response(y, transform, matrix.x, response)
    fit = reml_fit(matrix.x, yt, groups)
    strata = _strata(matrix.x, yt, groups, fit)
    settings = len(df[list(wpf)].drop_duplicates()) if wpf else 1
    rows = _term_rows(fit, matrix, names, blk, lambda name: _untestable_line(name, df, groups, n_groups, settings))
    se = np.sqrt(np.clip(np.diag(fit.cov), 0.0, None))
    coefs = tuple(Coefficient(c, float(b), float(s)) for c, b, s in zip(matrix.columns, fit.beta, se))
    sizes = np.bincount(groups)
    plots = WholePlots(n_groups, tuple(wpf), source, blk, (int(sizes.min()), int(sizes.max())))
    notes = _variance_notes(fit, strata)
    if block is not None and blk is None:
        notes.append(f"block {block!r} has one level among these runs; it is left out")
    return SplitPlotResult(
        response=label, formula=f"{label} ~ {shown_rhs}", n=len(df), whole_plots=plots, rows=rows,
        strata=strata, variance_components=_components(fit), coefficients=coefs, alpha=alpha,
        untestable=tuple(r.note for r in rows if r.note), notes=tuple(notes),
    )


def _coded_design(df: pd.DataFrame, factors: Sequence[str], rhs: str, shown_rhs: str,
                  block: str | None) -> tuple[_Matrix, list[str]]:
    """The fitted model matrix (numeric factors coded -1..+1, sum-to-zero contrasts, the block first) and the
    terms' names as the formula shows them; aliased terms are refused."""
    categorical = [f for f in factors if not is_numeric(df[f])]
    coded = code_factors(df, [f for f in factors if is_numeric(df[f])])
    fitted_rhs = f"C({block}, Sum) + {sum_coding(rhs, categorical)}" if block else sum_coding(rhs, categorical)
    matrix = _design(fitted_rhs, coded)
    names = list(_design(shown_rhs, df).slices)
    if len(names) != len(matrix.slices):
        raise FormulaError(f"terms {rhs!r}: could not match the coded model's terms to the formula's")
    split = estimable_terms(ModelMatrix(matrix.x, matrix.slices), list(matrix.slices))
    if split.aliased:
        bad = [names[list(matrix.slices).index(t)] for t, _ in split.aliased]
        raise FormulaError(f"terms {bad} are aliased with earlier terms (or the block) in these runs, so they are "
                           "not estimable; drop them from --terms")
    return matrix, names


def _term_rows(fit: RemlFit, matrix: _Matrix, names: Sequence[str], block: str | None,
               untestable_line: Callable[[str], str]) -> tuple[SplitPlotRow, ...]:
    """Each term's Wald F in its stratum; a term whose stratum has no error df gets its line instead."""
    rows = []
    for name, (key, sl) in zip(names, matrix.slices.items()):
        if key == INTERCEPT:
            continue
        F, q, den = fit.test(range(sl.start, sl.stop))
        stratum = WHOLE_PLOT if bool(np.all(fit.whole_plot_columns[sl])) else SUBPLOT
        role = "block" if block and name == f"C({block})" else "term"
        if den <= 0:
            rows.append(SplitPlotRow(name, stratum, role, q, None, None, None, untestable_line(name)))
        else:
            rows.append(SplitPlotRow(name, stratum, role, q, den, F, float(stats.f.sf(F, q, den))))
    return tuple(rows)


__all__ = [
    "WHOLE_PLOT_COLUMN", "RemlFit", "SplitPlotError", "constant_within", "fit_split_plot", "group_codes",
    "reml_fit", "split_plot_structure", "whole_plot_groups", "add_split_plot_options", "split_plot_request",
]
