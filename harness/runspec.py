"""One row of a design file: what a single training job runs on and with.

Columns (seed 001's meaning):

==================  =====================================================
``nodes``           worker machines the job runs on
``executors``       executors per node
``executor_cores``  cores per executor
``epochs``          training epochs
``learning_rate``   SGD learning rate
``batch_size``      global mini-batch; BigDL needs a multiple of the job's
                    total cores (nodes x executors x executor_cores)
``model``           optional: birnn (default) or lenet
``run``             optional: design point number (default: row number)
``replicate``       optional: replication number (default 1)
==================  =====================================================

:func:`read_design` checks every row and reports every problem at once.
"""

from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Mapping

from harness.errors import DesignFileError

REQUIRED = ("nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size")
OPTIONAL = ("model", "run", "replicate")
MODELS = ("birnn", "lenet")


@dataclass(frozen=True)
class RunSpec:
    """One job of a campaign; ``(run, replicate)`` identifies its cell."""

    run: int
    replicate: int
    nodes: int
    executors: int
    executor_cores: int
    epochs: int
    learning_rate: float
    batch_size: int
    model: str = "birnn"

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

    def as_row(self) -> dict[str, object]:
        """The design columns of this run, in design order."""
        return asdict(self)

    @classmethod
    def from_row(cls, row: Mapping[str, object]) -> "RunSpec":
        """The inverse of :meth:`as_row` (values may be CSV strings); unknown keys are ignored."""
        values: dict[str, object] = {}
        for f in fields(cls):
            if f.name in row and row[f.name] not in (None, ""):
                kind = {"int": int, "float": float}.get(str(f.type), str)
                values[f.name] = kind(row[f.name])  # type: ignore[operator]
        return cls(**values)  # type: ignore[arg-type]


SPEC_FIELDS = tuple(f.name for f in fields(RunSpec))


def _int(value: str, name: str, minimum: int = 1) -> int | str:
    """The integer in ``value``, or a problem description."""
    try:
        number = float(value)
    except ValueError:
        return f"{name}={value!r} is not a number: write a whole number >= {minimum}"
    if not math.isfinite(number) or number != int(number):
        return f"{name}={value!r} is not a whole number: write a whole number >= {minimum}"
    if number < minimum:
        return f"{name}={value!r} is below {minimum}: write a whole number >= {minimum}"
    return int(number)


def _float(value: str, name: str) -> float | str:
    try:
        number = float(value)
    except ValueError:
        return f"{name}={value!r} is not a number: write a positive number such as 0.01"
    if not math.isfinite(number) or number <= 0:
        return f"{name}={value!r} must be a positive finite number, such as 0.01"
    return number


def parse_row(row: dict[str, str], default_run: int) -> RunSpec | list[str]:
    """A :class:`RunSpec` from one CSV row, or the list of what is wrong with it."""
    problems: list[str] = []
    values: dict[str, object] = {}
    for name in ("nodes", "executors", "executor_cores", "epochs", "batch_size"):
        v = _int((row.get(name) or "").strip(), name)
        (problems.append(v) if isinstance(v, str) else values.__setitem__(name, v))
    lr = _float((row.get("learning_rate") or "").strip(), "learning_rate")
    (problems.append(lr) if isinstance(lr, str) else values.__setitem__("learning_rate", lr))
    for name, default in (("run", default_run), ("replicate", 1)):
        text = (row.get(name) or "").strip()
        v = _int(text, name) if text else default
        (problems.append(v) if isinstance(v, str) else values.__setitem__(name, v))
    model = (row.get("model") or "").strip() or "birnn"
    if model not in MODELS:
        problems.append(f"model={model!r} is unknown: use one of {', '.join(MODELS)}")
    values["model"] = model
    if problems:
        return problems
    return RunSpec(**values)  # type: ignore[arg-type]


def batch_problem(spec: RunSpec) -> str | None:
    """BigDL needs the batch size to be a multiple of the job's total cores."""
    if spec.batch_size % spec.total_cores == 0:
        return None
    lo = spec.batch_size // spec.total_cores * spec.total_cores
    hint = f"{lo} or {lo + spec.total_cores}" if lo else str(spec.total_cores)
    return (f"batch_size={spec.batch_size} is not a multiple of nodes x executors x executor_cores = "
            f"{spec.total_cores} (BigDL rejects it): use e.g. {hint}")


@dataclass(frozen=True)
class DesignCheck:
    """The good rows of a design file, and one line per problem of the others."""

    specs: list[RunSpec]
    problems: list[str]


def read_design(path: Path, check_batch: bool = True, skip_invalid: bool = False) -> list[RunSpec]:
    """Every row of a design CSV as a :class:`RunSpec`; raises :class:`DesignFileError` listing all problems.

    ``check_batch=False`` lets rows that BigDL will reject through (to record how it fails);
    ``skip_invalid=True`` returns the good rows when only some rows are bad.
    """
    checked = check_design(path, check_batch)
    if checked.problems and not (skip_invalid and checked.specs):
        raise DesignFileError(str(path), checked.problems)
    return checked.specs


def check_design(path: Path, check_batch: bool = True) -> DesignCheck:
    """Read and check every row; header problems and unreadable files raise :class:`DesignFileError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise DesignFileError(str(path), [f"cannot read the design file ({e})"]) from e
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in REQUIRED + OPTIONAL]
    problems: list[str] = []
    if missing:
        problems.append(f"missing column(s) {', '.join(missing)}: the header must name {', '.join(REQUIRED)}")
    if unknown:
        hint = ("; njobs (concurrent copies, seed 004) is run by `python -m optimize.concurrent`"
                if "njobs" in unknown else "")
        problems.append(f"unknown column(s) {', '.join(unknown)}: allowed are {', '.join(REQUIRED + OPTIONAL)}{hint}")
    if problems:
        raise DesignFileError(str(path), problems)
    specs: list[RunSpec] = []
    seen: dict[tuple[int, int], int] = {}
    for number, row in enumerate(reader, start=1):
        if None in row:
            problems.append(f"row {number}: more values than columns: check the commas")
            continue
        result = parse_row(row, default_run=number)
        if isinstance(result, list):
            problems.extend(f"row {number}: {p}" for p in result)
            continue
        batch = batch_problem(result) if check_batch else None
        if batch:
            problems.append(f"row {number}: {batch}")
            continue
        cell = (result.run, result.replicate)
        if cell in seen:
            problems.append(f"row {number}: run {cell[0]} replicate {cell[1]} repeats row {seen[cell]}: "
                            "give each replication its own replicate number")
            continue
        seen[cell] = number
        specs.append(result)
    if not specs and not problems:
        raise DesignFileError(str(path), ["no rows: add one row per run below the header"])
    return DesignCheck(specs, problems)
