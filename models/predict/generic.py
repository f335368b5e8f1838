"""Seed 002's generic performance model, fitted by differential evolution.

    t = (sum_i a_i * I_i ** p_i) * prod_j E_j ** q_j + C

``I`` are intrinsic inputs (the amount of work: epochs; a categorical input such as the network
contributes one constant term a_level per level, seed 002's "categorical intrinsic parameters"),
``E`` are extrinsic scaling inputs (resources and batch size, which seed 002 also counts as
extrinsic), ``C`` is a fixed overhead. An exponent q_j says how the scalable part of the time
responds to E_j: q = -1 is ideal scaling (doubling E_j halves it), -1 < q < 0 is sublinear, q = 0
no effect, q > 0 means more of E_j slows the job, q < -1 superlinear.

Fitting minimizes the mean absolute error (seed 002, eq. 8; ``loss="mse"`` for squared error) plus an
optional L1 or L2 penalty ``alpha * sum|x|`` or ``alpha * sum x^2`` over every parameter but C
(eq. 10-11; the paper's sum over k = 1..N there is a typo for a sum over parameters), with
scipy.optimize.differential_evolution, the population evaluated in one numpy broadcast
(``vectorized=True``, ``updating="deferred"``; ``vectorized=False`` evaluates one candidate at a
time, for comparison) and an explicit seed. The defaults (popsize 10 x the number of parameters,
tol 1e-3, then scipy's L-BFGS-B polish) reach the same optimum as popsize 15 / tol 1e-6 on our
synthetic tests in a third of the time.

Units: the fit runs on a scaled problem: the target divided by its mean and every numeric input
divided by its geometric mean, so that the seed's bounds (0..1000 for a and C, -5..5 for p and q) do
not depend on units (in raw units a job longer than 1000 s would not fit). Exponents are unit-free;
a and C are reported in the target's units.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy.optimize import OptimizeResult, differential_evolution

from models.errors import FitError, InvalidTableError
from models.predict._base import Predictor
from models.predict.table import HARNESS_FACTORS, is_categorical, is_courier_table

#: Defaults for the harness table: work in I, batch size and resources in E (as seed 002 does).
HARNESS_INTRINSIC: tuple[str, ...] = ("epochs", "model")
HARNESS_EXTRINSIC: tuple[str, ...] = ("batch_size", "nodes", "executors", "executor_cores")
#: Defaults for a seed 004 (Courier) table.
COURIER_INTRINSIC: tuple[str, ...] = ("network",)
COURIER_EXTRINSIC: tuple[str, ...] = ("batch", "cpus", "njobs")


@dataclass(frozen=True)
class PowerLawTerm:
    """One intrinsic term a * I ** p; for a categorical level (or the constant term "1") p is None."""

    column: str
    level: str | None
    a: float
    p: float | None

    def __str__(self) -> str:
        if self.p is None:
            return f"{self.a:.4g}" if self.level is None else f"{self.a:.4g}*[{self.column}=={self.level}]"
        return f"{self.a:.4g}*{self.column}^{self.p:.3f}"


@dataclass(frozen=True)
class PowerLawFit:
    """Fitted parameters (a and C in target units) and how the optimizer got there."""

    terms: tuple[PowerLawTerm, ...]
    exponents: dict[str, float]
    constant: float
    objective: float
    iterations: int
    evaluations: int
    converged: bool
    fit_seconds: float
    dropped: tuple[str, ...] = field(default=())

    def formula(self) -> str:
        """The fitted model as one line."""
        intrinsic = " + ".join(str(t) for t in self.terms)
        extrinsic = " * ".join(f"{c}^{q:.3f}" for c, q in self.exponents.items())
        scaled = f"({intrinsic})" + (f" * {extrinsic}" if extrinsic else "")
        return f"t = {scaled} + {self.constant:.4g}"

    def scaling_notes(self) -> list[str]:
        """One line per extrinsic exponent saying what it means (q = -1 is ideal scaling)."""
        return [describe_exponent(column, q) for column, q in self.exponents.items()]


def describe_exponent(column: str, q: float) -> str:
    """Plain-words reading of an extrinsic exponent q for ``column``."""
    factor = 2.0**q
    if abs(q + 1.0) <= 0.1:
        kind = "near-ideal scaling (q = -1 is ideal)"
    elif q < -1.0:
        kind = "superlinear: faster than ideal (q = -1)"
    elif q < -0.1:
        kind = "sublinear: slower than ideal (q = -1)"
    elif q <= 0.1:
        kind = "little effect (q near 0)"
    else:
        kind = f"more {column} makes the job slower"
    return f"q[{column}] = {q:+.3f}: doubling {column} multiplies the scalable time by {factor:.3f}; {kind}"


class PowerLawModel(Predictor):
    """Seed 002's t = (sum_i a_i I_i^p_i) prod_j E_j^q_j + C, fitted by differential evolution."""

    name = "generic"

    def __init__(
        self,
        target: str = "wall_clock_s",
        intrinsic: Sequence[str] | None = None,
        extrinsic: Sequence[str] | None = None,
        *,
        loss: Literal["mae", "mse"] = "mae",
        penalty: Literal["l1", "l2"] | None = None,
        alpha: float = 0.0,
        coef_bounds: tuple[float, float] = (0.0, 1000.0),
        power_bounds: tuple[float, float] = (-5.0, 5.0),
        popsize: int = 10,
        maxiter: int = 1000,
        tol: float = 1e-3,
        seed: int = 0,
        vectorized: bool = True,
    ) -> None:
        super().__init__(target)
        if loss not in ("mae", "mse"):
            raise InvalidTableError(f"loss must be 'mae' or 'mse', got {loss!r}")
        if penalty not in (None, "l1", "l2") or alpha < 0:
            raise InvalidTableError(f"penalty must be None, 'l1' or 'l2' with alpha >= 0, got {penalty!r}, {alpha}")
        self.intrinsic = None if intrinsic is None else list(intrinsic)
        self.extrinsic = None if extrinsic is None else list(extrinsic)
        self.loss, self.penalty, self.alpha = loss, penalty, alpha
        self.coef_bounds, self.power_bounds = coef_bounds, power_bounds
        self.popsize, self.maxiter, self.tol, self.seed = popsize, maxiter, tol, seed
        self.vectorized = vectorized
        self.fit_: PowerLawFit | None = None

    # -- inputs ---------------------------------------------------------------------------------

    def _roles(self, table: pd.DataFrame) -> tuple[list[str], list[str]]:
        if is_courier_table(table):
            intrinsic, extrinsic = COURIER_INTRINSIC, COURIER_EXTRINSIC
        elif any(c in table.columns for c in HARNESS_FACTORS):
            intrinsic, extrinsic = HARNESS_INTRINSIC, HARNESS_EXTRINSIC
        else:
            intrinsic, extrinsic = (), ()
        chosen_i = self.intrinsic if self.intrinsic is not None else [c for c in intrinsic if c in table.columns]
        chosen_e = self.extrinsic if self.extrinsic is not None else [c for c in extrinsic if c in table.columns]
        if not chosen_i and not chosen_e:
            raise InvalidTableError(
                "no default intrinsic/extrinsic columns for this table: pass intrinsic=[...] and extrinsic=[...]"
            )
        return list(chosen_i), list(chosen_e)

    def default_features(self, table: pd.DataFrame) -> list[str]:
        intrinsic, extrinsic = self._roles(table)
        return intrinsic + [c for c in extrinsic if c not in intrinsic]

    def _fit(self, table: pd.DataFrame, y: np.ndarray) -> None:
        intrinsic, extrinsic = self._roles(table)
        self._numeric_i = [c for c in intrinsic if c in self.features_ and not is_categorical(table[c])]
        self._levels_i = [
            (c, str(level))
            for c in intrinsic
            if c in self.features_ and is_categorical(table[c])
            for level in sorted(table[c].astype(str).unique())
        ]
        self._extrinsic = [c for c in extrinsic if c in self.features_]
        for column in self._extrinsic:
            if is_categorical(table[column]):
                raise InvalidTableError(f"extrinsic column {column!r} is categorical; extrinsic inputs must be numeric")
        self._constant_term = not self._numeric_i and not self._levels_i
        self._check_positive(table)
        self._scales = {
            c: float(np.exp(np.mean(np.log(table[c].to_numpy(dtype=float)))))
            for c in self._numeric_i + self._extrinsic
        }
        self._y_scale = float(np.mean(np.abs(y))) or 1.0
        dropped = tuple(c for c in intrinsic + extrinsic if c not in self.features_)
        self._theta, self.fit_ = self._optimize(table, y / self._y_scale, dropped)

    def _check_positive(self, table: pd.DataFrame) -> None:
        for column in self._numeric_i + self._extrinsic:
            values = table[column].to_numpy(dtype=float)
            if (values <= 0).any():
                raise InvalidTableError(
                    f"column {column!r} has non-positive values; the power-law model needs inputs > 0 "
                    "(use 1/x or x+1 in a derived column)"
                )

    # -- the model ------------------------------------------------------------------------------

    @property
    def _n_terms(self) -> int:
        return len(self._numeric_i) + len(self._levels_i) + int(self._constant_term)

    def _design(self, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """log of scaled numeric intrinsic inputs (nN, n), level indicators (nL, n), log of scaled E (nE, n)."""
        n = len(table)

        def logs(columns: list[str]) -> np.ndarray:
            rows = [np.log(table[c].to_numpy(dtype=float) / self._scales[c]) for c in columns]
            return np.array(rows).reshape(len(columns), n)

        indicators = [(table[c].astype(str).to_numpy() == level).astype(float) for c, level in self._levels_i]
        if self._constant_term:
            indicators.append(np.ones(n))
        return logs(self._numeric_i), np.array(indicators).reshape(-1, n), logs(self._extrinsic)

    def _unpack(self, theta: np.ndarray) -> tuple[np.ndarray, ...]:
        """Split parameters (rows of ``theta``) into a_numeric, a_levels (incl. the constant term), p, q, C."""
        n_num, n_lvl = len(self._numeric_i), self._n_terms - len(self._numeric_i)
        ends = np.cumsum([n_num, n_lvl, n_num, len(self._extrinsic)])
        return theta[:ends[0]], theta[ends[0]:ends[1]], theta[ends[1]:ends[2]], theta[ends[2]:ends[3]], theta[-1]

    def _evaluate(self, theta: np.ndarray, design: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        """Scaled predictions for a population ``theta`` of shape (n_params, S): returns (S, n)."""
        log_i, indicators, log_e = design
        a_num, a_lvl, p, q, c = self._unpack(theta)
        work = np.einsum("is,isn->sn", a_num, np.exp(p[:, :, None] * log_i[:, None, :])) + a_lvl.T @ indicators
        return work * np.exp(q.T @ log_e) + c[:, None]

    def _optimize(
        self, table: pd.DataFrame, y: np.ndarray, dropped: tuple[str, ...]
    ) -> tuple[np.ndarray, PowerLawFit]:
        design = self._design(table)
        n_num, n_e = len(self._numeric_i), len(self._extrinsic)
        bounds = (
            [self.coef_bounds] * self._n_terms + [self.power_bounds] * (n_num + n_e) + [self.coef_bounds]
        )

        def objective(theta: np.ndarray) -> np.ndarray | float:
            population = theta.reshape(len(bounds), -1)
            resid = self._evaluate(population, design) - y[None, :]
            cost = np.mean(np.abs(resid) if self.loss == "mae" else resid**2, axis=1)
            if self.penalty == "l1":
                cost = cost + self.alpha * np.sum(np.abs(population[:-1]), axis=0)
            elif self.penalty == "l2":
                cost = cost + self.alpha * np.sum(population[:-1] ** 2, axis=0)
            cost = np.where(np.isfinite(cost), cost, np.inf)
            return cost if theta.ndim == 2 else float(cost[0])

        start = time.perf_counter()
        result = differential_evolution(
            objective, bounds, popsize=self.popsize, maxiter=self.maxiter, tol=self.tol,
            rng=self.seed, vectorized=self.vectorized, updating="deferred" if self.vectorized else "immediate",
            polish=True,
        )
        elapsed = time.perf_counter() - start
        if not np.isfinite(result.fun):
            raise FitError(f"differential evolution found no finite fit ({result.message}); check the inputs' ranges")
        return result.x, self._report(result, elapsed, dropped)

    def _report(self, result: OptimizeResult, elapsed: float, dropped: tuple[str, ...]) -> PowerLawFit:
        a_num, a_lvl, p, q, c = self._unpack(result.x)
        unit = self._y_scale / math.prod(self._scales[col] ** qj for col, qj in zip(self._extrinsic, q))
        terms = [
            PowerLawTerm(col, None, float(a * unit / self._scales[col] ** pi), float(pi))
            for col, a, pi in zip(self._numeric_i, a_num, p)
        ]
        terms += [PowerLawTerm(col, level, float(a * unit), None) for (col, level), a in zip(self._levels_i, a_lvl)]
        if self._constant_term:
            terms.append(PowerLawTerm("1", None, float(a_lvl[-1] * unit), None))
        return PowerLawFit(
            terms=tuple(terms),
            exponents={col: float(qj) for col, qj in zip(self._extrinsic, q)},
            constant=float(c * self._y_scale),
            objective=float(result.fun),
            iterations=int(result.nit),
            evaluations=int(result.nfev),
            converged=bool(result.success),
            fit_seconds=elapsed,
            dropped=dropped,
        )

    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        self._check_positive(configs)
        return self._evaluate(self._theta[:, None], self._design(configs))[0] * self._y_scale
