"""Reading a design CSV exactly: every row checked against the cluster factors and the job, every problem named.

The file is read as bytes (a regular file of at most :data:`MAX_DESIGN_BYTES`; a FIFO or a
device is refused before it is opened), decoded as UTF-8 and parsed by the csv module as it
is: a line break inside a quoted field is data (and then refused, since no value may hold
one). Column names must be unique and non-empty; a field holds at most
:data:`MAX_FIELD_CHARS` characters; values are parsed as :mod:`sparkdl.runspec` documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from cluster import runtime as runtimes
from cluster.errors import EnvironmentProblem
from harness.errors import DesignFileError
from harness.job import JVM_CHOICES, Job, JobChoice, JobFileError, bigdl_problem, builtin, column_problems, runtime_of
from sparkdl.runspec import CELL, CLUSTER, CLUSTER_RULES, MAX_DESIGN_ROWS, RunSpec, Value, batch_problem, parse_value, shape_problem
from sparkdl import config

MAX_DESIGN_BYTES = 8 << 20
MAX_FIELD_CHARS = 1_000
MAX_COLUMNS = 200
MAX_ROWS = MAX_DESIGN_ROWS


@dataclass(frozen=True)
class DesignTable:
    """The header and the data rows of a design file, as text (``line`` is where each row starts)."""

    header: tuple[str, ...]
    rows: tuple[tuple[int, tuple[str, ...]], ...]


@dataclass(frozen=True)
class DesignCheck:
    """The good rows of a design file, and one line per problem of the others."""

    specs: list[RunSpec]
    problems: list[str]


def _fail(path: Path, problem: str) -> DesignFileError:
    return DesignFileError(str(path), [problem])


def _error(path: Path) -> config.ErrorClass:
    """sparkdl.config's errors (``PATH: problem``) as a :class:`DesignFileError` of one problem."""
    return lambda message: DesignFileError(str(path), [message.removeprefix(f"{path}: ")])


def read_bytes(path: Path, limit: int = MAX_DESIGN_BYTES) -> bytes:
    """The content of a regular file of at most ``limit`` bytes; anything else raises :class:`DesignFileError`."""
    return config.read_bytes(path, "design file", limit, _error(Path(path)))


def read_table(path: Path) -> DesignTable:
    """Header and rows as text, through the one table reader (:func:`sparkdl.config.read_table`)."""
    path = Path(path)
    table = config.read_table(path, "design file", _error(path), limit=MAX_DESIGN_BYTES, max_field=MAX_FIELD_CHARS,
                              max_columns=MAX_COLUMNS, max_rows=MAX_ROWS)
    return DesignTable(table.header, table.rows)


def parse_row(header: Sequence[str], record: Sequence[str], choice: JobChoice, default_run: int,
              job_columns: frozenset[str] = frozenset()) -> RunSpec | list[str]:
    """A :class:`RunSpec` from one row, or the list of what is wrong with it.

    ``job_columns``: in a design whose ``model`` column mixes jobs, the columns some of its jobs use;
    a row leaves those its own job does not use empty (they hold None in its spec).
    """
    if len(record) > len(header):
        return [f"{len(record)} values for {len(header)} columns: check the commas (quote a value holding one)"]
    if len(record) < len(header):
        return [f"{len(record)} values for {len(header)} columns: give a value for {', '.join(header[len(record):])}"]
    cells = {name: text.strip(" \t") for name, text in zip(header, record)}
    problems: list[str] = []
    values: dict[str, Value] = {}
    job = None
    if choice.selector and choice.selector in cells:
        try:
            job = builtin(cells[choice.selector] or choice.default)
        except JobFileError as e:
            return [f"{choice.selector}={cells[choice.selector]!r}: {e}"]
    elif choice.job is not None and "model" in cells and cells["model"] != choice.job.name:
        return [f"model={cells['model']!r} but the job is {choice.job.name}: remove the model column or make it "
                f"{choice.job.name}"]
    job = job or choice.job or builtin(choice.default)
    others = job_columns - set(job.fields())  # columns of the design's other jobs
    for name, text in cells.items():
        if name in ("run", "replicate") and not text:
            continue
        if name in others:
            if text:
                problems.append(f"{name}={text!r} is for the design's other jobs: the job {job.name} does not use "
                                f"{name}; leave it empty on this row")
            else:
                values[name] = None
            continue
        if name == choice.selector and not text:
            values[name] = choice.default
            continue
        if not text:
            problems.append(f"{name} is empty: give a value")
            continue
        if name in ("runtime", "jvm"):
            value, problem = _selector(name, text)
        else:
            rule = CLUSTER_RULES.get(name) or job.rule(name)
            value, problem = parse_value(name, text, rule)
        if problem:
            problems.append(problem)
        else:
            values[name] = value  # type: ignore[assignment]
    if problems:
        return problems
    values.setdefault("run", default_run)
    values.setdefault("replicate", 1)
    fixed = {name: values.pop(name) for name in CELL + CLUSTER}
    if choice.job is None and "model" not in values:
        values = {**values, "model": choice.default}  # designs of the built-in jobs always had a model column
    return RunSpec(**fixed, params=tuple(values.items()))  # type: ignore[arg-type]


def _selector(name: str, text: str) -> tuple[str | None, str | None]:
    """A ``runtime`` column's runtime (a built-in name, or a runtime TOML's absolute path) or a ``jvm`` column's choice."""
    if name == "jvm":
        if text in JVM_CHOICES:
            return text, None
        return None, f"jvm={text!r}: use {' or '.join(JVM_CHOICES)}"
    try:
        rt = runtimes.resolve(text)
    except EnvironmentProblem as e:
        return None, f"runtime={text!r}: {e}"
    return (rt.name if rt.builtin else str(rt.source)), None


def check_design(path: Path, choice: JobChoice = JobChoice(), check_batch: bool = True,
                 option_fields: Sequence[str] = ()) -> DesignCheck:
    """Read and check every row; header, job and file problems raise :class:`DesignFileError`.

    ``check_batch`` refuses rows of a ``bigdl`` job whose ``batch_size`` is not a multiple of the
    job's total cores; ``option_fields`` are the optional harness fields the campaign was given.
    """
    path = Path(path)
    table = read_table(path)
    missing = [c for c in CLUSTER if c not in table.header]
    if missing:
        raise _fail(path, f"missing column(s) {', '.join(missing)}: every design names {', '.join(CLUSTER)}")
    jobs = [choice.job] if choice.job else _selected_jobs(path, table, choice)
    job_columns = frozenset(c for job in jobs for c in job.fields() if c in table.header) if len(jobs) > 1 \
        else frozenset()
    problems = list(dict.fromkeys(p for job in jobs for p in column_problems(
        job, [c for c in table.header if c not in job_columns or c in job.fields()], option_fields)))
    if "njobs" in table.header:
        problems.append("njobs (concurrent copies, Albo Martínez 2021) is run by `sparkdl concurrent`, not here")
    if problems:
        raise DesignFileError(str(path), problems)
    specs: list[RunSpec] = []
    seen: dict[tuple[int, int], int] = {}
    for number, (_, record) in enumerate(table.rows, start=1):
        result = parse_row(table.header, record, choice, default_run=number, job_columns=job_columns)
        if isinstance(result, list):
            problems.extend(f"row {number}: {p}" for p in result)
            continue
        shape = shape_problem(result)
        if shape:
            problems.append(f"row {number}: {shape}")
            continue
        batch = batch_problem(result) if check_batch and choice.for_spec(result).results == "bigdl" else None
        if batch:
            problems.append(f"row {number}: {batch}")
            continue
        job = choice.for_spec(result)
        no_bigdl = bigdl_problem(job.name, runtime_of(job, result)) if job.results == "bigdl" else None
        if no_bigdl:  # a BigDL job's row on a runtime without BigDL: refused before anything runs
            problems.append(f"row {number}: {no_bigdl}")
            continue
        cell = (result.run, result.replicate)
        if cell in seen:
            problems.append(f"row {number}: run {cell[0]} replicate {cell[1]} repeats row {seen[cell]}: "
                            "give each replication its own replicate number")
            continue
        seen[cell] = number
        specs.append(result)
    if not specs and not problems:
        raise _fail(path, "no rows: add one row per run below the header")
    return DesignCheck(specs, problems)


def _selected_jobs(path: Path, table: DesignTable, choice: JobChoice) -> list[Job]:
    """The built-in jobs the ``model`` column names (bad names are row problems later)."""
    names = {choice.default}
    if choice.selector in table.header:
        i = table.header.index(choice.selector)  # type: ignore[arg-type]
        names = {r[i].strip(" \t") or choice.default for _, r in table.rows if len(r) > i}
    found = []
    for name in sorted(names):
        try:
            found.append(builtin(name))
        except JobFileError:
            continue
    return found or [builtin(choice.default)]


def read_design(path: Path, choice: JobChoice = JobChoice(), check_batch: bool = True,
                skip_invalid: bool = False) -> list[RunSpec]:
    """Every row of a design CSV as a :class:`RunSpec`; raises :class:`DesignFileError` listing all problems."""
    checked = check_design(path, choice, check_batch)
    if checked.problems and not (skip_invalid and checked.specs):
        raise DesignFileError(str(path), checked.problems)
    return checked.specs
