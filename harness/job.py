"""Job descriptions: which application a campaign runs, and how a design row becomes its arguments.

A job is a small TOML file next to the design (paths in it are relative to the file)::

    [job]
    name = "mlp"
    app = "mlp_job.py"                 # a Python file; or jar = "x.jar" with main_class = "org.Main"
    py_files = ["helpers.py"]          # optional, Python apps only
    args = ["--max-iter", "{max_iter}", "--step-size", "{step_size}", "--seed", "{seed}",
            ["--data-dir", "{data_dir}"]]
    results = "json"                   # how the run reports (below); default "bigdl" for a BigDL app, else "none";
                                       # "mlflow": what the job logs to the MLflow run the harness made
    runtime = "spark4"                 # the environment it runs in: a built-in runtime or a runtime TOML
                                       # (sparkdl runtime list); default spark4
    jvm = "stock"                      # or "tuned": the local backend's start-up tuning (see below)

    [spark]                            # optional extra --conf settings
    "spark.sql.shuffle.partitions" = "4"

    [derived]                          # optional, with results = "output": figures computed from others
    accuracy = "1 - test_error"

    [params.max_iter]                  # optional: type and plausible range of a design column
    type = "int"
    min = 1
    max = 10000

``args`` is filled element by element, never through a shell: ``{name}`` is replaced by the
design column ``name`` of the run (or by a harness field, below). An inner array is an optional
group, left out as a whole when one of its fields has no value: a design column used only in optional groups
may be left out of a design (the built-in MNIST jobs' ``input_fraction``, a scaling design's amount of work). Harness fields: ``{seed}`` (the
campaign's ``--seed`` + replicate - 1), ``{run}``, ``{replicate}``, ``{key}``, ``{total_cores}``,
and, when the campaign was given them, ``{data_dir}``, ``{train_samples}``, ``{test_samples}``,
``{learning_rate_decay}``, ``{data_cache}`` (the MNIST split decoded once per campaign). A ``json``
job gets ``--metrics-out PATH`` appended and must write one JSON object of named figures there
(see :mod:`harness.metrics`).

``results`` says where a run's figures come from, and so how it is judged:

* ``"bigdl"``: logparse reads BigDL's training log (the default for a BigDL app: one that imports
  ``bigdl``); a BigDL job on a runtime without BigDL is refused before anything runs;
* ``"json"``: the file the job writes to ``--metrics-out``;
* ``"output"``: ``figures = ['regex with (?P<name>...)', ...]`` over what the unchanged program prints
  (:mod:`harness.outputfigures`), and a ``[derived]`` table of figures computed from them; a regex with a group
  named ``epoch`` makes per-epoch rows (``runs/<key>/epochs.csv``, per-epoch pruning);
* ``"none"`` (the default for every other app): no figures; the time of the work is ``spark_jobs_span_s``,
  from the application's first Spark job to its last (its event log).

Every job that is not BigDL is judged by its exit code (a failure's reason is the program's own last
error line), Spark's record of the application (a failed Spark job, an application that never ended)
and the figures it declares (:func:`logparse.judgement.judge_program_run`).

``workdir = "."`` (relative to the job file) runs the program in that folder, for a script that opens
its data at relative paths (``data/mllib/sample_libsvm_data.txt``); without it, the program runs where
the harness was started.

``--job birnn``, ``--job lenet`` or ``--job mlp`` names a built-in job: ``jobs/<name>.toml``.

A job's JVMs are its runtime's stock JVMs: nothing is added to them unless the job asks. ``jvm =
"tuned"`` (or a design column ``jvm``, which makes it a factor) gives a local cluster's drivers and
executors the start-up tuning measured to help short BigDL runs (bench/jit.py): the parallel
collector, a C1-only JIT, and on the BigDL runtime its class-data archive and MKL unpacked once.
A design column ``runtime`` runs each row on the runtime it names.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

import jobs
from cluster import runtime as runtimes
from cluster.errors import EnvironmentProblem
from harness.errors import HarnessError
from harness.figurespec import FigureSpec, FigureSpecError, figure_spec
from sparkdl.runspec import CELL, CLUSTER, RESERVED, ParamRule, RunSpec, Value, format_value
from sparkdl import config
from sparkdl.options import DEFAULT_JOB

BUILTIN_DIR = Path(jobs.__file__).parent
RESULTS = ("bigdl", "json", "mlflow", "output", "none")
#: A Python app that imports BigDL (at any indentation): a BigDL job.
IMPORTS_BIGDL = re.compile(rb"^[ \t]*(?:from|import)[ \t]+bigdl\b", re.MULTILINE)
#: ``jvm``: the runtime's stock JVMs, or the local backend's start-up tuning.
JVM_CHOICES = ("stock", "tuned")
#: Design columns the harness itself reads (besides the cluster factors): which job, runtime and JVM.
SELECTORS = ("model", "runtime", "jvm")
#: Design columns the harness reads and never hands to the job: the selectors and a split plot's whole plot.
HARNESS_COLUMNS = (*SELECTORS, "whole_plot")
#: Template fields the harness fills for every run.
HARNESS_FIELDS = ("seed", "run", "replicate", "key", "total_cores") + CLUSTER
#: Template fields filled only when the campaign was given the option (use them in optional groups).
OPTION_FIELDS = ("data_dir", "train_samples", "test_samples", "learning_rate_decay", "data_cache")
#: Spark settings that the cluster factors and the harness's options own: a design column may not set them.
OWNED_CONFS = {
    "spark.executor.cores": "executor_cores", "spark.cores.max": "nodes x executors x executor_cores",
    "spark.executor.instances": "executors", "spark.master": "--master", "spark.app.name": "the job's name",
    "spark.executor.memory": "--executor-memory", "spark.driver.memory": "--driver-memory",
    "spark.submit.deployMode": "the harness (client mode)",
}
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*", re.ASCII)
MAX_JOB_BYTES = 1 << 20
#: A Spark setting's name: ``spark.`` then dot-separated words (no ``=``, blank or line break).
SPARK_KEY = re.compile(r"spark(\.[A-Za-z0-9_-]+)+", re.ASCII)
#: Design columns a harness field would replace: refused, with the fix (never replaced in silence).
FILLED_FIELDS = tuple(f for f in HARNESS_FIELDS + OPTION_FIELDS if f not in CELL + CLUSTER)
MAX_CHOICES = 1_000


def param_schema() -> type:
    """The declared schema of a ``[params.NAME]`` table (:class:`sparkdl.schemas.ParamTable`)."""
    from sparkdl.schemas import ParamTable

    return ParamTable


class JobFileError(HarnessError):
    """A job description cannot be read or does not fit its design."""


@dataclass(frozen=True)
class Job:
    """A parsed job description (see the module docstring)."""

    name: str
    source: Path
    args: tuple[str | tuple[str, ...], ...]
    results: str = "bigdl"
    app: Path | None = None
    py_files: tuple[Path, ...] = ()
    jar: Path | None = None
    main_class: str | None = None
    spark: tuple[tuple[str, str], ...] = ()
    params: Mapping[str, ParamRule] = field(default_factory=dict)
    runtime: str = runtimes.DEFAULT  # a built-in runtime's name, or a runtime TOML's absolute path
    jvm: str = "stock"
    figures: FigureSpec = FigureSpec()  # results = "output": the regexes and derived figures
    workdir: Path | None = None  # where the program runs (None: where the harness was started)

    @property
    def time_column(self) -> str:
        """The column that holds the time of a run's work: ``wall_clock_s``, or ``spark_jobs_span_s`` for a job
        that reports no time of its own."""
        if self.results in ("bigdl", "json") or "wall_clock_s" in self.figures.names():
            return "wall_clock_s"
        return "spark_jobs_span_s"

    @property
    def application(self) -> Path:
        """The file spark-submit runs: the Python app or the jar."""
        return self.app if self.app is not None else self.jar  # type: ignore[return-value]

    def fields(self) -> tuple[str, ...]:
        """Every ``{name}`` in the template, in order of first use."""
        seen: list[str] = []
        for element in self.args:
            for text in (element,) if isinstance(element, str) else element:
                seen += [f for f in template_fields(text) if f not in seen]
        return tuple(seen)

    def rule(self, column: str) -> ParamRule:
        return self.params.get(column, ParamRule())

    def fill(self, values: Mapping[str, Value | None]) -> list[str]:
        """The application's arguments: each template element with its fields replaced (one argv element each)."""
        out: list[str] = []
        for element in self.args:
            group = (element,) if isinstance(element, str) else element
            names = {f for text in group for f in template_fields(text)}
            if any(values.get(n) is None for n in names):
                if isinstance(element, str):  # checked up front; a required field is always there
                    raise JobFileError(f"{self.source}: no value for {{{sorted(names)[0]}}}")
                continue
            text_values = {n: format_value(values[n]) for n in names}  # type: ignore[arg-type]
            out += [_substitute(text, text_values) for text in group]
        return out


def template_fields(text: str) -> list[str]:
    """The field names of one template element (``{{`` is a literal brace)."""
    return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]


def _substitute(text: str, values: Mapping[str, str]) -> str:
    parts = []
    for literal, name, _, _ in string.Formatter().parse(text):
        parts.append(literal)
        if name is not None:
            parts.append(values[name])
    return "".join(parts)


# ---------------------------------------------------------------- reading a job file


def _fail(path: Path, message: str) -> JobFileError:
    return JobFileError(f"{path}: {message}")


def _template(path: Path, raw: object) -> tuple[str | tuple[str, ...], ...]:
    if not isinstance(raw, list):
        raise _fail(path, "[job] args must be an array of strings, e.g. args = [\"--epochs\", \"{epochs}\"]")
    out: list[str | tuple[str, ...]] = []
    for element in raw:
        group = element if isinstance(element, list) else [element]
        if not group or not all(isinstance(t, str) for t in group):
            raise _fail(path, f"[job] args element {element!r} must be a string or a non-empty array of strings")
        for text in group:
            try:
                parsed = list(string.Formatter().parse(text))
            except ValueError as e:
                raise _fail(path, f"[job] args element {text!r}: {e} (write {{{{ for a literal brace)") from None
            for _, name, spec, conversion in parsed:
                if name is not None and (not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name) or spec or conversion):
                    raise _fail(path, f"[job] args element {text!r}: write a field as {{column_name}}, nothing else")
        out.append(element if isinstance(element, str) else tuple(element))
    return tuple(out)


def _rule(path: Path, name: str, raw: object) -> ParamRule:
    if not isinstance(raw, dict):
        raise _fail(path, f"[params.{name}] must be a table with type, min, max or choices")
    if raw.get("type", "auto") not in ("int", "float", "str", "auto"):
        raise _fail(path, f"[params.{name}] type = {raw['type']!r}: use int, float or str")
    table = config.convert(raw, param_schema(), path, "job file", JobFileError, where=f"[params.{name}]")
    return ParamRule(table.type, table.min, table.max, tuple(table.choices))


def _file(path: Path, raw: object, key: str, suffixes: tuple[str, ...]) -> Path:
    if not isinstance(raw, str) or not raw:
        raise _fail(path, f"[job] {key} must be a file name (relative to the job file)")
    config.check_path(raw, f"{path}: [job] {key}", JobFileError)
    try:
        target = (path.parent / raw).resolve()
        found = target.is_file()
    except (OSError, RuntimeError, ValueError) as e:  # a symlink loop, a name too long
        raise _fail(path, f"[job] {key} = {raw[:80]!r}: cannot be a file ({e}): fix the path") from None
    if not found:
        raise _fail(path, f"[job] {key} = {raw!r}: no such file {target}: fix the path (relative to the job file)")
    if suffixes and target.suffix not in suffixes:
        raise _fail(path, f"[job] {key} = {raw!r} must be a {' or '.join(suffixes)} file")
    return target


def _read_toml(path: Path) -> dict[str, object]:
    config.check_path(path, "job file", JobFileError)
    if not path.exists() and not path.is_symlink():
        raise _fail(path, "no such job file: give a job TOML file or a built-in job name "
                          f"({', '.join(builtin_names())})")
    return config.read_toml(path, "job file", MAX_JOB_BYTES, JobFileError)


def load_job(path: Path) -> Job:
    """Read and check a job description; raises :class:`JobFileError` with one line naming the fix."""
    path = Path(path)
    doc = _read_toml(path)
    unknown = sorted(set(doc) - {"job", "spark", "params", "derived"})
    if unknown:
        raise _fail(path, f"unknown table(s) {', '.join(unknown)}: a job file has [job], [spark], [derived] and "
                          "[params.NAME]")
    job = doc.get("job")
    if not isinstance(job, dict):
        raise _fail(path, "no [job] table: add [job] with name, app (or jar and main_class), args and results")
    bad_keys = sorted(set(job) - {"name", "app", "py_files", "jar", "main_class", "args", "results", "description",
                                  "runtime", "jvm", "figures", "workdir"})
    if bad_keys:
        raise _fail(path, f"[job] has unknown key(s) {', '.join(bad_keys)}: use name, app, py_files, jar, main_class, "
                          "args, results, figures, description, runtime, jvm, workdir")
    name = job.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise _fail(path, "[job] name must be a word of letters, digits, '_', '.' or '-', e.g. name = \"mlp\"")
    results = job.get("results")
    if results is not None and results not in RESULTS:
        raise _fail(path, f"[job] results = {results!r}: use \"bigdl\" (BigDL's log), \"json\" (--metrics-out), "
                          "\"mlflow\" (the MLflow run the harness hands the job), \"output\" (figures regexes over "
                          "what it prints) or \"none\" (its time alone)")
    if ("app" in job) == ("jar" in job):
        raise _fail(path, "[job] needs exactly one of app = \"file.py\" or jar = \"file.jar\" (with main_class)")
    app = jar = None
    main_class = py_files = None
    if "app" in job:
        app = _file(path, job["app"], "app", (".py",))
        raw_py = job.get("py_files", [])
        if not isinstance(raw_py, list):
            raise _fail(path, "[job] py_files must be an array of file names")
        py_files = tuple(_file(path, p, "py_files", (".py", ".zip", ".egg")) for p in raw_py)
        if "main_class" in job:
            raise _fail(path, "[job] main_class is for a jar: remove it, or use jar = \"...\"")
    else:
        jar = _file(path, job["jar"], "jar", (".jar",))
        main_class = job.get("main_class")
        if not isinstance(main_class, str) or not re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", main_class):
            raise _fail(path, "[job] jar needs main_class = \"package.MainClass\"")
        if "py_files" in job:
            raise _fail(path, "[job] py_files is for a Python app: remove it")
    spark = doc.get("spark", {})
    if not isinstance(spark, dict):
        raise _fail(path, "[spark] must be a table of \"spark.x\" = \"value\"")
    confs = []
    for key, value in spark.items():
        if not SPARK_KEY.fullmatch(key) or isinstance(value, (dict, list)):
            raise _fail(path, f"[spark] {key[:80]!r}: write \"spark.name\" = \"value\" (a name of dot-separated "
                              "words: no '=', blank or line break)")
        if isinstance(value, float) and not math.isfinite(value) or isinstance(value, str) and (
                not value.isprintable() or len(value) > 1_000):
            raise _fail(path, f"[spark] {key!r} = {str(value)[:40]!r}: write a value on one line")
        if key in OWNED_CONFS:
            raise _fail(path, f"[spark] {key!r} is set by {OWNED_CONFS[key]}: remove it")
        confs.append((key, str(value).lower() if isinstance(value, bool) else str(value)))
    runtime = _runtime(path, job.get("runtime", runtimes.DEFAULT))
    jvm = job.get("jvm", "stock")
    if jvm not in JVM_CHOICES:
        raise _fail(path, f"[job] jvm = {jvm!r}: use \"stock\" (the runtime's own JVMs) or \"tuned\"")
    params = doc.get("params", {})
    if not isinstance(params, dict):
        raise _fail(path, "[params] must hold one table per design column, e.g. [params.epochs]")
    rules = {k: _rule(path, k, v) for k, v in params.items()}
    bigdl_app = _imports_bigdl(app) if app is not None else ".bigdl." in f".{main_class}"
    declared, results = results, results or ("bigdl" if bigdl_app else "none")
    figures = _figures(path, results, job.get("figures"), doc.get("derived"))
    if results == "bigdl" or bigdl_app:
        problem = bigdl_problem(name, runtime, "results = \"bigdl\"" if declared == "bigdl" else "its app imports bigdl")
        if problem:
            raise _fail(path, problem)
    workdir = _workdir(path, job["workdir"]) if "workdir" in job else None
    parsed = Job(name=name, source=path.resolve(), args=_template(path, job.get("args", [])), results=str(results),
                 app=app, py_files=py_files or (), jar=jar, main_class=main_class, spark=tuple(confs),
                 params=rules, runtime=runtime, jvm=str(jvm), figures=figures, workdir=workdir)
    from sparkdl.schemas import JobDoc  # the declared schema: what the checks above do not name (sizes, lengths)

    config.convert(doc, JobDoc, path, "job file", JobFileError)
    return parsed


def _imports_bigdl(app: Path) -> bool:
    """Whether a Python app imports BigDL (its first MAX_JOB_BYTES; an unreadable file is left to spark-submit)."""
    try:
        with open(app, "rb") as f:
            return IMPORTS_BIGDL.search(f.read(MAX_JOB_BYTES)) is not None
    except OSError:
        return False


def bigdl_problem(job_name: str, runtime: str, why: str = "results = \"bigdl\"") -> str | None:
    """Why a BigDL job cannot run on ``runtime`` (a runtime without BigDL, naming the one to use), else None."""
    try:
        rt = runtimes.resolve(runtime)
    except EnvironmentProblem:
        return None  # a bad runtime is reported where it is named
    if rt.has_bigdl:
        return None
    use = " or ".join(f"runtime = \"{n}\"" for n in runtimes.bigdl_runtimes()) or "a runtime with BigDL"
    return (f"the job {job_name} is a BigDL job ({why}) but its runtime {rt.name} has no BigDL: "
            f"name {use} in [job] (or in the design's runtime column)")


def _figures(path: Path, results: str, raw: object, derived: object) -> FigureSpec:
    """``figures`` and ``[derived]``: required by, and only for, ``results = "output"``."""
    if results != "output":
        if raw is not None or derived is not None:
            raise _fail(path, f"figures and [derived] are read with results = \"output\" (this job's results are "
                              f"{results!r}): set results = \"output\", or remove them")
        return FigureSpec()
    if not raw:
        raise _fail(path, "results = \"output\" needs figures = ['regex with (?P<name>...)', ...]: the figures to read "
                          "from what the program prints")
    try:
        return figure_spec(raw, derived, "[job] figures")
    except FigureSpecError as e:
        raise _fail(path, str(e).removeprefix("[job] figures: ")) from None


def _workdir(path: Path, raw: object) -> Path:
    if not isinstance(raw, str) or not raw:
        raise _fail(path, "[job] workdir must be a folder (relative to the job file), e.g. workdir = \".\"")
    config.check_path(raw, f"{path}: [job] workdir", JobFileError)
    target = (path.parent / raw).resolve()
    if not target.is_dir():
        raise _fail(path, f"[job] workdir = {raw!r}: no such folder {target}: fix the path (relative to the job file)")
    return target


def _runtime(path: Path, raw: object) -> str:
    """``runtime``: a built-in name stays a name; a file is read now (so a bad one fails before any run)."""
    if not isinstance(raw, str) or not raw:
        raise _fail(path, f"[job] runtime must be a runtime's name ({', '.join(runtimes.builtin_names())}) "
                          "or a runtime TOML file (relative to the job file)")
    try:
        rt = runtimes.resolve(raw, relative_to=path.parent)
    except EnvironmentProblem as e:
        raise _fail(path, f"[job] runtime = {raw!r}: {e}") from None
    return rt.name if rt.builtin else str(rt.source)


#: A built-in job's name is a file name (jobs/<name>.toml): longer ones are no built-in (the system refuses them).
MAX_BUILTIN_NAME = 64


def builtin_names() -> tuple[str, ...]:
    """The built-in jobs: the one registry every command's ``--job`` lists."""
    return tuple(sorted(p.stem for p in BUILTIN_DIR.glob("*.toml")))


def builtins_with(columns: Sequence[str]) -> tuple[str, ...]:
    """The built-in jobs whose design columns include every one of ``columns`` (what an optimizer can vary)."""
    return tuple(n for n in builtin_names() if set(columns) <= set(builtin(n).params))


@lru_cache(maxsize=None)
def builtin(name: str) -> Job:
    """The built-in job ``jobs/<name>.toml``."""
    if not NAME.fullmatch(name) or len(name) > MAX_BUILTIN_NAME or not (BUILTIN_DIR / f"{name}.toml").is_file():
        shown = name if len(name) <= 80 else name[:77] + "..."
        raise JobFileError(f"no built-in job {shown!r}: use one of {', '.join(builtin_names())} or a job TOML file")
    return load_job(BUILTIN_DIR / f"{name}.toml")


def resolve_job(text: str) -> Job:
    """``--job``'s value: a built-in name (``birnn``) or a path to a job TOML file."""
    if NAME.fullmatch(text) and not text.endswith(".toml") and "/" not in text:
        return builtin(text)
    return load_job(Path(text))


# ---------------------------------------------------------------- a job and its design


@dataclass(frozen=True)
class JobChoice:
    """Which job each run runs: the ``--job`` one, or (without ``--job``) the built-in named by the ``model`` column."""

    job: Job | None = None
    default: str = DEFAULT_JOB

    def for_spec(self, spec: RunSpec) -> Job:
        if self.job is not None:
            return self.job
        return builtin(str(spec.get("model", self.default)))

    @property
    def selector(self) -> str | None:
        """The design column that picks the job, if any (``model`` without ``--job``)."""
        return None if self.job is not None else "model"


def column_problems(job: Job, columns: Sequence[str], option_fields: Sequence[str] = ()) -> list[str]:
    """Why a design with ``columns`` cannot drive ``job``: template fields without a column, unused columns."""
    fields = job.fields()
    provided = set(columns) | set(HARNESS_FIELDS) | set(OPTION_FIELDS)
    problems = [f"the job {job.name} ({job.source.name}) uses {{{f}}} but the design has no column {f}: "
                "add the column, or remove the field from the job's args" for f in _required_fields(job)
                if f not in provided]  # a field only in optional groups is an optional column (the group left out)
    required_option_fields = [f for f in OPTION_FIELDS if f in _required_fields(job) and f not in option_fields]
    problems += [f"the job {job.name} uses {{{f}}} outside an optional group, but the campaign was not given "
                 f"--{f.replace('_', '-')}: give it, or put the field in an inner array" for f in required_option_fields
                 if f not in columns]
    unused = [c for c in columns if c not in fields and c not in CELL + CLUSTER and not c.startswith("spark.")
              and c not in HARNESS_COLUMNS]
    problems += [f"design column {c} is not used by the job {job.name} ({job.source.name}): "
                 f"add {{{c}}} to its args, or remove the column" for c in unused]
    confs = [c for c in columns if c in OWNED_CONFS]
    problems += [f"design column {c} would override what {OWNED_CONFS[c]} sets: remove it" for c in confs]
    problems += [f"design column {c} is a name the harness fills itself ({{{c}}}: {FIELD_MEANING.get(c, 'an option')}): "
                 f"rename the column (e.g. {c}_value) and use {{{c}_value}} in the job's args"
                 for c in columns if c in FILLED_FIELDS]
    problems += [f"design column {c} is reserved: rename it" for c in columns if c in RESERVED and c not in CELL + CLUSTER]
    bad_spark = [c for c in columns if c.startswith("spark") and c != "spark" and not SPARK_KEY.fullmatch(c)
                 and "." in c]
    problems += [f"design column {c[:80]!r} is not a Spark setting's name (dot-separated words: no '=', blank or "
                 "line break): fix it" for c in bad_spark]
    return problems


#: What each harness field holds (for the message refusing a design column of that name).
FIELD_MEANING = {"seed": "the campaign's --seed + replicate - 1", "key": "the run's <run>-<replicate>",
                 "total_cores": "nodes x executors x executor_cores", "data_dir": "--data-dir",
                 "train_samples": "--train-samples", "test_samples": "--test-samples",
                 "learning_rate_decay": "--learning-rate-decay", "data_cache": "the campaign's MNIST cache"}


def _required_fields(job: Job) -> set[str]:
    return {f for element in job.args if isinstance(element, str) for f in template_fields(element)}


def harness_values(spec: RunSpec, seed: int, options: Mapping[str, Value | None]) -> dict[str, Value | None]:
    """Every value a template can name for this run: its design columns, then the harness's fields."""
    return {**spec.as_row(), "seed": seed + spec.replicate - 1, "key": spec.key, "total_cores": spec.total_cores,
            **{k: options.get(k) for k in OPTION_FIELDS}}


def job_confs(job: Job, spec: RunSpec) -> list[tuple[str, str]]:
    """The job's [spark] settings, then the run's ``spark.*`` design columns (those win)."""
    confs = dict(job.spark)
    confs.update({k: format_value(v) for k, v in spec.params if k.startswith("spark.")})
    return list(confs.items())


def runtime_of(job: Job, spec: RunSpec) -> str:
    """The runtime a run runs on: its ``runtime`` column, else its job's."""
    value = spec.get("runtime")
    return job.runtime if value is None else str(value)


def jvm_of(job: Job, spec: RunSpec) -> str:
    """``stock`` or ``tuned``: the run's ``jvm`` column, else its job's."""
    value = spec.get("jvm")
    return job.jvm if value is None else str(value)
