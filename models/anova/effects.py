"""Effects in coded units and Lenth's pseudo standard error.

For terms made only of two-level numeric factors: the coefficient in coded (-1/+1) units and
the effect (= 2 x coefficient, the change in mean response from the low to the high level),
with the coefficient's ordinary or HC3 standard error. Lenth's PSE judges the effects of an
unreplicated design.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Collection, Sequence

import numpy as np
from statsmodels.regression.linear_model import OLS
from scipy import stats

from models.anova.design import INTERCEPT, ModelMatrix, term_parts
from models.anova.result import Effect, LenthResult
from models.errors import AnalysisOptionError


def coded_effects(coded: ModelMatrix, y: np.ndarray, two_level: Collection[str],
                  robust: str | None) -> tuple[Effect, ...]:
    """One :class:`Effect` per single-column term whose factors all have two numeric levels."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        fit = OLS(y, coded.x).fit()
        cov = np.asarray(fit.cov_HC3 if robust == "hc3" else fit.cov_params(), dtype=float)
    params = np.asarray(fit.params, dtype=float)
    out = []
    for term, s in coded.slices.items():
        if term == INTERCEPT or s.stop - s.start != 1:
            continue
        if not all(p in two_level for p in term_parts(term)):
            continue
        coef = float(params[s.start])
        se = float(np.sqrt(cov[s.start, s.start])) if fit.df_resid > 0 else math.nan
        t = coef / se if se > 0 else math.nan
        out.append(Effect(term, coef, 2 * coef, se, t))
    return tuple(out)


def lenth(effects: Sequence[float], terms: Sequence[str] | None = None, alpha: float = 0.05) -> LenthResult:
    """Lenth's PSE = 1.5 * median(|c| : |c| < 2.5 s0), s0 = 1.5 * median|c|, on d = m/3 df.

    The margin of error is t(1 - alpha/2, d) * PSE; the simultaneous margin uses
    t(gamma, d) with gamma = (1 + (1 - alpha)^(1/m)) / 2.
    """
    c = np.abs(np.asarray(effects, dtype=float))
    m = c.size
    if m < 2:
        raise AnalysisOptionError("Lenth's PSE needs two or more effects")
    s0 = 1.5 * float(np.median(c))
    trimmed = c[c < 2.5 * s0]
    pse = 1.5 * float(np.median(trimmed)) if trimmed.size else math.nan
    d = m / 3.0
    me = float(stats.t.ppf(1 - alpha / 2, d)) * pse
    gamma = (1 + (1 - alpha) ** (1 / m)) / 2
    sme = float(stats.t.ppf(gamma, d)) * pse
    names = tuple(terms) if terms is not None else tuple(str(i) for i in range(m))
    active = tuple(n for n, v in zip(names, c) if v > me)
    return LenthResult(pse, d, me, sme, alpha, active)
