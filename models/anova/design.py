"""The model matrix of an ANOVA: factor coding, patsy design matrices and the one rank loop.

Numeric factors enter as numbers, text factors as categories (``C(name)``). *Coded* units map a
numeric factor to ``(x - centre) / half-range`` (two levels become -1/+1). :func:`estimable_terms`
is the only place that decides which terms of a model matrix can be estimated together: the
default model (:mod:`models.anova.terms`), the check of user terms (:mod:`models.anova.fit`) and
the choice of factors for a small campaign (:mod:`models.anova.analysis`) all use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.errors import FormulaError

#: The analysed (possibly transformed) response's column in ``AnovaResult.data``.
RESPONSE_COLUMN = "__y__"
INTERCEPT = "Intercept"


def is_numeric(series: pd.Series) -> bool:
    """True for a numeric, non-boolean column (analysed as a number, not as categories)."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def two_level_numeric(frame: pd.DataFrame, factors: Iterable[str]) -> tuple[str, ...]:
    """Factors that are numeric with exactly two distinct values."""
    return tuple(f for f in factors if is_numeric(frame[f]) and frame[f].nunique() == 2)


def code_factors(frame: pd.DataFrame, factors: Iterable[str]) -> pd.DataFrame:
    """Copy with each numeric factor mapped to (x - centre) / half-range (two levels -> -1/+1)."""
    out = frame.copy()
    for f in factors:
        if not is_numeric(out[f]):
            continue
        x = out[f].astype(float)
        lo, hi = float(x.min()), float(x.max())
        out[f] = (x - (lo + hi) / 2) / ((hi - lo) / 2) if hi > lo else x - lo
    return out


def term_parts(term: str) -> tuple[str, ...]:
    """The factors of an interaction term: ``"a:b"`` -> ``("a", "b")``."""
    return tuple(p.strip() for p in term.split(":"))


def factor_term(factor: str, frame: pd.DataFrame) -> str:
    """A factor as a model term: its name if numeric, ``C(name)`` if categorical."""
    return factor if is_numeric(frame[factor]) else f"C({factor})"


@dataclass(frozen=True, eq=False)
class ModelMatrix:
    """A model matrix and the columns of each term (patsy's ``term_name_slices``)."""

    x: np.ndarray
    slices: Mapping[str, slice]

    def columns(self, term: str) -> list[int]:
        s = self.slices[term]
        return list(range(s.start, s.stop))


def model_matrix(rhs: str, frame: pd.DataFrame) -> ModelMatrix:
    """The patsy model matrix of ``rhs`` on ``frame``; a bad formula is a :class:`FormulaError`."""
    import patsy

    try:
        dm = patsy.dmatrix(rhs, frame, return_type="dataframe", NA_action="raise")
    except patsy.PatsyError as exc:
        raise FormulaError(f"terms {rhs!r}: {exc.message}") from None
    return ModelMatrix(dm.to_numpy(dtype=float), dict(dm.design_info.term_name_slices))


def rank(x: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(x)) if x.size else 0


@dataclass(frozen=True)
class Estimability:
    """Terms kept (estimable together, in the order tried) and each other term with the kept
    terms its first column is a combination of (its aliases; empty means the intercept)."""

    kept: tuple[str, ...]
    aliased: tuple[tuple[str, tuple[str, ...]], ...]


def estimable_terms(matrix: ModelMatrix, order: Sequence[str]) -> Estimability:
    """The one rank loop: walk ``order``, keep each term whose columns add full rank to those kept.

    A term that does not is aliased; its partners are the kept terms (besides the intercept)
    needed to reproduce its first column by least squares (|coefficient| > 1e-8 of the largest).
    """
    keep_cols: list[int] = []
    kept: dict[str, list[int]] = {}
    aliased: list[tuple[str, tuple[str, ...]]] = []
    for term in order:
        cols = matrix.columns(term)
        if rank(matrix.x[:, keep_cols + cols]) == len(keep_cols) + len(cols):
            kept[term] = list(range(len(keep_cols), len(keep_cols) + len(cols)))
            keep_cols += cols
            continue
        aliased.append((term, _partners(matrix.x[:, keep_cols], kept, matrix.x[:, cols[0]])))
    return Estimability(tuple(kept), tuple(aliased))


def _partners(x_kept: np.ndarray, kept: Mapping[str, list[int]], col: np.ndarray) -> tuple[str, ...]:
    if x_kept.size == 0:
        return ()
    coef, *_ = np.linalg.lstsq(x_kept, col, rcond=None)
    scale = float(np.abs(coef).max()) or 1.0
    return tuple(t for t, c in kept.items() if t != INTERCEPT and np.abs(coef[c]).max() > 1e-8 * scale)
