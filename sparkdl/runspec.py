"""One row of a design file: what a single job runs on (the cluster factors) and with (the job's parameters).

Every design has the cluster factors, which keep Marinos 2021's meaning whatever the job:

==================  =================================================  ==============
column              meaning                                            allowed values
==================  =================================================  ==============
``nodes``           worker machines the job runs on                    1 .. 10,000
``executors``       executors per node                                 1 .. 512
``executor_cores``  cores per executor                                 1 .. 1,024
``run``             optional: design point number (default: row no.)   1 .. 10^9
``replicate``       optional: replication number (default 1)           1 .. 10^6
``whole_plot``      optional: the split-plot whole plot of the job     1 .. 10^9
==================  =================================================  ==============

Every other column is a parameter of the job (see :mod:`harness.job`): an argument of its
template, or a Spark setting when its name starts with ``spark.``. A job description may give a
parameter a type and a range (:class:`ParamRule`); the built-in BigDL jobs use
``epochs`` 1..1,000, ``batch_size`` 1..1,048,576 and ``learning_rate`` 1e-9..1e4
(``jobs/birnn.toml``). A parameter without a rule is an integer when it is written as one, a
finite decimal number when it is written as one, and otherwise a printable string.

Numbers are ASCII decimal only (``12``, ``-3``, ``0.01``, ``1e-3``): no digit group separators
(``1_000``), no fullwidth or Arabic-Indic digits, no ``inf``/``nan``. Integers are read as
integers (``9007199254740993`` stays exact; ``2.0`` is 2, ``2.5`` is not an integer).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Mapping, Sequence

Value = int | float | str

CELL = ("run", "replicate")
CLUSTER = ("nodes", "executors", "executor_cores")
#: Column names :class:`RunSpec` keeps as attributes (a job parameter cannot use them).
RESERVED = CELL + CLUSTER + ("params",)

#: The columns of a design for the built-in BigDL jobs (kept for readers of older results).
REQUIRED = ("nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size")
OPTIONAL = ("model", "run", "replicate")
#: The parameters of the built-in BigDL jobs, in the order their designs and results list them.
LEGACY_PARAMS = ("epochs", "learning_rate", "batch_size", "model")
SPEC_FIELDS = CELL + CLUSTER + LEGACY_PARAMS

_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
MAX_EXACT_INT = 2**53  # beyond this an integer parameter could not be analysed as a number without rounding
MAX_TEXT = 200


@dataclass(frozen=True)
class ParamRule:
    """What values a design column may take: ``kind`` int, float or str, an inclusive range, or choices."""

    kind: str = "auto"  # int | float | str | auto (int if written as one, else float, else str)
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str | int | float, ...] = ()

    def describe(self) -> str:
        lo, hi = _num(self.minimum), _num(self.maximum)
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        what = {"int": "a whole number", "float": "a number", "str": "a text"}.get(self.kind, "a value")
        if lo and hi:
            return f"{what} from {lo} to {hi}"
        if lo:
            return f"{what} >= {lo}"
        if hi:
            return f"{what} <= {hi}"
        return what


def _num(bound: float | None) -> str:
    if bound is None:
        return ""
    return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e16 else f"{bound:g}"


CLUSTER_RULES: Mapping[str, ParamRule] = {
    "nodes": ParamRule("int", 1, 10_000),
    "executors": ParamRule("int", 1, 512),
    "executor_cores": ParamRule("int", 1, 1_024),
    "run": ParamRule("int", 1, 10**9),
    "replicate": ParamRule("int", 1, 10**6),
    "whole_plot": ParamRule("int", 1, 10**9),
}


def _range_problem(name: str, text: str, number: Decimal | float, rule: ParamRule) -> str | None:
    low = rule.minimum is not None and number < rule.minimum
    high = rule.maximum is not None and number > rule.maximum
    if low or high:
        return f"{name}={text!r} is out of range: write {rule.describe()}"
    return None


def parse_int(name: str, text: str, rule: ParamRule) -> int | str:
    """The integer written in ``text`` (exactly, never through a float), or a problem description."""
    if not _DECIMAL.fullmatch(text):
        return f"{name}={text!r} is not a number: write {rule.describe()} in ASCII digits"
    try:
        number = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
        return f"{name}={text!r} is not a number: write {rule.describe()}"
    if number.adjusted() > 30:  # far beyond any range; keeps to_integral cheap for 1e999999
        return f"{name}={text!r} is out of range: write {rule.describe()}"
    if number != number.to_integral_value():
        return f"{name}={text!r} is not a whole number: write {rule.describe()}"
    problem = _range_problem(name, text, number, rule)
    if problem:
        return problem
    value = int(number)
    if abs(value) > MAX_EXACT_INT:
        return f"{name}={text!r} is too large: write a whole number of at most {MAX_EXACT_INT}"
    return value


def parse_float(name: str, text: str, rule: ParamRule) -> float | str:
    """The finite number written in ``text``, or a problem description."""
    if not _DECIMAL.fullmatch(text):
        return f"{name}={text!r} is not a number: write {rule.describe()} in ASCII digits, such as 0.01"
    number = float(text)
    if not math.isfinite(number):
        return f"{name}={text!r} is too large: write {rule.describe()}"
    if Decimal(text) != Decimal(repr(number)):  # a float is passed exactly (repr): more digits would be lost
        return (f"{name}={text!r} has more digits than a number holds (it would run as {number!r}): "
                f"write {number!r}, or give the column type = \"str\"")
    if number != 0 and abs(number) < 2.2250738585072014e-308:  # subnormal: not a plausible setting
        return f"{name}={text!r} is too small to be a setting: write {rule.describe()}"
    return _range_problem(name, text, number, rule) or number


def parse_text(name: str, text: str, rule: ParamRule) -> str:
    """``text`` as a string value (a problem description starts with ``name=``)."""
    if rule.choices and text not in rule.choices:
        return f"{name}={text!r} is unknown: use {rule.describe()}"
    return text


def _chosen(value: Value, text: str, choices: Sequence[str | int | float]) -> bool:
    """Whether a parsed value is one of ``choices`` (a number equals a number choice or its written text)."""
    if isinstance(value, str):
        return value in choices
    return any(c == text if isinstance(c, str) else (not isinstance(c, bool) and c == value) for c in choices)


def _text_problem(name: str, text: str) -> str | None:
    if not text.isprintable():
        return f"{name}={text!r} holds a line break or control character: write the value on one line"
    if len(text) > MAX_TEXT:
        return f"{name} has a value of {len(text)} characters: at most {MAX_TEXT} are allowed"
    if text.startswith("-") and not _DECIMAL.fullmatch(text):
        return f"{name}={text!r} starts with '-' and would be read as an option: remove the dash"
    return None


def parse_value(name: str, text: str, rule: ParamRule) -> tuple[Value | None, str | None]:
    """``(value, None)`` or ``(None, problem)`` for one cell of a design row."""
    problem = _text_problem(name, text)
    if problem:
        return None, problem
    kind = rule.kind
    if kind == "auto":
        kind = "int" if _INT.fullmatch(text) else "float" if _DECIMAL.fullmatch(text) else "str"
    if kind == "int":
        result: Value = parse_int(name, text, rule)
        ok = isinstance(result, int)
    elif kind == "float":
        result = parse_float(name, text, rule)
        ok = isinstance(result, float)
    else:
        result = parse_text(name, text, rule)
        ok = not (rule.choices and text not in rule.choices)
    if ok and rule.choices and not _chosen(result, text, rule.choices):
        return None, f"{name}={text!r} is unknown: use {rule.describe()}"
    return (result, None) if ok else (None, str(result))


def format_value(value: Value) -> str:
    """How a value is written in an argv: integers as digits, floats exactly (``repr``), text as is."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not a design value")
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass(frozen=True, init=False, eq=False)
class RunSpec:
    """One job of a campaign: its cell ``(run, replicate)``, the cluster factors and the job's parameters.

    The job's parameters are read as attributes too (``spec.learning_rate``), in design column
    order in ``params``. ``RunSpec.from_row(spec.as_row()) == spec``.
    """

    run: int
    replicate: int
    nodes: int
    executors: int
    executor_cores: int
    params: tuple[tuple[str, Value], ...]

    def __init__(self, run: int, replicate: int, nodes: int, executors: int, executor_cores: int,
                 *legacy: Value, params: tuple[tuple[str, Value], ...] | Mapping[str, Value] = (),
                 **more: Value) -> None:
        pairs = tuple(params.items()) if isinstance(params, Mapping) else tuple(params)
        if not pairs and (legacy or set(LEGACY_PARAMS[:3]) <= set(more) <= set(LEGACY_PARAMS)):
            # the signature of the BigDL jobs' spec: epochs, learning_rate, batch_size, model="birnn"
            given = {**dict(zip(LEGACY_PARAMS, legacy)), **more}
            more = {name: given.get(name, "birnn") for name in LEGACY_PARAMS}
        pairs += tuple(more.items())
        names = [n for n, _ in pairs]
        clash = sorted({n for n in names if n in RESERVED or names.count(n) > 1})
        if clash:
            raise ValueError(f"job parameter name(s) {', '.join(clash)} clash with a cluster factor or repeat")
        for name, value in (("run", run), ("replicate", replicate), ("nodes", nodes), ("executors", executors),
                            ("executor_cores", executor_cores), ("params", pairs)):
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Value:
        if name.startswith("__") or name == "params":
            raise AttributeError(name)
        for key, value in self.params:
            if key == name:
                return value
        raise AttributeError(f"this run has no parameter {name!r}")

    def _identity(self) -> tuple[object, ...]:
        return (self.run, self.replicate, self.nodes, self.executors, self.executor_cores,
                frozenset(self.params))

    def __eq__(self, other: object) -> bool:
        """Same cell, cluster factors and parameter values (whatever the design's column order)."""
        return isinstance(other, RunSpec) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __getstate__(self) -> dict[str, object]:
        return {n: getattr(self, n) for n in RESERVED}

    def __setstate__(self, state: dict[str, object]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    def get(self, name: str, default: Value | None = None) -> Value | None:
        """A job parameter by name, or ``default``."""
        return dict(self.params).get(name, default)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.params)

    @property
    def total_cores(self) -> int:
        return self.nodes * self.executors * self.executor_cores

    @property
    def cores_per_node(self) -> int:
        return self.executors * self.executor_cores

    @property
    def key(self) -> str:
        """File-name stem of the run's logs: ``<run>-<replicate>``."""
        return f"{self.run}-{self.replicate}"

    def as_row(self) -> dict[str, Value]:
        """The design columns of this run, flat: cell, cluster factors, then the job's parameters."""
        return {"run": self.run, "replicate": self.replicate, "nodes": self.nodes, "executors": self.executors,
                "executor_cores": self.executor_cores, **dict(self.params)}

    @classmethod
    def from_row(cls, row: Mapping[str, object], params: Sequence[str] | None = None) -> "RunSpec":
        """The inverse of :meth:`as_row` (values may be CSV strings: digits become numbers again).

        ``params`` names the job's parameters among the other keys (default: every key that is not a
        cell or cluster column); keys not named are ignored.
        """
        fixed = {name: int(str(row[name])) for name in CELL + CLUSTER}
        names = [k for k in row if k not in CELL + CLUSTER] if params is None else list(params)
        return cls(**fixed, params=tuple((k, _from_text(row[k])) for k in names if k in row))  # type: ignore[arg-type]


def _from_text(value: object) -> Value:
    """A value read back from a CSV cell: an integer or decimal number when written as one."""
    if not isinstance(value, str):
        return value  # type: ignore[return-value]
    if _INT.fullmatch(value) and abs(int(value)) <= MAX_EXACT_INT:
        return int(value)
    if _DECIMAL.fullmatch(value) and math.isfinite(float(value)):
        return float(value)
    return value


#: The most rows (jobs) a design may have: harness.design writes no more, harness.submit reads no more.
MAX_DESIGN_ROWS = 100_000
#: The most cores one node of a row may use (executors x executor_cores): beyond any machine.
MAX_CORES_PER_NODE = 1_024


def shape_problem(spec: RunSpec) -> str | None:
    """A row asking more cores of one node than any machine has (None: fine)."""
    if spec.cores_per_node > MAX_CORES_PER_NODE:
        return (f"executors x executor_cores = {spec.executors} x {spec.executor_cores} = {spec.cores_per_node} cores "
                f"on each node, more than the {MAX_CORES_PER_NODE} allowed: use fewer executors or cores per executor")
    return None


def batch_problem(spec: RunSpec) -> str | None:
    """BigDL needs the batch size to be a multiple of the job's total cores (None: fine or no batch_size)."""
    batch = spec.get("batch_size")
    if not isinstance(batch, int) or batch % spec.total_cores == 0:
        return None
    lo = batch // spec.total_cores * spec.total_cores
    hint = f"{lo} or {lo + spec.total_cores}" if lo else str(spec.total_cores)
    return (f"batch_size={batch} is not a multiple of nodes x executors x executor_cores = "
            f"{spec.total_cores} (BigDL rejects it): use e.g. {hint}")


# ---------------------------------------------------------------- text read from logs as typed columns


_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def _long_int(text: str) -> bool:
    """A whole number past 18 digits: no int column takes it, and a float column would round it."""
    return bool(_INT.fullmatch(text)) and len(text.lstrip("+-").lstrip("0")) > 18


def kind_of(values: Sequence[str | None]) -> str:
    """``int`` when every value given is an integer, ``float`` when every one is a finite number, else ``str``
    (``harness.ingest --fields`` and a job's ``figures`` type their columns so)."""
    given = [v for v in values if v is not None and v != ""]
    if given and all(_INT.fullmatch(v) and not _long_int(v) for v in given):
        return "int"  # longer integers stay text: no 400-digit number reaches an analysis
    if given and all(_NUMBER.fullmatch(v) and math.isfinite(float(v)) and not _long_int(v) for v in given):
        return "float"  # not with a whole number past 18 digits, which float would round: text
    return "str"


def typed(value: str | None, kind: str) -> Value:
    """One field's text as its column's kind (missing stays None)."""
    if value is None or value == "":
        return None
    return int(value) if kind == "int" else float(value) if kind == "float" else value
