"""Kavarakuntla 2024's generic performance model, fitted by differential evolution.

    t = (sum_i a_i * I_i ** p_i) * prod_j E_j ** q_j + C

``I`` are intrinsic inputs (the amount of work: epochs; a categorical input such as the network
contributes one constant term a_level per level, Kavarakuntla 2024's "categorical intrinsic parameters"),
``E`` are extrinsic scaling inputs (resources and batch size, which Kavarakuntla 2024 also counts as
extrinsic), ``C`` is a fixed overhead. An exponent q_j says how the scalable part of the time
responds to E_j: q = -1 is ideal scaling (doubling E_j halves it), -1 < q < 0 is sublinear, q = 0
no effect, q > 0 means more of E_j slows the job, q < -1 superlinear.

Fitting minimizes the mean absolute error (Kavarakuntla 2024, eq. 8; ``loss="mse"`` for squared error) plus an
optional L1 or L2 penalty ``alpha * sum|x|`` or ``alpha * sum x^2`` over every parameter but C
(eq. 10-11; the paper's sum over k = 1..N there is a typo for a sum over parameters), with
scipy.optimize.differential_evolution, the population evaluated in one numpy broadcast
(``vectorized=True``, ``updating="deferred"``; ``vectorized=False`` evaluates one candidate at a
time, for comparison) and an explicit seed. The defaults (popsize 10 x the number of parameters,
tol 1e-3, then scipy's L-BFGS-B polish) reach the same optimum as popsize 15 / tol 1e-6 on our
synthetic tests in a third of the time.

Exponent search. The default, ``search="normal-form"``, follows Extra-P's performance-model normal
form (Calotoiu et al., SC 2013): each input's exponent comes from a small fixed set and may carry a
log factor, x^e * log2(x)^l with e in {i/4 : i = 0..12} for intrinsic inputs, e in
{+-i/4 : i = 0..12} for extrinsic ones (resources speed a job up: negative exponents are needed,
where Extra-P models costs that grow), and l in {0, 1, 2} (l > 0 only for a column whose training
values are all > 1, since log2(1) = 0 would zero the whole product). With the exponents fixed the
model is linear in a and C, fitted by non-negative least squares; the exponents are chosen one input
at a time (coordinate descent, repeated until none changes) by the K-fold cross-validated mean
squared error. ``search="de"`` keeps Kavarakuntla 2024's free exponents in [-5, 5], fitted with the
coefficients by differential evolution (below).

A fit whose exponent sits at the end of its range, whose coefficient sits at its upper bound, that
did not converge, or whose scalable terms are all zero (a constant) is degenerate:
``PowerLawFit.problems`` says why, and its plain-language reading is withheld.

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
from scipy.optimize import OptimizeResult, differential_evolution, nnls
from sklearn.model_selection import KFold

from models.errors import FitError, InvalidTableError, NotIdentifiedError
from models.predict._base import Predictor
from models.predict.table import HARNESS_FACTORS, is_categorical, is_courier_table

#: Defaults for the harness table: work in I, batch size and resources in E (as Kavarakuntla 2024 does).
HARNESS_INTRINSIC: tuple[str, ...] = ("epochs", "model")
HARNESS_EXTRINSIC: tuple[str, ...] = ("batch_size", "nodes", "executors", "executor_cores")
#: Defaults for an Albo Martínez 2021 (Courier) table.
COURIER_INTRINSIC: tuple[str, ...] = ("network",)
COURIER_EXTRINSIC: tuple[str, ...] = ("batch", "cpus", "njobs")
#: Extra-P's normal form: exponents i/4 (i = 0..12) and log2 exponents 0, 1, 2.
INTRINSIC_EXPONENTS: tuple[float, ...] = tuple(i / 4 for i in range(13))
EXTRINSIC_EXPONENTS: tuple[float, ...] = tuple(sorted({s * i / 4 for i in range(13) for s in (1, -1)}))
LOG_EXPONENTS: tuple[int, ...] = (0, 1, 2)
#: Relative distance to a DE bound (of the bound's range) that counts as "on the bound".
BOUND_TOLERANCE = 0.01


@dataclass(frozen=True)
class PowerLawTerm:
    """One intrinsic term a * I ** p; for a categorical level (or the constant term "1") p is None."""

    column: str
    level: str | None
    a: float
    p: float | None
    log: int = 0  # the power of log2(column) multiplying the term (normal form)

    def __str__(self) -> str:
        if self.p is None:
            return f"{self.a:.4g}" if self.level is None else f"{self.a:.4g}*[{self.column}=={self.level}]"
        return f"{self.a:.4g}*{power(self.column, self.p, self.log)}"


def power(column: str, exponent: float, log: int = 0) -> str:
    """``column^e`` with ``*log2(column)^l`` when l > 0."""
    text = f"{column}^{exponent:.3f}"
    return text + (f"*log2({column})^{log}" if log else "")


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
    search: str = "de"
    #: log2 exponents of the extrinsic inputs that have one (normal form).
    logs: dict[str, int] = field(default_factory=dict)
    #: Why the fit is degenerate (parameters on their bounds, no convergence, a constant): empty when it is not.
    problems: tuple[str, ...] = field(default=())

    @property
    def degenerate(self) -> bool:
        return bool(self.problems)

    def formula(self) -> str:
        """The fitted model as one line."""
        intrinsic = " + ".join(str(t) for t in self.terms)
        extrinsic = " * ".join(power(c, q, self.logs.get(c, 0)) for c, q in self.exponents.items())
        scaled = f"({intrinsic})" + (f" * {extrinsic}" if extrinsic else "")
        return f"t = {scaled} + {self.constant:.4g}"

    def scaling_notes(self) -> list[str]:
        """One line per extrinsic exponent saying what it means (q = -1 is ideal scaling); for a degenerate
        fit one line saying why the reading is withheld."""
        if self.degenerate:
            return [f"reading withheld, degenerate fit: {'; '.join(self.problems)}"]
        notes = []
        for column, q in self.exponents.items():
            note = describe_exponent(column, q)
            if self.logs.get(column):
                note += f" (times log2({column})^{self.logs[column]}: the factor grows a little more with {column})"
            notes.append(note)
        return notes


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
    """Kavarakuntla 2024's t = (sum_i a_i I_i^p_i) prod_j E_j^q_j + C, fitted by differential evolution."""

    name = "generic"

    def __init__(
        self,
        target: str = "wall_clock_s",
        intrinsic: Sequence[str] | None = None,
        extrinsic: Sequence[str] | None = None,
        *,
        search: Literal["normal-form", "de"] = "normal-form",
        cv_folds: int = 5,
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
        if search not in ("normal-form", "de"):
            raise InvalidTableError(f"search must be 'normal-form' or 'de', got {search!r}")
        if search == "normal-form" and penalty is not None:
            raise InvalidTableError("a penalty applies to search='de' only; the normal form picks exponents by "
                                    "cross-validation")
        if cv_folds < 2:
            raise InvalidTableError(f"cv_folds must be >= 2, got {cv_folds}")
        self.search, self.cv_folds = search, cv_folds
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
        self._exponent_levels = {c: np.unique(table[c].to_numpy(dtype=float)) for c in self._numeric_i + self._extrinsic}
        self._scales = {
            c: float(np.exp(np.mean(np.log(table[c].to_numpy(dtype=float)))))
            for c in self._numeric_i + self._extrinsic
        }
        self._y_scale = float(np.mean(np.abs(y))) or 1.0
        self._log_i = np.zeros(len(self._numeric_i), dtype=int)
        self._log_e = np.zeros(len(self._extrinsic), dtype=int)
        dropped = tuple(c for c in intrinsic + extrinsic if c not in self.features_)
        if self.search == "de":
            self._theta, self.fit_ = self._optimize(table, y / self._y_scale, dropped)
        else:
            self._theta, self.fit_ = self._normal_form(table, y / self._y_scale, dropped)

    def _check_identified(self, configs: pd.DataFrame) -> None:
        """An input whose exponent is free needs 3 levels in the training rows to say anything beyond them: with 2,
        its coefficient and exponent are confounded (a x^p through two points is any p), and the time at a third
        value is whatever the exponent search happened to pick."""
        for column, levels in self._exponent_levels.items():
            values = configs[column].to_numpy(dtype=float)
            outside = (values < levels.min()) | (values > levels.max())
            if len(levels) < 3 and outside.any():
                shown = ", ".join(f"{v:g}" for v in levels)
                raise NotIdentifiedError(
                    f"not identified at {column} = {values[outside][0]:g}: the exponent of {column} and its "
                    f"coefficient are confounded with {len(levels)} levels in the training rows ({shown}); runs at "
                    f"{3 - len(levels)} more level{'s' if len(levels) == 1 else ''} identify it")

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

    def _design(self, table: pd.DataFrame) -> tuple[np.ndarray, ...]:
        """log of scaled numeric intrinsic inputs (nN, n), level indicators (nL, n), log of scaled E (nE, n),
        then the log factors log2(I)^l (nN, n) and log2(E)^l (nE, n) of the raw inputs (ones when l = 0)."""
        n = len(table)

        def logs(columns: list[str]) -> np.ndarray:
            rows = [np.log(table[c].to_numpy(dtype=float) / self._scales[c]) for c in columns]
            return np.array(rows).reshape(len(columns), n)

        def log_factors(columns: list[str], powers: np.ndarray) -> np.ndarray:
            rows = [np.log2(table[c].to_numpy(dtype=float)) ** int(l) if l else np.ones(n) for c, l in zip(columns, powers)]
            return np.array(rows).reshape(len(columns), n)

        indicators = [(table[c].astype(str).to_numpy() == level).astype(float) for c, level in self._levels_i]
        if self._constant_term:
            indicators.append(np.ones(n))
        return (logs(self._numeric_i), np.array(indicators).reshape(-1, n), logs(self._extrinsic),
                log_factors(self._numeric_i, self._log_i), log_factors(self._extrinsic, self._log_e))

    def _unpack(self, theta: np.ndarray) -> tuple[np.ndarray, ...]:
        """Split parameters (rows of ``theta``) into a_numeric, a_levels (incl. the constant term), p, q, C."""
        n_num, n_lvl = len(self._numeric_i), self._n_terms - len(self._numeric_i)
        ends = np.cumsum([n_num, n_lvl, n_num, len(self._extrinsic)])
        return theta[:ends[0]], theta[ends[0]:ends[1]], theta[ends[1]:ends[2]], theta[ends[2]:ends[3]], theta[-1]

    def _evaluate(self, theta: np.ndarray, design: tuple[np.ndarray, ...]) -> np.ndarray:
        """Scaled predictions for a population ``theta`` of shape (n_params, S): returns (S, n)."""
        log_i, indicators, log_e, log2_i, log2_e = design
        a_num, a_lvl, p, q, c = self._unpack(theta)
        powers = np.exp(p[:, :, None] * log_i[:, None, :]) * log2_i[:, None, :]
        work = np.einsum("is,isn->sn", a_num, powers) + a_lvl.T @ indicators
        return work * np.exp(q.T @ log_e) * np.prod(log2_e, axis=0) + c[:, None]

    # -- the normal form (Extra-P) ---------------------------------------------------------------

    def _candidates(self, table: pd.DataFrame, column: str, exponents: Sequence[float]) -> list[tuple[float, int]]:
        """(exponent, log power) pairs for ``column``, simplest first; logs only when every value is > 1."""
        logs = LOG_EXPONENTS if float(table[column].min()) > 1 else (0,)
        pairs = [(float(e), int(l)) for e in exponents for l in logs]
        return sorted(pairs, key=lambda el: (el[1], abs(el[0]), el[0] < 0))

    def _normal_form(self, table: pd.DataFrame, y: np.ndarray,
                     dropped: tuple[str, ...]) -> tuple[np.ndarray, PowerLawFit]:
        """Exponents from the fixed sets by cross-validated coordinate descent; a and C by NNLS."""
        start = time.perf_counter()
        n = len(table)
        columns = self._numeric_i + self._extrinsic
        sets = [INTRINSIC_EXPONENTS] * len(self._numeric_i) + [EXTRINSIC_EXPONENTS] * len(self._extrinsic)
        candidates = [self._candidates(table, c, s) for c, s in zip(columns, sets)]
        scaled_log = {c: np.log(table[c].to_numpy(dtype=float) / self._scales[c]) for c in columns}
        raw_log2 = {c: np.log2(table[c].to_numpy(dtype=float)) for c in columns}
        indicators = self._design(table)[1]

        def factor(column: str, choice: tuple[float, int]) -> np.ndarray:
            e, l = choice
            return np.exp(e * scaled_log[column]) * (raw_log2[column] ** l if l else 1.0)

        def basis(choice: list[tuple[float, int]]) -> np.ndarray:
            shared = np.ones(n)
            for column, pick in zip(self._extrinsic, choice[len(self._numeric_i):]):
                shared = shared * factor(column, pick)
            work = [factor(c, pick) * shared for c, pick in zip(self._numeric_i, choice)]
            work += [row * shared for row in indicators]
            return np.column_stack(work + [np.ones(n)])

        folds = min(self.cv_folds, n)
        splits = list(KFold(n_splits=folds, shuffle=True, random_state=self.seed).split(np.arange(n))) if folds >= 2 else []
        evaluations = 0

        def cv_error(choice: list[tuple[float, int]]) -> float:
            nonlocal evaluations
            evaluations += 1
            x = basis(choice)
            if not np.isfinite(x).all():
                return np.inf
            sse = 0.0
            for rest, held in splits:
                coef = nnls(x[rest], y[rest], maxiter=50 * x.shape[1])[0]
                sse += float(np.sum((x[held] @ coef - y[held]) ** 2))
            return sse / n

        # Extra-P's start for several parameters: the best exponent of each input alone (the others at 0),
        # all together; then coordinate descent from there.
        flat = [(0.0, 0)] * len(columns)
        alone = [min(options, key=lambda o, j=j: cv_error(flat[:j] + [o] + flat[j + 1:]))
                 for j, options in enumerate(candidates)]
        choice, best = min(((c, cv_error(c)) for c in (alone, flat)), key=lambda cb: cb[1])
        sweeps = 0
        for sweeps in range(1, 21):
            changed = False
            for j, options in enumerate(candidates):
                for option in options:
                    if option == choice[j]:
                        continue
                    trial = choice[:j] + [option] + choice[j + 1:]
                    error = cv_error(trial)
                    if error < best * (1 - 1e-9):
                        choice, best, changed = trial, error, True
            if not changed:
                break
        x = basis(choice)
        coef, _ = nnls(x, y, maxiter=50 * x.shape[1])
        n_num = len(self._numeric_i)
        p = np.array([e for e, _ in choice[:n_num]])
        q = np.array([e for e, _ in choice[n_num:]])
        self._log_i = np.array([l for _, l in choice[:n_num]], dtype=int)
        self._log_e = np.array([l for _, l in choice[n_num:]], dtype=int)
        theta = np.concatenate([coef[:n_num], coef[n_num:-1], p, q, coef[-1:]])
        elapsed = time.perf_counter() - start
        result = OptimizeResult(x=theta, fun=float(np.mean((x @ coef - y) ** 2)), nit=sweeps, nfev=evaluations,
                                success=True, message="")
        problems = [f"{name} = {e:+.2f} is at the end of the exponent set (|e| <= {max(s):g})"
                    for name, (e, _), s in zip(self._parameter_names(), choice, sets) if abs(e) >= max(s)]
        return theta, self._report(result, elapsed, dropped, tuple(problems))

    def _parameter_names(self) -> list[str]:
        return [f"p[{c}]" for c in self._numeric_i] + [f"q[{c}]" for c in self._extrinsic]

    def _de_problems(self, theta: np.ndarray) -> list[str]:
        """Parameters of a DE fit at (within BOUND_TOLERANCE of) their bounds: exponents at either end,
        coefficients at the upper end."""
        a_num, a_lvl, p, q, c = self._unpack(theta)
        lo, hi = self.power_bounds
        span = (hi - lo) * BOUND_TOLERANCE
        problems = [f"{name} = {e:+.3f} is at its bound [{lo:g}, {hi:g}]"
                    for name, e in zip(self._parameter_names(), np.concatenate([p, q]))
                    if e <= lo + span or e >= hi - span]
        top = self.coef_bounds[1] * (1 - BOUND_TOLERANCE)
        coefficients = np.concatenate([a_num, a_lvl, [c]])
        if (coefficients >= top).any():
            problems.append(f"a coefficient is at its upper bound {self.coef_bounds[1]:g} (scaled units)")
        return problems

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
        problems = self._de_problems(result.x)
        if not result.success:
            problems.append(f"differential evolution did not converge ({result.message})")
        return result.x, self._report(result, elapsed, dropped, tuple(problems))

    def _report(self, result: OptimizeResult, elapsed: float, dropped: tuple[str, ...],
                problems: tuple[str, ...] = ()) -> PowerLawFit:
        a_num, a_lvl, p, q, c = self._unpack(result.x)
        if self._n_terms and not (np.concatenate([a_num, a_lvl]) > 0).any():
            problems = (*problems, "every scalable coefficient is 0: the fit is the constant C")
        unit = self._y_scale / math.prod(self._scales[col] ** qj for col, qj in zip(self._extrinsic, q))
        terms = [
            PowerLawTerm(col, None, float(a * unit / self._scales[col] ** pi), float(pi), int(li))
            for col, a, pi, li in zip(self._numeric_i, a_num, p, self._log_i)
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
            search=self.search,
            logs={col: int(l) for col, l in zip(self._extrinsic, self._log_e) if l},
            problems=tuple(problems),
        )

    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        self._check_positive(configs)
        self._check_identified(configs)
        return self._evaluate(self._theta[:, None], self._design(configs))[0] * self._y_scale
