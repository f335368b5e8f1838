"""The classes of bad input, as small builders shared by tests/test_input_classes.py and bench/fuzz.py.

Each builder writes what it needs into a folder and returns a :class:`Case`: the command's
``main`` and its argv (or a plain callable) and what the right outcome is:

* ``error``: a one-line input error (exit 2, ``error: ...`` on stderr, no traceback);
* a ``check(code, out, err)`` for inputs whose right outcome is a value (e.g. the argv keeps
  ``1.00000000000000001`` as written).

Commands run in-process through :func:`sparkdl.cli.run_cli` (as their ``__main__`` does), with
``--dry-run`` or a command that only reads, so nothing starts: no Spark, no cluster.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import math
import os
import random
import re
import shlex
import signal
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
OWN_JOB = ROOT / "examples" / "own_job"


class Hang(BaseException):
    """Raised by the alarm when a command runs past its time limit (a BaseException: run_cli must not catch it)."""


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    hung: bool = False

    @property
    def traceback(self) -> bool:
        return self.code == 1 or "Traceback" in self.err or "internal error" in self.err

    @property
    def input_error(self) -> bool:
        lines = [line for line in self.err.splitlines() if line.startswith("error:") or ": error: " in line]
        return self.code == 2 and bool(lines) and not self.traceback


def run_main(main: Callable[[Sequence[str] | None], int], argv: Sequence[str], timeout: float = 30) -> Outcome:
    """``run_cli(main, argv)`` in this process, its output captured; a run past ``timeout`` is a hang."""
    from sparkdl.cli import run_cli

    out, err = io.StringIO(), io.StringIO()

    def alarm(_signum: int, _frame: object) -> None:
        raise Hang()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = run_cli(main, list(argv))
            except SystemExit as e:  # argparse
                code = e.code if isinstance(e.code, int) else 2
        return Outcome(code, out.getvalue(), err.getvalue())
    except Hang:
        return Outcome(-1, out.getvalue(), err.getvalue(), hung=True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Case:
    """One bad input: which command, with what argv, and how to judge its outcome."""

    name: str
    main: Callable[[Sequence[str] | None], int]
    argv: list[str]
    check: Callable[[Outcome], str | None] | None = None  # None: an input error is right
    expect: str = ""  # a word the error line must hold (the thing that is wrong)

    def judge(self, outcome: Outcome) -> str | None:
        """None when the outcome is right, else why not."""
        if outcome.hung:
            return "hang"
        if outcome.traceback:
            return f"traceback: {outcome.err.strip()[-300:]}"
        if self.check is not None:
            return self.check(outcome)
        if not outcome.input_error:
            return f"silent: exit {outcome.code}, stderr {outcome.err.strip()[-300:]!r}"
        if self.expect and self.expect.lower() not in outcome.err.lower():
            return f"the error does not name {self.expect!r}: {outcome.err.strip()!r}"
        return None


# ---------------------------------------------------------------- commands


def submit_main(argv: Sequence[str] | None) -> int:
    from harness.submit import main
    return main(argv)


def design_main(argv: Sequence[str] | None) -> int:
    from harness.design.__main__ import main
    return main(argv)


def pareto_main(argv: Sequence[str] | None) -> int:
    from optimize.cli.pareto import main
    return main(argv)


def rsm_main(argv: Sequence[str] | None) -> int:
    from models.rsm.cli import main
    return main(argv)


def desirability_main(argv: Sequence[str] | None) -> int:
    from models.desirability.cli import main
    return main(argv)


def anova_main(argv: Sequence[str] | None) -> int:
    from models.anova.cli import main
    return main(argv)


def report_main(argv: Sequence[str] | None) -> int:
    from report.cli import main
    return main(argv)


def logparse_main(argv: Sequence[str] | None) -> int:
    from logparse.cli import main
    return main(argv)


def search_check_main(argv: Sequence[str] | None) -> int:
    """``optimize.search``'s reading of its options and space.toml, and the shapes it plans (no cluster)."""
    from optimize.search.__main__ import build_parser, search_config

    args = build_parser().parse_args(argv)
    config = search_config(args)
    space = config.space
    getattr(space, "shapes", lambda: space.grid(1))()  # what main sizes the workers from (before: the whole grid)
    return 0


def runtime_list_main(argv: Sequence[str] | None) -> int:
    from harness.cli.runtime import main
    return main(["list", *(argv or [])])


def inventory_main(argv: Sequence[str] | None) -> int:
    from cluster.inventory import load_inventory
    load_inventory((argv or [""])[0])
    return 0


def manifest_main(argv: Sequence[str] | None) -> int:
    """What every analysis command does with a campaign's manifest.json: read its factors."""
    from models.results import manifest_factors
    manifest_factors(Path((argv or [""])[0]))
    return 0


def eventlog_main(argv: Sequence[str] | None) -> int:
    """What the campaign's observer does with a run's event log: notes, never an exception."""
    from harness.observer import RunObserver
    watch = RunObserver(sample=False).start(Path((argv or [""])[0]))
    notes = Path((argv or [""])[0]) / "observer-notes.txt"
    watch.stop(None)
    if notes.exists():
        print(notes.read_text(), end="")
    return 0


# ---------------------------------------------------------------- files


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


JOB = """[job]
name = "logreg"
app = "{app}"
args = ["--max-iter", "{{max_iter}}", "--reg-param", "{{reg_param}}"]
results = "json"
"""


def job_file(d: Path, extra: str = "", args: str | None = None, head: str = "") -> Path:
    app = str(OWN_JOB / "logreg.py")
    text = head + JOB.format(app=app)
    if args is not None:
        text = text.replace('args = ["--max-iter", "{max_iter}", "--reg-param", "{reg_param}"]', f"args = {args}")
    return write(d / "job.toml", text + extra)


def design(d: Path, header: str, *rows: str, name: str = "design.csv") -> Path:
    return write(d / name, "\n".join([header, *rows]) + "\n")


GOOD_DESIGN = ("nodes,executors,executor_cores,max_iter,reg_param", "1,1,1,5,0.1", "1,1,1,50,0.2")


def results_table(d: Path, rows: int = 12, factor_values: Callable[[int], dict[str, object]] | None = None,
                  extra: dict[str, Callable[[int], object]] | None = None, manifest: bool = True) -> Path:
    """A campaign folder whose results.csv has two numeric factors a and b, wall_clock_s and accuracy."""
    import random

    rng = random.Random(1)
    lines = []
    cols = ["run", "replicate", "nodes", "executors", "executor_cores", "a", "b", "status", "wall_clock_s",
            "accuracy", *(extra or {})]
    levels = [-1, 0, 1]
    for i in range(rows):
        a, b = levels[i % 3], levels[(i // 3) % 3]
        values = {"run": i + 1, "replicate": 1, "nodes": 1, "executors": 1, "executor_cores": 1, "a": a, "b": b,
                  "status": "ok", "wall_clock_s": round(10 + 2 * a - b + a * a + rng.random(), 4),
                  "accuracy": round(0.5 + 0.1 * a + 0.05 * b - 0.05 * b * b + rng.random() / 50, 4)}
        values.update((factor_values or (lambda _i: {}))(i))
        values.update({k: f(i) for k, f in (extra or {}).items()})
        lines.append(",".join(str(values[c]) for c in cols))
    folder = d / "campaign"
    write(folder / "results.csv", "\n".join([",".join(cols), *lines]) + "\n")
    if manifest:
        write(folder / "manifest.json", json.dumps({"version": 1, "factors": ["nodes", "executors", "executor_cores",
                                                                               "a", "b"]}))
    return folder


def lz4_block(payload: bytes, declared: int | None = None) -> bytes:
    """One lz4-java block holding ``payload`` raw (method 0x10), declaring ``declared`` bytes."""
    token = 0x10 | 0x0F  # raw, block size 1 << 25
    olen = len(payload) if declared is None else declared
    return b"LZ4Block" + struct.pack("<Biii", token, len(payload), olen, 0) + payload


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


# ---------------------------------------------------------------- the 20 classes of bad input, as seeds

def _ok_with(word: str) -> Callable[[Outcome], str | None]:
    """Right when the command succeeds and its output holds ``word``."""
    def check(o: Outcome) -> str | None:
        if o.code == 0 and word in o.out + o.err:
            return None
        return f"expected exit 0 with {word!r}: exit {o.code}, {o.err.strip()[-300:]!r}"
    return check


def _error_or_ok_without(word: str) -> Callable[[Outcome], str | None]:
    """Right when the command refuses the input, or succeeds without ``word`` in its output (no silent value)."""
    def check(o: Outcome) -> str | None:
        if o.input_error or (o.code == 0 and word not in o.out):
            return None
        return f"silent: exit {o.code}, {word!r} in the output"
    return check


def _set_aside(reason: str) -> Callable[[Outcome], str | None]:
    """Right when the command goes on without the rows that are not measurements and says so in the one note on stderr
    (``note: set aside N of M rows ...``, naming ``reason``): the validity rule of sparkdl.measurements."""
    def check(o: Outcome) -> str | None:
        notes = [line for line in o.err.splitlines() if line.startswith("note: set aside ")]
        if o.code == 0 and any(reason in line for line in notes):
            return None
        return f"expected exit 0 and a note that sets rows aside for {reason!r}: exit {o.code}, {o.err.strip()[-300:]!r}"
    return check


SEEDS: dict[str, Callable[[Path], list[Case]]] = {}


def seed(name: str) -> Callable[[Callable[[Path], list[Case]]], Callable[[Path], list[Case]]]:
    def register(f: Callable[[Path], list[Case]]) -> Callable[[Path], list[Case]]:
        SEEDS[name] = f
        return f
    return register


@seed("01-eventlog-bomb")
def _eventlog_bomb(d: Path) -> list[Case]:
    import zstandard
    small = write(d / "lz4" / "local-1.lz4", lz4_block(b"x" * 100, declared=10) + lz4_block(b""))
    line = write(d / "zstd" / "local-2.zstd",
                 zstandard.ZstdCompressor().compress(b"{\"Event\": \"" + b"a" * (80 << 20)))
    deep = write(d / "deep" / "local-3", b"[" * 100_000 + b"\n")
    odd = write(d / "odd" / "local-4", b'{"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": "x"}}\n'
                                       b'{"Event": "SparkListenerTaskEnd", "Task Info": [1]}\n')
    return [Case(f"eventlog-{p.parent.name}", eventlog_main, [str(p.parent)], check=_ok_with("event log"))
            for p in (small, line, deep, odd)]


@seed("02-space-huge-range")
def _space_huge(d: Path) -> list[Case]:
    space = write(d / "space.toml", "[epochs]\nlow = 1\nhigh = 1000000000\n")
    job = "lenet"
    return [Case("space-int-range-1e9", search_check_main,
                 ["--job", job, "--space", str(space), "--budget", "1h", "--out", str(d / "out")], expect="epochs"),
            Case("space-grid-huge", search_check_main,
                 ["--job", job, "--space", str(write(d / "grid.toml", "[batch_size]\nlow = 1\nhigh = 1000000\n"
                                                                     "[epochs]\nlow = 1\nhigh = 1000\n")),
                  "--budget", "1h", "--out", str(d / "out"), "--sampler", "grid"], expect="grid")]


@seed("03-design-replications")
def _replications(d: Path) -> list[Case]:
    factors = write(d / "f.toml", "[factors.nodes]\nlevels = [1, 2]\n[factors.epochs]\nlevels = [1, 2]\n")
    return [Case("design-replications-1e9", design_main,
                 ["--factors", str(factors), "--kind", "full", "--replications", "1000000000", "--seed", "1",
                  "--out", str(d / "d.csv")], expect="replications")]


@seed("04-job-deep")
def _job_deep(d: Path) -> list[Case]:
    deep = job_file(d / "a", "\n[spark]\n\"spark.x\" = " + "[" * 1000 + "]" * 1000 + "\n")
    tables = write(d / "b" / "job.toml", "\n".join(f"[{'.'.join(['t'] * n)}]" for n in (1, 200)) + "\n")
    return [Case(f"job-deep-{p.parent.name}", submit_main, [str(design(d, *GOOD_DESIGN)), "--job", str(p),
                                                              "--dry-run"]) for p in (deep, tables)]


@seed("05-space-not-a-file")
def _space_files(d: Path) -> list[Case]:
    cases = []
    for name, path in (("latin1", write(d / "l.toml", b"[learning_rate]\nlow = 0.01 # caf\xe9\nhigh = 0.5\n")),
                       ("folder", d), ("fifo", fifo(d / "fifo.toml"))):
        cases.append(Case(f"space-{name}", search_check_main,
                          ["--job", "lenet", "--space", str(path), "--budget", "1h", "--out", str(d / "out")]))
    cases.append(Case("job-fifo", submit_main, [str(design(d, *GOOD_DESIGN)), "--job", str(fifo(d / "j.toml")),
                                                "--dry-run"]))
    cases.append(Case("design-fifo", submit_main, [str(fifo(d / "d.csv")), "--job", str(job_file(d)), "--dry-run"]))
    return cases


@seed("06-manifest")
def _manifest(d: Path) -> list[Case]:
    latin = results_table(d / "l")
    write(latin / "manifest.json", b'{"version": 1, "factors": ["a", "b"], "job": "caf\xe9"}')
    twice = results_table(d / "t")
    write(twice / "manifest.json", json.dumps({"version": 1, "factors": ["a", "a", "b"]}))
    deep = results_table(d / "deep")
    write(deep / "manifest.json", "[" * 100_000)
    return [Case(f"manifest-{p.parent.name}-{cmd.__name__}", cmd, args(p))
            for p in (latin, twice, deep)
            for cmd, args in ((anova_main, lambda p: [str(p), "--response", "wall_clock_s"]),
                              (manifest_main, lambda p: [str(p / "results.csv")]))]


@seed("07-app-path")
def _app_path(d: Path) -> list[Case]:
    (d / "loop.py").symlink_to(d / "loop.py")
    cases = []
    for name, app in (("nul", "a\\u0000b.py"), ("loop", str(d / "loop.py")), ("long", "x" * 5000 + ".py")):
        job = job_file(d / name)
        job.write_text(job.read_text().replace(str(OWN_JOB / "logreg.py"), app))
        cases.append(Case(f"app-{name}", submit_main, [str(design(d, *GOOD_DESIGN)), "--job", str(job), "--dry-run"]))
    return cases


@seed("08-params-nan")
def _params_nan(d: Path) -> list[Case]:
    return [Case(f"params-{v}", submit_main,
                 [str(design(d, *GOOD_DESIGN)), "--job", str(job_file(d / v, f"[params.max_iter]\nmin = {v}\n")),
                  "--dry-run"], expect="min") for v in ("nan", "inf", "-inf")]


@seed("09-column-params")
def _column_params(d: Path) -> list[Case]:
    job = job_file(d, args='["--max-iter", "{max_iter}", "--reg-param", "{reg_param}", "--p", "{params}"]')
    return [Case("design-column-params", submit_main,
                 [str(design(d, GOOD_DESIGN[0] + ",params", *(r + ",1" for r in GOOD_DESIGN[1:]))), "--job", str(job),
                  "--dry-run"], expect="params")]


@seed("10-pareto-table")
def _pareto(d: Path) -> list[Case]:
    good = results_table(d / "g")
    cases = [Case("pareto-objective-word", pareto_main, [str(good), "--objectives", "status:min,accuracy:max",
                                                        "--no-plot"], expect="status")]
    for name, data in (("utf16", (good / "results.csv").read_text().encode("utf-16")), ("empty", b""),
                       ("quote", b'run,status,wall_clock_s,accuracy\n1,"ok,3,0.5\n'),
                       ("dupcol", b"run,replicate,status,wall_clock_s,accuracy,accuracy\n1,1,ok,3,0.5,0.7\n"),
                       ("acc15", b"run,replicate,status,wall_clock_s,accuracy\n1,1,ok,3,1.5\n2,1,ok,4,0.5\n")):
        folder = d / name
        write(folder / "results.csv", data)
        check = _set_aside("accuracy not a fraction in [0, 1]") if name == "acc15" else None
        cases.append(Case(f"pareto-{name}", pareto_main, [str(folder), "--no-plot"], check=check))
    cases.append(Case("pareto-fifo", pareto_main, [str(fifo(d / "fifo" / "results.csv")), "--no-plot"]))
    return cases


@seed("11-eventlog-errors")
def _eventlog_errors(d: Path) -> list[Case]:
    cases = []
    for name, data in (("list-info", b'{"Event": "SparkListenerStageSubmitted", "Stage Info": [1]}\n'),
                       ("str-reason", b'{"Event": "SparkListenerTaskEnd", "Task End Reason": "x"}\n'),
                       ("big-int", b'{"Event": "SparkListenerTaskEnd", "Task Info": {"Launch Time": 1e400}}\n'),
                       ("empty-fail", b'{"Event": "SparkListenerStageCompleted", "Stage Info": {"Failure Reason": " "}}\n'),
                       ("start-null", b'{"Event": "SparkListenerApplicationStart", "Timestamp": "x"}\n'
                                      b'{"Event": "SparkListenerApplicationEnd", "Timestamp": -5}\n'),
                       ("not-utf8", b'\xff\xfe{"Event": 1}\n')):
        write(d / name / "local-1", data)
        cases.append(Case(f"eventlog-{name}", eventlog_main, [str(d / name)], check=_ok_with("")))
    write(d / "dir" / "eventlog_v2_local-1" / "events_1_local-1", b"")
    (d / "dir" / "eventlog_v2_local-1" / "events_2_local-1").mkdir()
    cases.append(Case("eventlog-rolling-folder", eventlog_main, [str(d / "dir")], check=_ok_with("")))
    return cases


@seed("12-inf-factor")
def _inf_factor(d: Path) -> list[Case]:
    camp = results_table(d, factor_values=lambda i: {"a": "inf"} if i == 3 else {})
    return [Case("rsm-inf", rsm_main, [str(camp), "--response", "wall_clock_s", "--factors", "a,b"], expect="a"),
            Case("desirability-inf", desirability_main, [str(camp), "--factors", "a,b", "--objective",
                                                         "accuracy:max"], expect="a"),
            Case("report-inf", report_main, [str(camp), "--no-plots", "--out", str(d / "r.html")], expect="a")]


@seed("13-factor-name")
def _factor_name(d: Path) -> list[Case]:
    camp = results_table(d, manifest=False)
    text = (camp / "results.csv").read_text().replace(",a,b,", ",javascript:alert(1),b c,", 1)
    write(camp / "results.csv", text)
    write(camp / "manifest.json", json.dumps({"version": 1, "factors": ["javascript:alert(1)", "b c"]}))

    def check(o: Outcome) -> str | None:
        return None if o.code in (0, 2) and not o.traceback else f"exit {o.code}: {o.err.strip()[-300:]!r}"

    return [Case("report-odd-factor", report_main, [str(camp), "--no-plots", "--out", str(d / "r.html"),
                                                    "--response", "wall_clock_s"], check=check),
            Case("anova-odd-factor", anova_main, [str(camp), "--response", "wall_clock_s"], check=check),
            Case("rsm-odd-factor", rsm_main, [str(camp), "--response", "wall_clock_s",
                                              "--factors", "javascript:alert(1),b c"], check=check)]


@seed("14-harness-columns")
def _harness_columns(d: Path) -> list[Case]:
    cases = []
    for col in ("seed", "key", "total_cores"):
        job = job_file(d / col, args=f'["--max-iter", "{{max_iter}}", "--reg-param", "{{reg_param}}", "--x", "{{{col}}}"]')
        des = design(d / col, GOOD_DESIGN[0] + f",{col}", *(r + ",7" for r in GOOD_DESIGN[1:]))
        cases.append(Case(f"column-{col}", submit_main, [str(des), "--job", str(job), "--dry-run"], expect=col))
    return cases


@seed("15-option-columns")
def _option_columns(d: Path) -> list[Case]:
    cases = []
    for col in ("data_dir", "train_samples"):
        job = job_file(d / col, args=f'["--max-iter", "{{max_iter}}", "--reg-param", "{{reg_param}}", '
                                     f'["--opt", "{{{col}}}"]]')
        des = design(d / col, GOOD_DESIGN[0] + f",{col}", *(r + ",77" for r in GOOD_DESIGN[1:]))
        cases.append(Case(f"optional-{col}", submit_main, [str(des), "--job", str(job), "--dry-run"],
                          check=_error_or_ok_without("--max-iter 5 --reg-param 0.1 --metrics-out")))
    return cases


@seed("16-space-values")
def _space_values(d: Path) -> list[Case]:
    cases = []
    for name, text in (("epochs-choices", "[epochs]\nchoices = [-1, \"a\", 1.5]\n"),
                       ("lr-range", "[learning_rate]\nlow = 1e-320\nhigh = inf\n"),
                       ("batch-float", "[batch_size]\nchoices = [32, 64.5]\n"),
                       ("model-int", "[model]\nchoices = [1, 2]\n")):
        space = write(d / f"{name}.toml", text)
        cases.append(Case(f"space-{name}", search_check_main,
                          ["--job", "lenet", "--space", str(space), "--budget", "1h", "--out", str(d / "o")]))
    return cases


@seed("17-params-rules")
def _params_rules(d: Path) -> list[Case]:
    cases = []
    for name, rule in (("choices-number", "[params.max_iter]\nchoices = [\"7\", \"9\"]\n"),
                       ("minmax-text", "[params.max_iter]\ntype = \"str\"\nmin = 1\nmax = 3\n"),
                       ("inverted", "[params.max_iter]\nmin = 100\nmax = 1\n")):
        cases.append(Case(f"params-{name}", submit_main,
                          [str(design(d, *GOOD_DESIGN)), "--job", str(job_file(d / name, rule)), "--dry-run"],
                          expect="max_iter"))
    return cases


@seed("18-spark-keys")
def _spark_keys(d: Path) -> list[Case]:
    cases = []
    for name, key in (("equals", "spark.executor.memory=8g"), ("space", "spark.a b"), ("newline", "spark.a\\nb"),
                      ("empty-part", "spark..x")):
        job = job_file(d / name, f"[spark]\n\"{key}\" = \"1\"\n")
        cases.append(Case(f"spark-key-{name}", submit_main, [str(design(d, *GOOD_DESIGN)), "--job", str(job),
                                                             "--dry-run"], expect="spark"))
    des = design(d / "col", GOOD_DESIGN[0] + ",spark.x=y", *(r + ",1" for r in GOOD_DESIGN[1:]))
    cases.append(Case("spark-column-equals", submit_main, [str(des), "--job", str(job_file(d / "col")), "--dry-run"]))
    return cases


@seed("19-options")
def _options(d: Path) -> list[Case]:
    des, job = str(design(d, *GOOD_DESIGN)), str(job_file(d))
    base = [des, "--job", job, "--dry-run"]
    cases = [Case("cluster-missing", submit_main, [*base, "--cluster", str(d / "missing.toml")], expect="missing")]
    for name, extra, word in (("train-0", ["--train-samples", "0"], "train"),
                              ("train-neg", ["--train-samples", "-5"], "train"),
                              ("test-neg", ["--test-samples", "-5"], "test"),
                              ("timeout-neg", ["--timeout", "-1"], "timeout"),
                              ("timeout-nan", ["--timeout", "nan"], "timeout"),
                              ("retries-neg", ["--retries", "-1"], "retries"),
                              ("driver-abc", ["--driver-memory", "abc"], "driver"),
                              ("executor-huge", ["--executor-memory", "100000000000000000000g"], "executor"),
                              ("executor-1x", ["--executor-memory", "1x"], "executor"),
                              ("seed-neg", ["--seed", "-1"], "seed"),
                              ("port", ["--port", "70000"], "port")):
        cases.append(Case(f"option-{name}", submit_main, [*base, *extra], expect=word))
    big = design(d / "big", GOOD_DESIGN[0], "1,512,1024,5,0.1")
    cases.append(Case("row-524288-cores", submit_main, [str(big), "--job", job, "--dry-run"], expect="cores"))
    return cases


@seed("20-table-values")
def _table_values(d: Path) -> list[Case]:
    word = results_table(d / "word", factor_values=lambda i: {"a": "abc"} if i == 4 else {})
    acc = results_table(d / "acc", extra={}, factor_values=lambda i: {})
    text = (acc / "results.csv").read_text().splitlines()
    parts = text[3].split(",")
    parts[9] = "1.5"
    text[3] = ",".join(parts)
    write(acc / "results.csv", "\n".join(text) + "\n")
    dup = d / "dup"
    write(dup / "results.csv", (word / "results.csv").read_text().replace(",b,", ",a,", 1))
    exact = design(d / "exact", GOOD_DESIGN[0], "1,1,1,5,1.00000000000000001")

    def exact_check(o: Outcome) -> str | None:
        kept = o.code == 0 and "1.00000000000000001" in o.out
        return None if kept or o.input_error and "digits" in o.err else \
            f"the value reached argv changed: exit {o.code}, {o.err.strip()[-200:]!r}"

    return [Case("anova-word-in-factor", anova_main, [str(word), "--response", "wall_clock_s"], expect="abc"),
            Case("rsm-accuracy-1.5", rsm_main, [str(acc), "--response", "accuracy", "--factors", "a,b"],
                 check=_set_aside("accuracy not a fraction in [0, 1]")),
            Case("pareto-accuracy-1.5", pareto_main, [str(acc), "--no-plot"],
                 check=_set_aside("accuracy not a fraction in [0, 1]")),
            Case("anova-duplicate-column", anova_main, [str(dup / "results.csv"), "--response", "wall_clock_s",
                                                        "--factors", "a"], expect="a"),
            Case("float-exact-argv", submit_main, [str(exact), "--job", str(job_file(d / "exact")), "--dry-run"],
                 check=exact_check)]


@seed("21-logparse-values")
def _logparse_values(d: Path) -> list[Case]:
    import gzip

    good = gzip.decompress((ROOT / "tests" / "fixtures" / "logs" / "birnn-small-1ep.out.gz").read_bytes()).decode()
    edits = {
        "negative-throughput": ("Throughput is 17.29249", "Throughput is -17.29249"),
        "huge-wall": ("12.809122392s]", "1.0E30s]"),
        "nan-lr": ("Current learning rate is 0.1.", "Current learning rate is NaN."),
        "nan-loss": ("Loss is 2.306184.", "Loss is NaN."),
        "negative-wall": ("Wall clock time is 12850.706349 ms", "Wall clock time is -12850.706349 ms"),
    }
    cases = []
    for name, (old, new) in edits.items():
        assert old in good, old
        log = write(d / name / "1-1.out", good.replace(old, new))

        def check(o: Outcome, name: str = name) -> str | None:
            if o.traceback:
                return f"traceback: {o.err.strip()[-300:]}"
            try:
                rows = json.loads(o.out or "[]")
            except ValueError:
                return f"not JSON: {o.out[:200]!r}"
            for row in rows:
                if row.get("status") != "ok":
                    continue
                for key in ("learning_rate", "wall_clock_s", "epoch_wall_clock_ms"):
                    v = row.get(key)
                    if isinstance(v, (int, float)) and not (v == v and 0 <= v < 1e9):
                        return f"logparse passed {key} {v!r} in an ok row"
                    if isinstance(v, str):
                        return f"logparse passed {key} {v!r} in an ok row"
                if name != "nan-loss":  # a NaN loss is a diverged run: ok (a figure, not a corrupt log)
                    return f"logparse called a log with {name} ok: {json.dumps(row)[:300]}"
            return None
        cases.append(Case(f"logparse-{name}", logparse_main, [str(log), "--format", "json", "--full"], check=check))
    return cases


@seed("22-json-echo")
def _json_echo(d: Path) -> list[Case]:
    from harness.metrics import parse_metrics
    from sparkdl.runspec import RunSpec

    spec = RunSpec(1, 1, 1, 1, 1, params={"trees": 40, "depth": 3})

    def main(argv: Sequence[str] | None) -> int:
        same = parse_metrics(json.dumps({"trees": 40, "depth": 3.0, "accuracy": 0.9}), design=spec.as_row())
        other = parse_metrics(json.dumps({"trees": 41, "accuracy": 0.9}), design=spec.as_row())
        print(f"same={same.problem} other={other.problem}")
        return 0 if same.problem is None and other.problem and "another configuration" in other.problem else 3

    return [Case("json-echo", main, [], check=_ok_with("same=None"))]


def cases(root: Path) -> list[Case]:
    """Every seed case, each in its own folder under ``root``."""
    out = []
    for name, build in SEEDS.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        out += build(folder)
    return out


# ---------------------------------------------------------------- generated inputs (the hypothesis suite, bench/fuzz.py)

#: Values the 20 classes were made of, spliced into every kind of file by :func:`mutate`.
NASTY = ("nan", "inf", "-inf", "-1", "0", "1e309", "1e-320", "1.00000000000000001", "99999999999999999999999",
         "1000000000", '"a"', "true", "[]", "{}", "\x00", "\u00e9", "javascript:alert(1)", "seed", "key", "params",
         "total_cores", "data_dir", "a b", "=", "\n", '"', ",", "spark.executor.memory=8g", "NaN", "-0.5", "1.5",
         "1x", "\u0661", "1_000", "", "[" * 50, "]")
TOKEN = re.compile(r"[A-Za-z0-9_.+-]+")


def mutate(rng: random.Random, text: str) -> bytes:
    """``text`` with one to three damages: a token replaced by a :data:`NASTY` value, a line repeated or
    dropped, a value nested deep, random bytes, a cut, or the whole re-encoded as UTF-16."""
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(9)
        lines = text.split("\n")
        if op <= 2:
            tokens = list(TOKEN.finditer(text))
            if tokens:
                t = rng.choice(tokens)
                text = text[:t.start()] + rng.choice(NASTY) + text[t.end():]
        elif op == 3 and lines:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif op == 4 and len(lines) > 1:
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif op == 5:
            tokens = list(TOKEN.finditer(text))
            if tokens:
                t, k = rng.choice(tokens), rng.choice((2, 20, 2000))
                text = text[:t.start()] + "[" * k + t.group() + "]" * k + text[t.end():]
        elif op == 6:
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(("\x00", "\ufffd", "\r", "\t", "\"", "'", "\\")) + text[i:]
        elif op == 7:
            text = text[:rng.randrange(len(text) + 1)]
        else:
            return text.encode(rng.choice(("utf-16", "latin-1")), errors="replace")
    return text.encode("utf-8", errors="surrogatepass")


@dataclass
class Kind:
    """One kind of file: a good example, and how a command is run on a file of that kind."""

    name: str
    good: Callable[[], str]
    case: Callable[[Path, Path], Case]  # (folder, written file) -> the command on it
    filename: str = "input"


def _space_good() -> str:
    return "[learning_rate]\nlow = 0.01\nhigh = 0.5\nlog = true\n[batch_size]\nchoices = [32, 64]\n[epochs]\nlow = 1\nhigh = 2\n"


def _results_good() -> str:
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        return (results_table(Path(t)) / "results.csv").read_text()


def _bigdl_good() -> str:
    import gzip
    return gzip.decompress((ROOT / "tests" / "fixtures" / "logs" / "birnn-small-1ep.out.gz").read_bytes()).decode()


EVENTS = "\n".join(json.dumps(e) for e in (
    {"Event": "SparkListenerApplicationStart", "App ID": "local-1", "App Name": "x", "Timestamp": 1000},
    {"Event": "SparkListenerExecutorAdded", "Timestamp": 1100, "Executor ID": "0",
     "Executor Info": {"Host": "h", "Total Cores": 2}},
    {"Event": "SparkListenerJobStart", "Submission Time": 1200},
    {"Event": "SparkListenerStageSubmitted", "Stage Info": {"Stage ID": 0, "Stage Attempt ID": 0,
                                                            "Stage Name": "s", "Number of Tasks": 1,
                                                            "Submission Time": 1200}},
    {"Event": "SparkListenerTaskStart", "Task Info": {"Launch Time": 1250}},
    {"Event": "SparkListenerTaskEnd", "Stage ID": 0, "Stage Attempt ID": 0, "Task End Reason": {"Reason": "Success"},
     "Task Info": {"Launch Time": 1250, "Finish Time": 1400},
     "Task Metrics": {"Executor Run Time": 100, "JVM GC Time": 5, "Result Size": 10}},
    {"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": 0, "Stage Attempt ID": 0,
                                                            "Completion Time": 1450}},
    {"Event": "SparkListenerJobEnd", "Completion Time": 1500, "Job Result": {"Result": "JobSucceeded"}},
    {"Event": "SparkListenerApplicationEnd", "Timestamp": 2000},
)) + "\n"


def _job_case(d: Path, f: Path) -> Case:
    return Case("job", submit_main, [str(design(d, *GOOD_DESIGN)), "--job", str(f), "--dry-run"],
                check=_argv_keeps_design(d / "design.csv"))


def _design_case(d: Path, f: Path) -> Case:
    job = job_file(d, "[params.max_iter]\ntype = \"int\"\nmin = 1\nmax = 1000\n")
    return Case("design", submit_main, [str(f), "--job", str(job), "--dry-run"], check=_argv_keeps_design(f))


def _arg_template(job: Path, flag: str, col: str) -> tuple[str, str]:
    """The text around ``{col}`` in the job's ``args`` word after ``flag`` (tomllib's reading; a job file it cannot
    read or an args list without that word: the bare placeholder). ``"'{max_iter}"`` passes ``'5`` for 5."""
    import tomllib
    try:
        args = tomllib.loads(job.read_text(encoding="utf-8"))["job"]["args"]
        word = args[args.index(flag) + 1]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError, IndexError,
            AttributeError):
        return "", ""
    placeholder = "{" + col + "}"
    if not isinstance(word, str) or word.count(placeholder) != 1:
        return "", ""
    before, after = word.split(placeholder)
    return before, after


def _argv_keeps_design(design_path: Path) -> Callable[[Outcome], str | None]:
    """Right when the command refuses the input, or every max_iter and reg_param cell reaches the argv as written
    (within the text the job's args template puts around it)."""
    def check(o: Outcome) -> str | None:
        if o.input_error:
            return None
        if o.code != 0:
            return f"exit {o.code}: {o.err.strip()[-300:]!r}"
        import csv
        from decimal import Decimal, InvalidOperation
        rows = list(csv.DictReader(io.StringIO(design_path.read_text(encoding="utf-8-sig"))))
        argvs = [line for line in o.out.splitlines() if "spark-submit" in line]
        if len(argvs) != len(rows):
            return f"{len(rows)} rows but {len(argvs)} argvs"
        for row, argv in zip(rows, argvs):
            tokens = shlex.split(argv)  # the plan prints each argv with shlex.join
            for col, flag in (("max_iter", "--max-iter"), ("reg_param", "--reg-param")):
                if col not in row or flag not in tokens:
                    continue
                given, passed = (row[col] or "").strip(" \t"), tokens[tokens.index(flag) + 1]
                before, after = _arg_template(design_path.parent / "job.toml", flag, col)
                if before + after and passed.startswith(before) and passed.endswith(after) and \
                        len(passed) >= len(before + after):
                    passed = passed[len(before):len(passed) - len(after)]
                try:
                    same = given == passed or Decimal(given) == Decimal(passed)
                except InvalidOperation:
                    same = False
                if not same:
                    return f"{col}={given!r} reached the argv as {passed!r}"
        return None
    return check


def _space_case(d: Path, f: Path) -> Case:
    def check(o: Outcome) -> str | None:
        if o.input_error:
            return None
        if o.code != 0:
            return f"exit {o.code}: {o.err.strip()[-300:]!r}"
        import tomllib
        from sparkdl.schemas import SPACE_LIMITS
        for name, table in tomllib.loads(f.read_text()).items():
            values = table.get("choices", [table.get("low"), table.get("high")])
            for v in values:
                if name in SPACE_LIMITS and not (isinstance(v, (int, float)) and not isinstance(v, bool)
                                                 and SPACE_LIMITS[name][0] <= v <= SPACE_LIMITS[name][1]):
                    return f"space.toml [{name}] value {v!r} accepted"
        return None
    return Case("space", search_check_main, ["--job", "lenet", "--space", str(f), "--budget", "1h",
                                             "--out", str(d / "out")], check=check)


def _results_check(f: Path) -> Callable[[Outcome], str | None]:
    """Right when refused, or when the table it accepted holds no number that no float holds (``1e309``, a whole
    number past 18 digits) and no ok run with an accuracy outside [0, 1]."""
    def check(o: Outcome) -> str | None:
        if o.input_error:
            return None
        if o.code not in (0, 3):
            return f"exit {o.code}: {o.err.strip()[-300:]!r}"
        import csv
        try:
            rows = list(csv.DictReader(io.StringIO(f.read_text(encoding="utf-8"))))
        except (UnicodeDecodeError, csv.Error):
            return "an unreadable table was accepted"
        for r in rows:
            for column, cell in r.items():  # a number no float holds, or a whole number past 18 digits
                text = (cell if isinstance(cell, str) else "").strip()
                if not re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", text):
                    continue
                whole = re.fullmatch(r"[+-]?[0-9]+", text)
                if (whole and len(text.lstrip("+-").lstrip("0")) > 18) or not math.isfinite(float(text)):
                    return f"column {column!r}: the number {text[:30]!r} ({len(text)} characters) accepted"
            try:
                acc = float(r.get("accuracy") or "nan")
            except ValueError:
                continue
            if (r.get("status") or "").strip().lower() == "ok" and math.isfinite(acc) and not 0 <= acc <= 1:
                return f"accuracy {acc} in an ok run accepted"
        return None
    return check


def _results_case(d: Path, f: Path) -> Case:
    folder = f.parent
    write(folder / "manifest.json", json.dumps({"version": 1, "factors": ["a", "b"]}))
    commands = ((anova_main, [str(folder), "--response", "wall_clock_s"]),
                (rsm_main, [str(folder), "--response", "wall_clock_s", "--factors", "a,b"]),
                (pareto_main, [str(folder), "--no-plot"]),
                (desirability_main, [str(folder), "--factors", "a,b", "--objective", "accuracy:max"])) * 3 + (
                (report_main, [str(folder), "--no-plots", "--out", str(d / "report.html")]),)  # 2 s a report: 1 in 13
    main, argv = commands[sum(f.read_bytes()) % len(commands)]
    return Case("results", main, argv, check=_results_check(f))


def _manifest_case(d: Path, f: Path) -> Case:
    results_table(d, manifest=False)
    (d / "campaign" / "manifest.json").write_bytes(f.read_bytes())
    return Case("manifest", anova_main, [str(d / "campaign"), "--response", "wall_clock_s"],
                check=_results_check(d / "campaign" / "results.csv"))


def _metrics_case(d: Path, f: Path) -> Case:
    def main(argv: Sequence[str] | None) -> int:
        from harness.metrics import read_metrics
        from sparkdl.runspec import RunSpec
        spec = RunSpec(1, 1, 1, 1, 1, params={"trees": 40})
        m = read_metrics(f, {"status", "run"}, spec.as_row())
        if m.problem is None:
            bad = [k for k, v in m.figures.items() if isinstance(v, float) and not math.isfinite(v)]
            acc = m.figures.get("accuracy")
            if bad or (isinstance(acc, float) and not 0 <= acc <= 1) or m.figures.get("trees", 40) != 40:
                print(f"accepted {m.figures}")
                return 9
        return 0
    return Case("metrics", main, [], check=lambda o: None if o.code == 0 else f"exit {o.code}: {o.out[:200]}")


def _bigdl_case(d: Path, f: Path) -> Case:
    log = f.rename(f.with_name("1-1.out"))

    def check(o: Outcome) -> str | None:
        if o.traceback or o.code not in (0, 2, 3):
            return f"exit {o.code}: {o.err.strip()[-300:]!r}"
        try:
            rows = json.loads(o.out or "[]")
        except ValueError:
            return None if o.input_error else f"not JSON: {o.out[:200]!r}"
        for row in rows:
            if row.get("status") != "ok":
                continue
            for key in ("learning_rate", "wall_clock_s", "epoch_wall_clock_ms", "accuracy"):
                v = row.get(key)
                if isinstance(v, (int, float)) and not (v == v and 0 <= v < 1e12):
                    return f"logparse passed {key} {v!r} in an ok row"
            acc = row.get("accuracy")
            if isinstance(acc, (int, float)) and not 0 <= acc <= 1:
                return f"logparse passed accuracy {acc!r} in an ok row"
        return None
    return Case("bigdl-log", logparse_main, [str(log), "--format", "json"], check=check)


def _eventlog_case(d: Path, f: Path) -> Case:
    f.rename(f.with_name("local-1"))
    return Case("eventlog", eventlog_main, [str(d / "log")], check=_ok_with(""))


def _runtime_listed(f: Path) -> Callable[[Outcome], str | None]:
    """Right when refused in one error line, or when ``list`` shows one row per runtime (none forged by a newline in
    a value) and its last row is the file's name and Spark version as tomllib reads them."""
    def check(o: Outcome) -> str | None:
        if o.input_error:
            return None
        if o.code != 0:
            return f"exit {o.code}: {o.err.strip()[-300:]!r}"
        import tomllib
        from cluster.runtime import builtin_names
        try:
            rt = tomllib.loads(f.read_bytes().decode("utf-8"))["runtime"]
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
            return f"a runtime file tomllib refuses was listed ({e!r})"
        lines = o.out.rstrip("\n").split("\n")
        if len(lines) != 2 + len(builtin_names()):
            return f"{len(lines) - 1} rows listed for {1 + len(builtin_names())} runtimes: {o.out[-300:]!r}"
        words = lines[-1].split()
        if words[:2] != [str(rt.get("name")), str(rt.get("spark"))]:
            return f"listed {words[:2]} for name {rt.get('name')!r}, spark {rt.get('spark')!r}"
        return None
    return check


def _runtime_case(d: Path, f: Path) -> Case:
    return Case("runtime", runtime_list_main, [str(f)], check=_runtime_listed(f))


def _inventory_case(d: Path, f: Path) -> Case:
    write(d / "id_key", "not a real key: the inventory only checks that the file is there\n")
    return Case("inventory", submit_main, [str(design(d, *GOOD_DESIGN)), "--job", str(job_file(d)), "--dry-run",
                                           "--cluster", str(f)], check=_argv_keeps_design(d / "design.csv"))


def _same_value(level: object, cell: str) -> bool:
    """``cell`` (as design.csv holds it) is ``level`` (as tomllib reads it): text as written, numbers by value."""
    from decimal import Decimal, InvalidOperation

    if isinstance(level, bool) or not isinstance(level, (int, float)):
        return str(level) == cell
    try:
        return Decimal(repr(level) if isinstance(level, float) else str(level)) == Decimal(cell)
    except InvalidOperation:
        return False


def _design_keeps_factors(f: Path, out: Path) -> Callable[[Outcome], str | None]:
    """Right when refused, or when the full design written holds every factor's levels as tomllib reads them (each
    combination of them once per replicate) and every constant as given."""
    def check(o: Outcome) -> str | None:
        if o.input_error:
            return None
        if o.code != 0:
            return f"exit {o.code}: {o.err.strip()[-300:]!r}"
        import csv
        import tomllib
        try:
            doc = tomllib.loads(f.read_bytes().decode("utf-8-sig"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            return f"a factors file tomllib refuses was accepted ({e})"
        try:
            rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            return f"exit 0 but no readable design ({e})"
        factors = {name: t.get("levels") for name, t in doc.get("factors", {}).items()}
        for name, levels in factors.items():
            if not isinstance(levels, list) or not rows or name not in rows[0]:
                return f"factor {name!r} (levels {levels!r}) is not a column of the design"
            for r in rows:
                if not any(_same_value(level, r[name]) for level in levels):
                    return f"factor {name!r}: {r[name]!r} in the design, not one of the levels {levels!r}"
            for level in levels:
                if not any(_same_value(level, r[name]) for r in rows):
                    return f"factor {name!r}: level {level!r} never in the design"
        for name, value in doc.get("constants", {}).items():
            if any(name not in r or not _same_value(value, r[name]) for r in rows):
                return f"constant {name!r} = {value!r} not in every row as given"
        combos = collections.Counter(tuple(r[n] for n in factors) for r in rows)
        distinct = math.prod(len({str(v) for v in levels}) for levels in factors.values())
        if len(combos) != distinct or len(set(combos.values())) != 1:
            return f"{len(combos)} distinct combinations (counts {sorted(set(combos.values()))}), not {distinct}, each once"
        return None
    return check


def _factors_case(d: Path, f: Path) -> Case:
    out = d / "design.csv"
    return Case("factors", design_main, ["--factors", str(f), "--kind", "full", "--seed", "1", "--out", str(out)],
                check=_design_keeps_factors(f, out))


def _options_case(d: Path, f: Path) -> Case:
    words = f.read_text(encoding="utf-8", errors="replace").split("\n")
    argv = [str(design(d, *GOOD_DESIGN)), "--job", str(job_file(d)), "--dry-run", *[w for w in words if w]]
    given = [w for w in words if w]

    def last(flag: str) -> str | None:
        """The value argparse keeps for ``flag``: the word after its last occurrence."""
        at = [i for i, w in enumerate(given) if w == flag]
        return given[at[-1] + 1] if at and at[-1] + 1 < len(given) else None

    def check(o: Outcome) -> str | None:
        if o.input_error:
            return None
        if o.code != 0:
            return f"exit {o.code}: {o.err.strip()[-300:]!r}"
        for flag, whole, least in (("--timeout", False, 0.0), ("--retries", True, 0), ("--train-samples", True, 1),
                                   ("--test-samples", True, 1), ("--seed", True, 0), ("--port", True, 1)):
            value = last(flag)
            if value is None:
                continue
            try:
                number = float(value) if len(value) < 40 else math.nan
            except ValueError:
                return f"{flag} {value!r} accepted"
            if not math.isfinite(number) or number < least or (flag == "--timeout" and number == 0) or (
                    whole and not re.fullmatch(r"\s*[+]?[0-9]+\s*", value)):
                return f"{flag} {value!r} accepted"
        memory = last("--executor-memory")
        if memory is not None:
            argvs = [shlex.split(line) for line in o.out.splitlines() if "spark-submit" in line]
            for tokens in argvs:
                passed = tokens[tokens.index("--executor-memory") + 1] if "--executor-memory" in tokens else None
                if passed is None or passed.lower() != memory.strip().lower():
                    return f"--executor-memory {memory!r} accepted, the argv has {passed!r}"
        return None
    return Case("options", submit_main, argv, check=check)


KINDS: tuple[Kind, ...] = (
    Kind("job", lambda: JOB.format(app=str(OWN_JOB / "logreg.py")) + "[params.max_iter]\ntype = \"int\"\nmin = 1\n"
                                                                     "max = 1000\n[spark]\n\"spark.x.y\" = \"4\"\n",
         _job_case, "job.toml"),
    Kind("design", lambda: "\n".join(GOOD_DESIGN) + "\n", _design_case, "d.csv"),
    Kind("space", _space_good, _space_case, "space.toml"),
    Kind("results", _results_good, _results_case, "campaign/results.csv"),
    Kind("manifest", lambda: json.dumps({"version": 1, "factors": ["a", "b"], "responses": ["wall_clock_s"]}),
         _manifest_case, "manifest.json"),
    Kind("metrics", lambda: json.dumps({"accuracy": 0.9, "wall_clock_s": 12.5, "trees": 40, "loss": [2.3, 1.1]}),
         _metrics_case, "metrics.json"),
    Kind("bigdl-log", _bigdl_good, _bigdl_case, "log/x.out"),
    Kind("eventlog", lambda: EVENTS, _eventlog_case, "log/x"),
    Kind("runtime", lambda: (ROOT / "cluster" / "runtimes" / "spark4.toml").read_text().replace(
        'requirements = "spark4.requirements.txt"\nlock = "spark4.lock"',
        'requirements = ["pyspark==4.3.0", "numpy==2.4.6"]\n[jvm]\njava_options = ["-Xss4m"]'), _runtime_case,
         "rt.toml"),
    Kind("inventory", lambda: (ROOT / "examples" / "inventory.toml").read_text().replace(
        "~/.ssh/id_ed25519", "id_key"), _inventory_case, "inv.toml"),
    Kind("factors", lambda: (ROOT / "examples" / "local48" / "factors.toml").read_text(), _factors_case, "f.toml"),
    Kind("options", lambda: "\n".join(["--timeout", "30", "--retries", "1", "--executor-memory", "700m",
                                       "--train-samples", "256", "--seed", "7"]), _options_case, "argv.txt"),
)


def generated_case(kind: Kind, folder: Path, rng: random.Random) -> Case:
    """One generated input of ``kind`` in ``folder``: its good example damaged by :func:`mutate` (or kept whole)."""
    text = kind.good()
    data = text.encode() if rng.random() < 0.05 else mutate(rng, text)
    path = write(folder / kind.filename, data)
    case = kind.case(folder, path)
    case.name = f"{kind.name}"
    return case
