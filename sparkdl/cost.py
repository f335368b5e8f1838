"""Cost of a training job from its wall clock T (seconds) and accuracy A (a fraction in [0, 1]).

Built-in costs (names accepted by :func:`parse_cost`):

``time_per_squared_percent`` (the default of every command)
    ``T / (A*100)**2``: seconds per squared accuracy percent, the cost of Marinos 2021.
``time_per_squared_accuracy``
    ``T / A**2``: the same ranking on a scale 10^4 larger, the "normalized time" of
    Marinos 2021's learning-rate search.
``time``
    ``T``.
``tta:TARGET``
    Time to accuracy, per job: ``T`` when the job's final accuracy ``A >= TARGET``, else NaN
    (the job never reached the target, so its time to accuracy is unknown: right-censored).
    With per-epoch data use :func:`epoch_time_to_accuracy`, which returns the wall clock of the
    first epoch whose validation accuracy reaches the target.

Anything else is read as an arithmetic expression of ``T`` and ``A`` (e.g. ``T / A**4``),
parsed with :mod:`ast` and evaluated by a whitelist interpreter: numbers, the names ``T`` and
``A``, ``+ - * / **``, unary minus and plus, parentheses and the functions ``log, log10, log2,
exp, sqrt, abs, min, max``. No attribute access, subscripts, other names or calls are accepted.

Zero accuracy: ``T / 0`` evaluates to ``inf`` (and ``0 / 0`` to NaN); a cost is never an
exception for one bad job. :mod:`models.results` drops rows whose cost is not finite and counts
them, so a diverged job (A = 0) is reported, not silently averaged in.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sparkdl.errors import CostError

ArrayLike = float | Sequence[float] | np.ndarray
_Fn = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: The one default cost: the report, the ANOVA, MLflow and the optimizers (lr, pareto, search) all use it.
DEFAULT_COST = "time_per_squared_percent"

#: Former names, refused with the current one.
_RENAMED = {"pct2": "time_per_squared_percent", "acc2": "time_per_squared_accuracy"}


@dataclass(frozen=True)
class CostFunction:
    """A named cost of (T, A); call it with arrays (or scalars) of wall clock and accuracy."""

    name: str
    formula: str
    fn: _Fn

    def __call__(self, T: ArrayLike, A: ArrayLike) -> np.ndarray:
        t = np.asarray(T, dtype=float)
        a = np.asarray(A, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = self.fn(t, a)
        return np.asarray(out, dtype=float)


def _per_squared_percent(t: np.ndarray, a: np.ndarray) -> np.ndarray:
    return t / (a * 100.0) ** 2


def _per_squared_accuracy(t: np.ndarray, a: np.ndarray) -> np.ndarray:
    return t / a**2


def _time(t: np.ndarray, a: np.ndarray) -> np.ndarray:
    return t + 0.0 * a


def time_per_squared_percent() -> CostFunction:
    """``T / (A*100)^2``: seconds per squared accuracy percent (the default cost)."""
    return CostFunction("time_per_squared_percent", "T / (A*100)**2", _per_squared_percent)


def time_per_squared_accuracy() -> CostFunction:
    """``T / A^2``: seconds per squared accuracy fraction."""
    return CostFunction("time_per_squared_accuracy", "T / A**2", _per_squared_accuracy)


def plain_time() -> CostFunction:
    """Wall clock alone."""
    return CostFunction("time", "T", _time)


def time_to_accuracy(target: float) -> CostFunction:
    """Per job: ``T`` when the final accuracy reaches ``target``, else NaN (censored)."""
    if not 0.0 < target <= 1.0:
        raise CostError(f"tta target {target!r} is not a fraction in (0, 1]; write e.g. tta:0.98")

    def fn(t: np.ndarray, a: np.ndarray) -> np.ndarray:
        return np.where(a >= target, t, np.nan)

    return CostFunction(f"tta:{target:g}", f"T if A >= {target:g} else NaN", fn)


def epoch_time_to_accuracy(wall_clock: ArrayLike, accuracy: ArrayLike, target: float) -> float:
    """Wall clock of the first epoch whose validation accuracy is >= ``target``; NaN if none.

    ``wall_clock[i]`` is the cumulative wall clock at the end of epoch ``i`` and ``accuracy[i]``
    the validation accuracy measured then.
    """
    t = np.asarray(wall_clock, dtype=float)
    a = np.asarray(accuracy, dtype=float)
    if t.shape != a.shape or t.ndim != 1:
        raise CostError(
            f"wall_clock {t.shape} and accuracy {a.shape} must be 1-d and of equal length, one per epoch"
        )
    hits = np.flatnonzero(a >= target)
    return float(t[hits[0]]) if hits.size else math.nan


# --- safe expressions ----------------------------------------------------------------------------

_BINOPS: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.Pow: np.power,
}
_UNARY: dict[type, Callable[[np.ndarray], np.ndarray]] = {ast.USub: np.negative, ast.UAdd: np.positive}
_FUNCS: dict[str, Callable[..., np.ndarray]] = {
    "log": np.log,
    "log10": np.log10,
    "log2": np.log2,
    "exp": np.exp,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "min": np.minimum,
    "max": np.maximum,
}
_ARITY = {"min": 2, "max": 2}
_MAX_EXPR_CHARS = 200


_COST_NAMES = ("T", "A")


def _check(node: ast.AST, expr: str, names: Sequence[str] = _COST_NAMES, what: str = "cost expression") -> None:
    """Raise CostError unless every node of the tree is whitelisted (``names``: the names it may use)."""
    if isinstance(node, ast.Expression):
        _check(node.body, expr, names, what)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise CostError(f"{what} {expr!r}: only numeric constants are allowed")
    elif isinstance(node, ast.Name):
        if node.id not in names:
            use = " and ".join(names) if names == _COST_NAMES else ", ".join(names) or "no name yet"
            raise CostError(f"{what} {expr!r}: unknown name {node.id!r}; use {use}")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise CostError(f"{what} {expr!r}: operator not allowed; use + - * / **")
        _check(node.left, expr, names, what)
        _check(node.right, expr, names, what)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise CostError(f"{what} {expr!r}: unary operator not allowed; use - or +")
        _check(node.operand, expr, names, what)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS:
            raise CostError(
                f"{what} {expr!r}: only the functions {', '.join(sorted(_FUNCS))} may be called"
            )
        if node.keywords or len(node.args) != _ARITY.get(node.func.id, 1):
            raise CostError(
                f"{what} {expr!r}: {node.func.id}() takes "
                f"{_ARITY.get(node.func.id, 1)} positional argument(s)"
            )
        for arg in node.args:
            _check(arg, expr, names, what)
    else:
        raise CostError(
            f"{what} {expr!r}: {type(node).__name__} is not allowed; "
            f"write arithmetic of {' and '.join(names) if names == _COST_NAMES else 'the figures'}"
        )


def _evaluate(node: ast.AST, env: Mapping[str, np.ndarray]) -> np.ndarray:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, env)
    if isinstance(node, ast.Constant):
        return np.asarray(float(node.value))
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_evaluate(node.left, env), _evaluate(node.right, env))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, env))
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return _FUNCS[node.func.id](*(_evaluate(x, env) for x in node.args))
    raise CostError(f"unexpected node {type(node).__name__}")  # unreachable after _check


def expression(expr: str) -> CostFunction:
    """A cost from a safe arithmetic expression of T and A (see the module docstring)."""
    if len(expr) > _MAX_EXPR_CHARS:
        raise CostError(f"cost expression is {len(expr)} characters; keep it under {_MAX_EXPR_CHARS}")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise CostError(f"cost expression {expr!r} does not parse: {exc.msg}") from None
    _check(tree, expr)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - set(_FUNCS)
    if "T" not in names:
        raise CostError(f"cost expression {expr!r} does not use T; a cost must depend on the wall clock")

    def fn(t: np.ndarray, a: np.ndarray) -> np.ndarray:
        return np.broadcast_to(_evaluate(tree, {"T": t, "A": a}), np.broadcast_shapes(t.shape, a.shape))

    return CostFunction(expr.strip(), expr.strip(), fn)


def parse_cost(spec: str | None) -> CostFunction:
    """A cost from a name (``time_per_squared_percent``, ``time_per_squared_accuracy``, ``time``,
    ``tta:0.98``) or an expression of T and A; ``None`` is :data:`DEFAULT_COST`."""
    spec = (spec or DEFAULT_COST).strip()
    if spec in _RENAMED:
        raise CostError(f"cost {spec!r} is now named {_RENAMED[spec]!r}: use --cost {_RENAMED[spec]}")
    if spec == "time_per_squared_percent":
        return time_per_squared_percent()
    if spec == "time_per_squared_accuracy":
        return time_per_squared_accuracy()
    if spec == "time":
        return plain_time()
    if spec.startswith("tta:"):
        try:
            target = float(spec[4:])
        except ValueError:
            raise CostError(f"cost {spec!r}: the target after tta: must be a number, e.g. tta:0.98") from None
        return time_to_accuracy(target)
    return expression(spec)


# --- the same expressions over named figures -----------------------------------------------------


@dataclass(frozen=True)
class Formula:
    """An expression of named figures in the cost's language (e.g. a job's ``accuracy = "1 - test_error"``)."""

    text: str
    names: tuple[str, ...]  # the figures it uses
    tree: ast.Expression

    def __call__(self, values: Mapping[str, float]) -> float:
        """The value for one run's figures (NaN or inf where the arithmetic gives them, never an exception)."""
        env = {n: np.asarray(float(values[n])) for n in self.names}
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return float(_evaluate(self.tree, env))


def formula(expr: str, names: Sequence[str], what: str = "expression") -> Formula:
    """Parse ``expr`` as the cost's arithmetic over ``names`` (numbers, + - * / **, the same functions);
    :class:`CostError` names what is wrong."""
    if not isinstance(expr, str) or not expr.strip():
        raise CostError(f"{what} must be a non-empty arithmetic expression, e.g. \"1 - test_error\"")
    if len(expr) > _MAX_EXPR_CHARS:
        raise CostError(f"{what} is {len(expr)} characters; keep it under {_MAX_EXPR_CHARS}")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise CostError(f"{what} {expr!r} does not parse: {exc.msg}") from None
    allowed = tuple(names)
    _check(tree, expr, allowed, what)
    used = tuple(dict.fromkeys(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in allowed))
    return Formula(expr.strip(), used, tree)
