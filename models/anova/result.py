"""The result objects of an ANOVA: rows, effects, Lenth's PSE, the model summary and AnovaResult.

Plain frozen dataclasses (no computation beyond reading their own fields), so every other module
of the package, :mod:`models.diagnostics` and :mod:`models.plots` can depend on them without
depending on the fit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from models.anova.design import RESPONSE_COLUMN, ModelMatrix
from models.anova.shares import LmgShares
from models.errors import AnalysisOptionError
from sparkdl.numbers import json_safe  # noqa: F401 - models.anova.json_safe, as before

RESIDUAL = "Residual"


@dataclass(frozen=True)
class AnovaRow:
    """One line of the ANOVA table; ``effect``/``coefficient`` are in coded units or None."""

    term: str
    df: float
    sum_sq: float
    mean_sq: float
    F: float
    p: float
    pct_variation: float
    effect: float | None = None
    coefficient: float | None = None


@dataclass(frozen=True)
class Effect:
    """A coded-unit estimate: coefficient, effect = 2 x coefficient, the coefficient's SE, t = coef / SE."""

    term: str
    coefficient: float
    effect: float
    se: float
    t: float


@dataclass(frozen=True)
class LenthResult:
    """Lenth (1989): PSE and margins of error of the effects (in effect units)."""

    pse: float
    df: float
    margin_of_error: float
    simultaneous_margin_of_error: float
    alpha: float
    active: tuple[str, ...]


@dataclass(frozen=True)
class Alias:
    """A candidate term left out of the default model because it is aliased with kept terms."""

    term: str
    aliased_with: tuple[str, ...]


@dataclass(frozen=True)
class DefaultTerms:
    """The default right-hand side and the interactions it had to leave out."""

    rhs: str
    terms: tuple[str, ...]
    aliased: tuple[Alias, ...]


@dataclass(frozen=True)
class StandardizedEffects:
    """Effects divided by their standard error (``basis="t"``) or by Lenth's PSE."""

    terms: tuple[str, ...]
    values: tuple[float, ...]
    critical: float
    basis: str
    alpha: float


@dataclass(frozen=True)
class ModelSummary:
    """Fit-level figures of an ANOVA model."""

    response: str
    formula: str
    terms: str
    typ: int
    n: int
    df_model: float
    df_resid: float
    r_squared: float
    adj_r_squared: float
    pred_r_squared: float
    press: float
    root_mse: float
    transform: str | None
    boxcox_lambda: float | None
    robust: str | None
    coding: str
    design_points: int
    replicated: bool
    aliased: tuple[Alias, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class AnovaResult:
    """ANOVA rows, model summary, coded effects and the underlying statsmodels fit.

    ``coded`` is the model matrix of the fitted terms with numeric factors in coded units (the
    matrix the effects are estimated on), built once by the fit; diagnostics and plots reuse it.
    """

    rows: tuple[AnovaRow, ...]
    summary: ModelSummary
    effects: tuple[Effect, ...]
    lenth: LenthResult | None
    factors: tuple[str, ...]
    response: str
    alpha: float
    fit: Any = field(repr=False)
    data: pd.DataFrame = field(repr=False)
    coded: ModelMatrix = field(repr=False)
    shares: LmgShares | None = None

    @property
    def residuals(self) -> np.ndarray:
        return np.asarray(self.fit.resid, dtype=float)

    @property
    def fitted(self) -> np.ndarray:
        return np.asarray(self.fit.fittedvalues, dtype=float)

    @property
    def y(self) -> np.ndarray:
        """The response as analysed (after any transform)."""
        return self.data[RESPONSE_COLUMN].to_numpy(dtype=float)

    def row(self, term: str) -> AnovaRow:
        for r in self.rows:
            if r.term == term:
                return r
        raise KeyError(term)

    def table(self) -> pd.DataFrame:
        """The rows as a DataFrame indexed by term."""
        return pd.DataFrame([asdict(r) for r in self.rows]).set_index("term")

    def standardized_effects(self) -> StandardizedEffects:
        """t = coefficient / SE when there are residual df, else effect / Lenth's PSE."""
        if not self.effects:
            raise AnalysisOptionError(
                "no two-level numeric terms: standardized effects need factors with two numeric levels"
            )
        terms = tuple(e.term for e in self.effects)
        if self.summary.df_resid > 0:
            crit = float(stats.t.ppf(1 - self.alpha / 2, self.summary.df_resid))
            return StandardizedEffects(terms, tuple(e.t for e in self.effects), crit, "t", self.alpha)
        if self.lenth is None or not self.lenth.pse > 0:
            raise AnalysisOptionError("no residual df and no usable Lenth PSE: standardized effects undefined")
        vals = tuple(e.effect / self.lenth.pse for e in self.effects)
        return StandardizedEffects(
            terms, vals, self.lenth.margin_of_error / self.lenth.pse, "Lenth", self.alpha
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": [json_safe(asdict(r)) for r in self.rows],
            "summary": json_safe(asdict(self.summary)),
            "lenth": json_safe(asdict(self.lenth)) if self.lenth else None,
            "shares": self.shares.to_dict() if self.shares else None,
        }
