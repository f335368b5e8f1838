"""Drift: does the response trend over the campaign's run time, beside what the design explains?

A campaign runs for hours on machines that change under it (other load, a warming cache, a
filling disk). When the run order is randomized, a linear drift inflates the residual; when the
order is restricted (whole plots), it can masquerade as a whole-plot factor's effect. The check:

* the time of each run is its ``start`` (hours since the campaign's first start); without start
  times there is no check, and the result says so;
* the model is the analysis's own terms plus ``hours``. Without whole plots it is fitted by
  OLS, and ``hours`` is tested by its t statistic on the residual df. With whole plots it is the
  split-plot analysis's own REML fit (a random intercept per whole plot), and ``hours`` is tested
  by its t on the containment df, as the split-plot ANOVA tests its terms. The result names the method;
* the estimate is the change of the response per hour, also as a percentage of its mean, with
  its 95 % interval; a campaign shorter than an hour gives the change over its own span instead (a rate per
  hour would be the line extrapolated past the data).

Reference runs (``harness.submit --reference-every N``) repeat one configuration through the
campaign. When a campaign has at least 3 of them, the drift is estimated from them alone: the
same configuration, so any trend in them is the machine's, not the design's. When their trend is
significant at ``alpha``, :func:`adjust_for_drift` subtracts it from every run's response, and
the analysis says that it did.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from models.errors import InvalidTableError

HOURS = "run_hours"
START_COLUMN = "start"
#: Fewest reference runs whose trend is used instead of the model's.
MIN_REFERENCE_RUNS = 3


@dataclass(frozen=True)
class DriftResult:
    """A linear trend of ``response`` over the campaign's time, and its test."""

    response: str
    n: int
    span_h: float
    slope_per_h: float | None
    pct_per_h: float | None
    ci_low: float | None
    ci_high: float | None
    statistic: float | None
    df: float | None
    p: float | None
    method: str
    alpha: float = 0.05
    reference_runs: int = 0
    note: str = ""

    @property
    def tested(self) -> bool:
        return self.p is not None

    @property
    def significant(self) -> bool:
        return self.p is not None and self.p < self.alpha

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["significant"] = self.significant
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in doc.items()}

    @property
    def per(self) -> tuple[float, str]:
        """(hours, words) the change is given over: an hour, or the campaign's span when it is shorter (a rate per
        hour of a 3-minute campaign is a line extrapolated 20 times past its data)."""
        if self.span_h >= 1:
            return 1.0, "per hour"
        return self.span_h, f"over the campaign's {span_text(self.span_h)}"

    def to_text(self) -> str:
        if not self.tested:
            return f"drift: not checked: {self.note}"
        k, per = self.per
        pct = f" ({k * self.pct_per_h:+.2f} % of the mean {per})" if self.pct_per_h is not None else ""
        verdict = "a trend" if self.significant else "no trend"
        source = f"from {self.reference_runs} reference runs" if self.reference_runs else f"over {self.n} runs"
        lines = [f"drift: {verdict} in {self.response} {source} across {span_text(self.span_h)}: "
                 f"{k * self.slope_per_h:+.4g} {per}{pct}, 95 % CI [{k * self.ci_low:.4g}, {k * self.ci_high:.4g}], "
                 f"p = {self.p:.3g} ({self.method})"]
        if self.note:
            lines.append(f"drift: {self.note}")
        return "\n".join(lines)


def span_text(hours: float) -> str:
    """A campaign's span in words: ``2.50 h``, or ``3.0 min`` under an hour."""
    return f"{hours:.2f} h" if hours >= 1 else f"{hours * 60:.1f} min"


def run_hours(frame: pd.DataFrame, column: str = START_COLUMN) -> np.ndarray | None:
    """Hours since the first run's start; None without a usable start time on every row."""
    if column not in frame.columns:
        return None
    times = pd.to_datetime(frame[column], utc=True, errors="coerce", format="ISO8601")
    if times.isna().any() or len(times) == 0:
        return None
    return ((times - times.min()).dt.total_seconds() / 3600.0).to_numpy(dtype=float)


def _not_checked(response: str, n: int, why: str, alpha: float) -> DriftResult:
    return DriftResult(response, n, 0.0, None, None, None, None, None, None, None, "none", alpha, note=why)


def check_drift(frame: pd.DataFrame, response: str, rhs: str | None = None, *, whole_plot: str | None = None,
                reference: Sequence[bool] | None = None, alpha: float = 0.05) -> DriftResult:
    """The trend of ``response`` per hour of the campaign, beside the model ``rhs`` (see the module docstring).

    ``whole_plot``: the column of whole plots (a mixed model); ``reference``: which rows are reference runs.
    """
    y = pd.to_numeric(frame[response], errors="coerce").to_numpy(dtype=float) if response in frame else None
    n = len(frame)
    if y is None or not np.all(np.isfinite(y)):
        raise InvalidTableError(f"drift: response {response!r} is missing or not numeric in some rows")
    hours = run_hours(frame)
    if hours is None:
        return _not_checked(response, n, "the table has no start time for every run", alpha)
    span = float(hours.max() - hours.min())
    if span <= 0:
        return _not_checked(response, n, "every run started at the same time", alpha)
    ref = np.asarray(reference, dtype=bool) if reference is not None else np.zeros(n, dtype=bool)
    if ref.sum() >= MIN_REFERENCE_RUNS:
        return _reference_trend(y[ref], hours[ref], response, span, alpha)
    data = frame.drop(columns=[c for c in (HOURS, "__y__") if c in frame.columns]).assign(
        **{HOURS: hours, "__y__": y})[~ref]
    terms = f"{rhs} + {HOURS}" if rhs else HOURS
    plots = data[whole_plot].nunique() if whole_plot and whole_plot in data else 0
    if plots >= 2:
        return _mixed_trend(data, terms, whole_plot, response, span, alpha)  # type: ignore[arg-type]
    return _ols_trend(data, terms, response, span, alpha)


def _ols_trend(data: pd.DataFrame, terms: str, response: str, span: float, alpha: float) -> DriftResult:
    import statsmodels.formula.api as smf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.ols(f"__y__ ~ {terms}", data=data).fit()
    if fit.df_resid <= 0:
        return _not_checked(response, len(data), "the model leaves no residual df for a trend", alpha)
    slope, se = float(fit.params[HOURS]), float(fit.bse[HOURS])
    df = float(fit.df_resid)
    return _result(response, len(data), span, slope, se, df, stats.t, float(data["__y__"].mean()),
                   "OLS with the model's terms plus hours, t test", alpha)


def _mixed_trend(data: pd.DataFrame, terms: str, whole_plot: str, response: str, span: float,
                 alpha: float) -> DriftResult:
    """``hours`` beside the model in the split-plot analysis's own REML fit (:func:`models.anova.splitplot.reml_fit`),
    tested by its t on the containment df: the subplot residual's, as hours changes inside whole plots."""
    import patsy

    from models.anova.splitplot import SplitPlotError, group_codes, reml_fit

    try:
        x = patsy.dmatrix(terms, data, return_type="dataframe", NA_action="raise")
        fit = reml_fit(x.to_numpy(dtype=float), data["__y__"].to_numpy(dtype=float), group_codes(data[whole_plot]))
    except (SplitPlotError, np.linalg.LinAlgError, patsy.PatsyError):
        return _not_checked(response, len(data), "too few runs for a trend beside the whole plots and the "
                            "model's terms (no residual df inside the whole plots)", alpha)
    i = list(x.columns).index(HOURS)
    _, _, df = fit.test([i])
    slope, se = float(fit.beta[i]), float(np.sqrt(fit.cov[i, i]))
    return _result(response, len(data), span, slope, se, float(df), stats.t, float(data["__y__"].mean()),
                   "REML with the model's terms plus hours and a random intercept per whole plot, t test on "
                   "the containment df", alpha)


def _reference_trend(y: np.ndarray, hours: np.ndarray, response: str, span: float, alpha: float) -> DriftResult:
    fit = stats.linregress(hours, y)
    df = float(len(y) - 2)
    return _result(response, len(y), span, float(fit.slope), float(fit.stderr), df, stats.t, float(y.mean()),
                   "least-squares line through the reference runs, t test", alpha, reference_runs=len(y))


def _result(response: str, n: int, span: float, slope: float, se: float, df: float | None, dist: Any, mean: float,
            method: str, alpha: float, reference_runs: int = 0) -> DriftResult:
    if not (se > 0 and math.isfinite(se)):
        return _not_checked(response, n, "the trend's standard error is 0 or undefined", alpha)
    frozen = dist(df) if df is not None else dist()
    stat = slope / se
    p = float(2 * frozen.sf(abs(stat)))
    half = float(frozen.ppf(0.975)) * se
    pct = 100 * slope / mean if mean != 0 else None
    return DriftResult(response, n, span, slope, pct, slope - half, slope + half, stat, df, p, method, alpha,
                       reference_runs)


def adjust_for_drift(frame: pd.DataFrame, response: str, drift: DriftResult) -> tuple[pd.DataFrame, str | None]:
    """The frame with the reference runs' significant trend taken out of ``response`` (centred on the
    campaign's mean time), and a note saying so; the frame unchanged and None otherwise."""
    if not (drift.reference_runs and drift.significant and drift.slope_per_h is not None):
        return frame, None
    hours = run_hours(frame)
    if hours is None:
        return frame, None
    adjusted = pd.to_numeric(frame[response], errors="coerce") - drift.slope_per_h * (hours - hours.mean())
    k, per = drift.per
    note = (f"{response} adjusted for drift: the {drift.reference_runs} reference runs trend by "
            f"{k * drift.slope_per_h:+.4g} {per} (p = {drift.p:.3g}); each run's value minus that trend "
            "(centred on the campaign's mean time) is analysed")
    return frame.assign(**{response: adjusted.to_numpy()}), note


def table_drift(frame: pd.DataFrame, reference: pd.DataFrame, response: str, rhs: str | None = None, *,
                whole_plot: str | None = None, alpha: float = 0.05) -> DriftResult:
    """:func:`check_drift` of an analysed table and its campaign's reference runs (may be empty)."""
    if reference is None or len(reference) == 0 or response not in reference.columns:
        return check_drift(frame, response, rhs, whole_plot=whole_plot, alpha=alpha)
    both = pd.concat([frame, reference], ignore_index=True)
    mask = np.r_[np.zeros(len(frame), dtype=bool), np.ones(len(reference), dtype=bool)]
    return check_drift(both, response, rhs, whole_plot=whole_plot, reference=mask, alpha=alpha)
