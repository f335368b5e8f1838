"""The result objects of a split-plot analysis: term tests, error strata, variance components.

Plain frozen dataclasses (no computation), filled by :func:`models.anova.splitplot.fit_split_plot`
and rendered by :mod:`models.anova.format`. ``F``, ``p`` and ``df_den`` are None for a term that
cannot be tested (its stratum has no error df); its ``note`` says why in one line.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from models.anova.result import json_safe

WHOLE_PLOT = "whole plot"
SUBPLOT = "subplot"
#: How the denominator df are chosen (said in every rendering).
DF_METHOD = "containment"
DF_METHOD_TEXT = ("containment: a term constant within every whole plot is tested on the whole-plot error df "
                  "(whole plots minus the rank of the whole-plot part of the fixed effects); any other term on "
                  "the residual df")
TESTS_TEXT = ("Type III Wald F tests (sum-to-zero contrasts, numeric factors coded to -1..+1) from the REML fit "
              "with a random intercept per whole plot")


@dataclass(frozen=True)
class SplitPlotRow:
    """One fixed-effect term: its stratum, role (``block`` or ``term``), df, F and p (None when untestable)."""

    term: str
    stratum: str
    role: str
    df_num: int
    df_den: int | None
    F: float | None
    p: float | None
    note: str | None = None

    @property
    def testable(self) -> bool:
        return self.p is not None


@dataclass(frozen=True)
class ErrorStratum:
    """An error stratum: the whole-plot error (variation of whole plots about the whole-plot model)
    or the residual (variation of runs within their whole plots about the full model)."""

    name: str
    df: int
    sum_sq: float
    mean_sq: float | None


@dataclass(frozen=True)
class VarianceComponent:
    """A REML variance estimate and its share of the total (a negative estimate counts as 0 in the share);
    NaN (null in JSON) when it cannot be estimated."""

    name: str
    variance: float
    share: float


@dataclass(frozen=True)
class Coefficient:
    """A fixed-effect coefficient of the fitted (coded, sum-to-zero) model matrix, with its standard error."""

    name: str
    estimate: float
    se: float


@dataclass(frozen=True)
class WholePlots:
    """How the runs were grouped into whole plots."""

    count: int
    factors: tuple[str, ...]
    source: str
    block: str | None
    sizes: tuple[int, int]  # smallest and largest whole plot (runs)


@dataclass(frozen=True)
class SplitPlotResult:
    """A split-plot ANOVA (see :mod:`models.anova.splitplot`)."""

    response: str
    formula: str
    n: int
    whole_plots: WholePlots
    rows: tuple[SplitPlotRow, ...]
    strata: tuple[ErrorStratum, ...]
    variance_components: tuple[VarianceComponent, ...]
    coefficients: tuple[Coefficient, ...]
    alpha: float
    untestable: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    df_method: str = DF_METHOD

    def row(self, term: str) -> SplitPlotRow:
        for r in self.rows:
            if r.term == term:
                return r
        raise KeyError(term)

    def stratum(self, name: str) -> ErrorStratum:
        for s in self.strata:
            if s.name == name:
                return s
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return json_safe({
            "analysis": "split-plot",
            "response": self.response,
            "formula": self.formula,
            "n": self.n,
            "whole_plots": asdict(self.whole_plots),
            "rows": [dict(asdict(r), testable=r.testable) for r in self.rows],
            "strata": [asdict(s) for s in self.strata],
            "variance_components": [asdict(v) for v in self.variance_components],
            "coefficients": [asdict(c) for c in self.coefficients],
            "df_method": self.df_method,
            "df_method_text": DF_METHOD_TEXT,
            "tests": TESTS_TEXT,
            "alpha": self.alpha,
            "untestable": list(self.untestable),
            "notes": list(self.notes),
        })
