"""Generated inputs for the newer surfaces: the scaling options of ``predict`` (``--parallelism``, ``--at``, ``--next``,
``--candidates``, ``--work``, ``--replications``), ``plan --factors/--terms/--whole-plot``, ``pareto --objectives``,
``submit --until`` and the Kubernetes dry run's options, ``batch --slo``, ``epochs --budget``, ``concurrent``'s
options, and results tables with NaN, inf, huge, negative and text cells, a duplicated column, one row or one level,
read by predict, plan, pareto, batch and epochs.

The kinds are tests/inputs.py's (:class:`tests.inputs.Kind`, :class:`tests.inputs.Case`); bench/fuzz.py runs them
with the others. Their judges check values, not only exit codes (:func:`answer_problem`):

* a refusal is exit 2 and exactly one ``error:`` line (``note:`` lines aside), and a refused command writes nothing;
* an answer prints no NaN or infinity as a figure, no interval that leaves out its own point estimate and no
  probability (a power, a p-value, a coverage, a level) outside [0, 1];
* an answer on a table with rows that break the validity rule (sparkdl.measurements: a time outside [0, 1 year], an
  accuracy outside [0, 1], a negative count, a word among the measurements) says so in the one ``note: set aside``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re
from pathlib import Path
from typing import Callable, Sequence

from tests.inputs import Case, Kind, Outcome, write

ROOT = Path(__file__).resolve().parent.parent
SCALEOUT = ROOT / "examples" / "scaleout_lenet"
BATCH = ROOT / "examples" / "batch_slo_lenet" / "campaign"
EPOCHS = ROOT / "examples" / "epochs_budget_lenet" / "campaign"

# ---------------------------------------------------------------- commands


def predict_main(argv: Sequence[str] | None) -> int:
    from models.predict.cli import main
    return main(argv)


def plan_main(argv: Sequence[str] | None) -> int:
    from models.power.cli import main
    return main(argv)


def pareto_main(argv: Sequence[str] | None) -> int:
    from optimize.cli.pareto import main
    return main(argv)


def batch_main(argv: Sequence[str] | None) -> int:
    from optimize.cli.batch import main
    return main(argv)


def epochs_main(argv: Sequence[str] | None) -> int:
    from optimize.cli.epochs import main
    return main(argv)


def submit_main(argv: Sequence[str] | None) -> int:
    from harness.submit import main
    return main(argv)


def concurrent_main(argv: Sequence[str] | None) -> int:
    """``concurrent``'s options as it reads and checks them, and the jobs it would run (it has no dry run: no group
    is started)."""
    from optimize.cli.concurrent import build_parser, planned_groups

    groups = planned_groups(build_parser().parse_args(argv))
    for g, specs in groups:
        print(f"group {g}: " + "; ".join(str(s.as_row()) for s in specs))
    return 0


# ---------------------------------------------------------------- the judges

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NONFINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|infinity|inf)(?![\w])", re.IGNORECASE)
#: "X [lo, hi]": a figure and its interval in brackets (predict's scale-out lines, pareto's points)
_BRACKET = re.compile(rf"(?<![\w.\[])({_NUMBER}) \[({_NUMBER}), ({_NUMBER})\]")
#: "predicted X s, 90% interval lo .. hi": epochs' answer
_PREDICTED = re.compile(rf"predicted ({_NUMBER}) ?s?, [\d.]+ ?% interval ({_NUMBER}) ?s? ?\.\. ?({_NUMBER})")
#: JSON keys that hold a probability
PROBABILITY_KEYS = frozenset({"power", "replicate_power", "target_power", "p", "p_value", "pvalue", "coverage",
                              "probability", "alpha", "level", "interval_level", "confidence"})
_POINT_KEYS = ("mean", "estimate", "prediction", "predicted", "point", "value", "median")


def _walk(value: object, path: str = "") -> list[tuple[str, object, object]]:
    """Every (path, key, value) of a JSON document, and the dicts themselves under key ``{}``."""
    out: list[tuple[str, object, object]] = []
    if isinstance(value, dict):
        out.append((path, "{}", value))
        for k, v in value.items():
            out.append((f"{path}.{k}", k, v))
            out.extend(_walk(v, f"{path}.{k}"))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_walk(v, f"{path}[{i}]"))
    return out


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _close_outside(point: float, low: float, high: float) -> bool:
    """``point`` outside [low, high] by more than the rounding of a printed figure."""
    slack = 1e-9 + 5e-4 * max(abs(point), abs(low), abs(high))
    return point < low - slack or point > high + slack


def json_problem(doc: object) -> str | None:
    """A JSON answer's wrong value: a non-finite figure (json writes NaN and Infinity), an interval without its point,
    a probability outside [0, 1]."""
    for path, key, v in _walk(doc):
        if key == "{}":
            low, high = _num(v.get("low")), _num(v.get("high"))  # type: ignore[union-attr]
            point = next((_num(v.get(k)) for k in _POINT_KEYS if _num(v.get(k)) is not None), None)  # type: ignore[union-attr]
            if None not in (low, high, point) and _close_outside(point, low, high):  # type: ignore[arg-type]
                return f"{path}: point {point} outside its interval [{low}, {high}]"
            for k, iv in v.items():  # type: ignore[union-attr]
                if isinstance(k, str) and k.endswith("_interval") and isinstance(iv, list) and len(iv) == 2:
                    point, lo, hi = _num(v.get(k[:-len("_interval")])), _num(iv[0]), _num(iv[1])  # type: ignore[union-attr]
                    if None not in (point, lo, hi) and _close_outside(point, lo, hi):  # type: ignore[arg-type]
                        return f"{path}.{k}: {k[:-len('_interval')]} {point} outside its interval [{lo}, {hi}]"
            continue
        x = _num(v)
        if x is None:
            continue
        if not math.isfinite(x):
            return f"{path} = {x} printed as a figure"
        if key in PROBABILITY_KEYS and not 0 <= x <= 1:
            return f"{path} = {x}: a probability outside [0, 1]"
    return None


def text_problem(out: str) -> str | None:
    """A text answer's wrong value: nan or inf printed as a figure, a figure outside its own bracketed interval."""
    for line in out.splitlines():
        if line.lstrip().startswith(("#", "/")) or "spark-submit" in line:
            continue  # a dry run's argv and pod templates hold the input's words, not figures
        m = _NONFINITE.search(line)
        if m:
            return f"{m.group(0)!r} printed as a figure: {line.strip()[:200]!r}"
        for pat in (_BRACKET, _PREDICTED):
            for g in pat.finditer(line):
                point, low, high = (float(x) for x in g.groups())
                if _close_outside(point, low, high):
                    return f"{point:g} outside its own interval [{low:g}, {high:g}]: {line.strip()[:200]!r}"
        for g in re.finditer(rf"\b(?:p|power) = ({_NUMBER})", line):
            if not 0 <= float(g.group(1)) <= 1:
                return f"a probability {g.group(1)} outside [0, 1]: {line.strip()[:200]!r}"
    return None


def one_line_refusal(o: Outcome) -> str | None:
    """None when ``o`` is exit 2 with exactly one error line and no traceback (``note:`` lines aside, and argparse's
    usage block above its own one line: ``usage:`` and its indented continuation)."""
    if not o.input_error:
        return f"expected a refusal: exit {o.code}, {o.err.strip()[-200:]!r}"
    err = o.err.splitlines()
    if err and err[0].startswith("usage:") and ": error: " in o.err:
        err = [line for line in err[1:] if not line.startswith(" ")]
    lines = [line for line in err if line.strip() and not line.startswith("note:")]
    if len(lines) != 1:
        return f"a refusal of {len(lines)} lines, not one: {o.err.strip()[-300:]!r}"
    return None


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


def answer_problem(o: Outcome, fmt: str = "text", written: Callable[[], set[str]] | None = None,
                   before: set[str] = frozenset(), must_note: bool = False) -> str | None:
    """The judge of every kind here: a one-line refusal that wrote nothing, or an answer whose values are right."""
    if o.code == 2:
        problem = one_line_refusal(o)
        if problem is None and written is not None and (new := written() - before):
            return f"a refusal wrote {sorted(new)[:5]}"
        return problem
    if o.code not in (0, 3):
        return f"exit {o.code}: {o.err.strip()[-300:]!r}"
    if fmt == "json" and o.code == 0:
        try:
            doc = json.loads(o.out)
        except ValueError:
            doc = None
            problem = None if not o.out.strip() else f"--format json printed no JSON: {o.out[:200]!r}"
        else:
            problem = json_problem(doc)
    else:
        problem = text_problem(o.out)
    if problem is None and must_note and o.code == 0 and "note: set aside " not in o.err:
        problem = f"rows that break the validity rule taken without the note: {o.err.strip()[-200:]!r}"
    return problem


# ---------------------------------------------------------------- generators of values


def _huge(rng: random.Random) -> str:
    return rng.choice(("", "-")) + str(rng.randint(1, 9)) + "0" * rng.choice((20, 400, 4400))


NUMBERS = ("0", "-1", "1", "2", "nan", "inf", "-inf", "1e308", "1e400", "1e-320", "0.5", "-0", "x", "", " 3", "1_0",
           "0x10", "3.0", _huge)


def pick(rng: random.Random, pool: Sequence[object]) -> str:
    v = rng.choice(pool)
    return v(rng) if callable(v) else str(v)


def value(rng: random.Random, good: Sequence[object], bad: Sequence[object] = NUMBERS, share: float = 0.2) -> str:
    """A good value, or with probability ``share`` a bad one."""
    return pick(rng, bad if rng.random() < share else good)


def _number_list(rng: random.Random, good: Sequence[str]) -> str:
    n = rng.randint(1, 4)
    items = [value(rng, good, share=0.15) for _ in range(n)]
    return rng.choice((",", ",", ", ", ";")).join(items) + rng.choice(("", "", ","))


def _spec(rng: random.Random, options: dict[str, Callable[[random.Random], str | None]], p: float = 0.35) -> bytes:
    """A JSON list of argv words: each option given with probability ``p`` (a value of None: a flag)."""
    argv: list[str] = []
    for flag, gen in options.items():
        if rng.random() < p:
            value = gen(rng)
            argv += [flag] if value is None else ([f"{flag}={value}"] if rng.random() < 0.5 else [flag, value])
    rng.shuffle(argv) if rng.random() < 0.1 else None
    return json.dumps(argv).encode()


def _argv(f: Path) -> list[str]:
    words = json.loads(f.read_bytes())
    return [w for w in words if isinstance(w, str)]


# ---------------------------------------------------------------- predict's scaling options

PARALLELISM = ("nodes*executors*executor_cores", "executors", "nodes", "executor_cores", "executors*executor_cores",
               "nodes*nodes", "zz", "executors*zz", "", "*", "executors*", "accuracy", "status", "model", "1",
               "wall_clock_s", "executors**2", "executors,nodes", " executors ")
WORK = ("epochs", "epochs=2", "epochs=0", "epochs=-1", "epochs=nan", "epochs=inf", "epochs=1e308", "zz=1", "=", "=1",
        "epochs=", "batch_size=96", "batch_size", "accuracy=0.5", "status=1", "epochs=x", "train_samples=60000")
MODELS = ("amdahl", "usl", "ernest", "linear", "amdahl,usl", "amdahl,usl,ernest", "amdahl,linear", "zz", "",
          "amdahl,amdahl", "power")


def _gen_predict(rng: random.Random, good: str) -> bytes:
    scaling = rng.random() < 0.75  # --next, --candidates and --replications are --at's
    spec = json.loads(_spec(rng, {
        "--parallelism": lambda r: value(r, PARALLELISM[:5], PARALLELISM[5:], 0.3),
        "--work": lambda r: value(r, ("epochs", "epochs=2", "epochs=5", "batch_size"), WORK, 0.4),
        "--models": lambda r: value(r, MODELS[:7], MODELS[7:], 0.15),
        "--split": lambda r: value(r, ("random", "extrapolate", "both"), ("zz",), 0.05),
        "--level": lambda r: value(r, ("0.9", "0.5", "0.99")),
        "--format": lambda r: pick(r, ("text", "json", "json", "csv")),
        "--table": lambda r: pick(r, ("scaleout", "scaleout", "two_levels", "one_row", "one_level", "damaged")),
    }))
    if scaling:
        spec += ["--at", _number_list(rng, ("8", "16", "5", "6", "2.5", "1000", "8", "100000"))]
        spec += json.loads(_spec(rng, {
            "--next": lambda r: None,
            "--candidates": lambda r: _number_list(r, ("5", "6", "7", "2", "100", "5")),
            "--replications": lambda r: value(r, ("1", "2", "3", "5")),
        }, p=0.5))
    return json.dumps(spec).encode()


def _table_variant(d: Path, which: str, rng: random.Random) -> Path:
    """A copy of the scale-out campaign (12 runs over parallelism 1..4): whole, its two-level subset, one row, one
    level of parallelism, or one cell damaged."""
    rows = list(csv.reader(io.StringIO((SCALEOUT / "results.csv").read_text())))
    head, body = rows[0], rows[1:]
    if which == "two_levels":
        body = [r for r in body if int(r[3]) * int(r[4]) * int(r[2]) <= 2]
    elif which == "one_row":
        body = body[:1]
    elif which == "one_level":
        body = [r for r in body if int(r[3]) * int(r[4]) * int(r[2]) == 1]
    elif which == "damaged":
        damage_rows(head, body, rng)
    camp = d / "camp"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([head, *body])
    write(camp / "results.csv", buf.getvalue())
    write(camp / "manifest.json", (SCALEOUT / "manifest.json").read_text())
    return camp


CELL_VALUES = ("nan", "NaN", "inf", "-inf", "1e308", "1e309", "-5", "-0.001", "1.5", "abc", "", "31536001", "1e20",
               "0", "100", _huge)
DAMAGED_COLUMNS = ("wall_clock_s", "accuracy", "elapsed_s", "fit_s", "epochs_completed", "attempts", "executors",
                   "nodes", "batch_size", "epochs", "learning_rate", "status")


def damage_rows(head: list[str], body: list[list[str]], rng: random.Random) -> None:
    """One to three cells of the measurements or factors replaced by NaN/inf/huge/negative/text, sometimes a column
    repeated under its own name."""
    for _ in range(rng.randint(1, 3)):
        col = rng.choice([c for c in DAMAGED_COLUMNS if c in head])
        j = head.index(col)
        for r in rng.sample(body, k=min(len(body), rng.choice((1, 1, 2, 3)))):
            r[j] = pick(rng, CELL_VALUES)
    if rng.random() < 0.15:
        j = head.index(rng.choice([c for c in ("wall_clock_s", "accuracy", "executors") if c in head]))
        head.append(head[j])
        for r in body:
            r.append(r[j])


def breaks_rule(camp: Path) -> bool:
    """The table has an ok row whose measurements the validity rule sets aside (the oracle, written apart from
    sparkdl.measurements: times in [0, 1 year], accuracy in [0, 1], counts >= 0, a word is not a figure)."""
    rows = list(csv.reader(io.StringIO((camp / "results.csv").read_text())))
    head = rows[0]
    if len(set(head)) != len(head):
        return False  # refused, or read with its columns renamed: no note expected
    limits = {"wall_clock_s": (0, 31536000), "elapsed_s": (0, 31536000), "fit_s": (0, 31536000), "time": (0, 31536000),
              "accuracy": (0, 1), "epochs_completed": (0, math.inf), "attempts": (0, math.inf)}
    for r in rows[1:]:
        row = dict(zip(head, r))
        if row.get("status", "ok").strip() != "ok":
            continue
        for c, (lo, hi) in limits.items():
            cell = (row.get(c) or "").strip()
            if not cell:
                continue
            try:
                x = float(cell)
            except ValueError:
                return True
            if math.isnan(x):
                continue  # pandas reads nan, NaN, NA as a missing figure: the rule leaves it to each analysis
            if not lo <= x <= hi or (hi == math.inf and math.isinf(x)):
                return True
    return False


def _predict_case(d: Path, f: Path) -> Case:
    argv = _argv(f)
    table, rest, fmt = "scaleout", [], "text"
    i = 0
    while i < len(argv):
        w = argv[i]
        if w.startswith("--table"):
            table, i = (w.split("=", 1)[1], i + 1) if "=" in w else (argv[i + 1] if i + 1 < len(argv) else "", i + 2)
            continue
        if w.startswith("--format"):
            fmt = w.split("=", 1)[1] if "=" in w else (argv[i + 1] if i + 1 < len(argv) else "")
        rest.append(w)
        i += 1
    rng = random.Random(len(f.read_bytes()))
    camp = _table_variant(d, table, rng)
    if not any(w.startswith("--models") for w in rest):
        rest += ["--models", "amdahl,usl,linear"]
    if rng.random() < 0.7:
        rest.append("--no-intervals")  # the intervals' folds: 10x the time
    note = breaks_rule(camp)
    return Case("predict-scale", predict_main, [str(camp), *rest, "--progress", "never"],
                check=lambda o: answer_problem(o, fmt, must_note=note))


# ---------------------------------------------------------------- plan

EFFECTS = ("5%", "-5%", "10%", "0%", "nan%", "inf%", "1e308%", "100%", "1000%", "5", "0.5", "-1", "x", "%", "", "5 %",
           "1e-320%", "50%")
FACTOR_LISTS = ("nodes,executors", "batch_size,batch_size", "executors", "executors,executors", "zz", "", ",",
                "nodes,executors,executor_cores", "executors,zz", "accuracy", "wall_clock_s", "status",
                "executors,executor_cores", " executors")
TERMS = ("executors", "executors*executor_cores", "executors + zz", "(", "executors:executors", "I(executors**2)", "",
         "executors + executor_cores + executors:executor_cores", "1", "-1", "executors*executors", "C(executors)",
         "executors +", "__import__('os')")
WHOLE = ("nodes", "executors", "zz", "nodes,nodes", "", "executor_cores", "executors,executor_cores", ",")


def _gen_plan(rng: random.Random, good: str) -> bytes:
    spec = json.loads(_spec(rng, {
        "--factors": lambda r: value(r, ("nodes,executors", "executors", "executors,executor_cores", "nodes,executors,executor_cores"), FACTOR_LISTS, 0.4),
        "--terms": lambda r: value(r, TERMS[:2] + TERMS[7:8], TERMS, 0.4),
        "--whole-plot": lambda r: value(r, ("nodes", "executors", "executor_cores"), WHOLE, 0.3),
        "--whole-plot-cv": lambda r: value(r, ("0.1", "5%",)),
        "--power": lambda r: value(r, ("0.8", "0.9", "0.99",)),
        "--alpha": lambda r: value(r, ("0.05", "0.01",)),
        "--cv": lambda r: value(r, ("0.05", "5%",)),
        "--max-replicates": lambda r: value(r, ("10", "100",)),
        "--format": lambda r: pick(r, ("text", "json", "json")),
        "--table": lambda r: pick(r, ("scaleout", "scaleout", "one_row", "one_level", "damaged")),
    }, p=0.35))
    return json.dumps(["--effect", value(rng, ("5%", "10%", "50%", "-5%", "0.5", "100%"), EFFECTS, 0.3), *spec]).encode()


def _plan_case(d: Path, f: Path) -> Case:
    argv = _argv(f)
    table = next((argv[i + 1] for i, w in enumerate(argv[:-1]) if w == "--table"), None) or next(
        (w.split("=", 1)[1] for w in argv if w.startswith("--table=")), "scaleout")
    rest = [w for i, w in enumerate(argv) if not w.startswith("--table") and not (i and argv[i - 1] == "--table")]
    fmt = "json" if "--format=json" in rest or any(w == "--format" and rest[i + 1:i + 2] == ["json"]
                                                   for i, w in enumerate(rest)) else "text"
    camp = _table_variant(d, table, random.Random(len(f.read_bytes())))
    note = breaks_rule(camp)
    return Case("plan-options", plan_main, [str(camp), *rest], check=lambda o: answer_problem(o, fmt, must_note=note))


# ---------------------------------------------------------------- pareto --objectives

OBJECTIVES = ("wall_clock_s:min", "accuracy:max", "cost:min", "elapsed_s:min", "status:min", "zz:min", "accuracy:up",
              "accuracy", ":", "", "accuracy:max", "wall_clock_s:max", "fit_s:min", "epochs_completed:max",
              "model:min", "accuracy:MAX", " accuracy:max")


def _gen_pareto(rng: random.Random, good: str) -> bytes:
    good = rng.sample(("wall_clock_s:min", "accuracy:max", "cost:min", "elapsed_s:min", "fit_s:min"), rng.randint(2, 3))
    objectives = ",".join(pick(rng, OBJECTIVES) if rng.random() < 0.15 else o for o in good)
    spec = json.loads(_spec(rng, {
        "--format": lambda r: pick(r, ("text", "json", "json")),
        "--per-run": lambda r: None,
        "--resamples": lambda r: value(r, ("200", "50",)),
        "--level": lambda r: value(r, ("0.9", "0.95",)),
        "--reference-point": lambda r: value(r, ("wall_clock_s=20,accuracy=0",), ("wall_clock_s=nan", "accuracy=2", "x",
                                                "wall_clock_s=1e308,accuracy=0", "wall_clock_s=-5,accuracy=0")),
        "--table": lambda r: pick(r, ("scaleout", "scaleout", "one_row", "one_level", "damaged")),
    }, p=0.35))
    return json.dumps(["--objectives", objectives, *spec]).encode()


def _pareto_case(d: Path, f: Path) -> Case:
    argv = _argv(f)
    table = next((argv[i + 1] for i, w in enumerate(argv[:-1]) if w == "--table"), None) or next(
        (w.split("=", 1)[1] for w in argv if w.startswith("--table=")), "scaleout")
    rest = [w for i, w in enumerate(argv) if not w.startswith("--table") and not (i and argv[i - 1] == "--table")]
    if not any(w.startswith("--resamples") for w in rest):
        rest += ["--resamples", "200"]
    fmt = "json" if "--format=json" in rest or any(w == "--format" and rest[i + 1:i + 2] == ["json"]
                                                   for i, w in enumerate(rest)) else "text"
    camp = _table_variant(d, table, random.Random(len(f.read_bytes())))
    note = breaks_rule(camp)
    return Case("pareto-objectives", pareto_main, [str(camp), *rest, "--no-plot"],
                check=lambda o: answer_problem(o, fmt, must_note=note))


# ---------------------------------------------------------------- submit --until and the Kubernetes dry run

UNTIL = ("ci(wall_clock_s) < 5%", "ci(accuracy) < 0.01", "ci(nope) < 5%", "ci(wall_clock_s) < nan%", "ci(wall_clock_s) < 0%",
         "ci(wall_clock_s) < -5%", "ci(wall_clock_s) < inf", "ci(wall_clock_s)", "ci() < 5%", "", "ci(status) < 5%",
         "ci(wall_clock_s) < 1e308", "ci(wall_clock_s) > 5%", "ci(wall_clock_s) < 5% or ci(accuracy) < 0.01",
         "ci(model) < 5%", "ci(wall_clock_s) < 5%%", "CI(wall_clock_s) < 5%", "ci(wall_clock_s)<5%")
NAMESPACES = ("spark", "default", "ns-1", "Bad_NS", "", "-x", "x" * 64, "a.b", "ns\n", "é", "1ns", "ns-")
IMAGES = ("apache/spark:4.0.0-python3", "img:1", "", "bad image", "x" * 300, "repo/img@sha256:" + "a" * 64, "IMG:1",
          "img:tag:two", "img\n", "localhost:5000/img", "-img")
MASTERS = ("k8s://https://10.0.0.1:6443", "k8s://https://10.0.0.1:6443", "k8s://10.0.0.1:6443", "k8s://", "k8s://https://",
           "k8s://https://h:99999", "k8s://https://[::1]:6443", "k8s://https://h:6443/x y")

DESIGN = "nodes,executors,executor_cores,epochs,batch_size,learning_rate\n1,1,1,1,64,0.05\n1,2,1,1,64,0.05\n"


def _gen_submit(rng: random.Random, good: str) -> bytes:
    return _spec(rng, {
        "--until": lambda r: value(r, UNTIL[:2] + UNTIL[13:14] + UNTIL[17:18], UNTIL, 0.4),
        "--min-replications": lambda r: value(r, ("2", "3",)),
        "--max-replications": lambda r: value(r, ("3", "5", "1000",)),
        "--confidence": lambda r: value(r, ("0.9", "0.95",)),
        "--budget": lambda r: pick(r, ("1h", "30m", "600s", "0", "-1h", "nanh", "infh", "1e308s", "x", "")),
        "--master": lambda r: value(r, MASTERS[:2], MASTERS, 0.3),
        "--namespace": lambda r: value(r, NAMESPACES[:3], NAMESPACES, 0.4),
        "--image": lambda r: value(r, IMAGES[:2] + IMAGES[5:6], IMAGES, 0.4),
    })


def _submit_case(d: Path, f: Path) -> Case:
    argv = _argv(f)
    design = write(d / "design.csv", DESIGN)
    out = d / "out"
    before = _files(d)

    def check(o: Outcome) -> str | None:
        problem = answer_problem(o, "text", written=lambda: _files(d), before=before)
        if problem or o.code != 0:
            return problem
        namespace = next((w.split("=", 1)[1] for w in argv if w.startswith("--namespace=")), None) or next(
            (argv[i + 1] for i, w in enumerate(argv[:-1]) if w == "--namespace"), None)
        if namespace is not None and any(w.startswith("--master") and "k8s://" in w or w.startswith("k8s://")
                                         for w in argv):
            if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", namespace):
                return f"--namespace {namespace!r} accepted: not a DNS label"
            if f"namespace {namespace}" not in o.out:
                return f"--namespace {namespace!r} not the dry run's namespace: {o.out[:200]!r}"
        until = [w for w in argv if w.startswith("--until")]
        if until and "nope" in " ".join(argv):
            return "--until on a figure no run reports accepted"
        return None
    return Case("submit-until-k8s", submit_main, [str(design), "--job", "lenet", "--dry-run", "--out", str(out), *argv],
                check=check)


# ---------------------------------------------------------------- batch --slo, epochs --budget, concurrent


def _gen_batch(rng: random.Random, good: str) -> bytes:
    spec = _spec(rng, {
        "--cpus": lambda r: value(r, ("1", "2", "4",)),
        "--njobs": lambda r: value(r, ("1", "2", "3",)),
        "--margin": lambda r: value(r, ("0", "0.1",)),
        "--level": lambda r: value(r, ("0.9",)),
        "--batches": lambda r: value(r, ("64", "128",)),
        "--damaged": lambda r: None,
    }, p=0.4)
    return json.dumps(["--slo", value(rng, ("13.5", "10", "5", "1000", "20")), "--cpus", "1", "--njobs",
                       "1", *json.loads(spec)]).encode()


def _copy_campaign(d: Path, src: Path, damaged: bool, rng: random.Random) -> Path:
    rows = list(csv.reader(io.StringIO((src / "results.csv").read_text())))
    if damaged:
        damage_rows(rows[0], rows[1:], rng)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    camp = d / "camp"
    write(camp / "results.csv", buf.getvalue())
    if (src / "manifest.json").exists():
        write(camp / "manifest.json", (src / "manifest.json").read_text())
    return camp


def _batch_case(d: Path, f: Path) -> Case:
    argv = _argv(f)
    damaged = "--damaged" in argv
    camp = _copy_campaign(d, BATCH, damaged, random.Random(len(f.read_bytes())))
    rest = [w for w in argv if w != "--damaged"]
    note = breaks_rule(camp)
    return Case("batch-slo", batch_main, [str(camp), *rest, "--trees", "5", "--cv-folds", "2"],
                check=lambda o: answer_problem(o, must_note=note))


BUDGETS = ("30m", "2h", "600s", "600", "0", "-1", "nan", "inf", "1e308s", "x", "1y", "99999h", "", "30 m", "1h30m",
           "0.5h", "1e400", "-30m", "nanm", _huge)


def _gen_epochs(rng: random.Random, good: str) -> bytes:
    spec = _spec(rng, {
        "--lower": lambda r: value(r, ("1", "2",)),
        "--upper": lambda r: value(r, ("20", "5", "100",)),
        "--step": lambda r: value(r, ("1", "2",)),
        "--level": lambda r: value(r, ("0.9",)),
        "--time": lambda r: pick(r, ("elapsed_s", "wall_clock_s", "accuracy", "zz", "status", "")),
        "--fixed": lambda r: pick(r, ("batch_size=64", "batch_size=nan", "zz=1", "=", "batch_size", "nodes=1,nodes=2")),
        "--safe": lambda r: None,
        "--damaged": lambda r: None,
    }, p=0.3)
    return json.dumps(["--budget", value(rng, ("30m", "2h", "600s", "600", "0.5h", "10m"), BUDGETS, 0.3), *json.loads(spec)]).encode()


def _epochs_case(d: Path, f: Path) -> Case:
    argv = _argv(f)
    damaged = "--damaged" in argv
    camp = _copy_campaign(d, EPOCHS, damaged, random.Random(len(f.read_bytes())))
    rest = [w for w in argv if w != "--damaged"]
    note = breaks_rule(camp)
    return Case("epochs-budget", epochs_main, [str(camp), *rest, "--trees", "5", "--cv-folds", "2"],
                check=lambda o: answer_problem(o, must_note=note))


def _gen_concurrent(rng: random.Random, good: str) -> bytes:
    return _spec(rng, {
        "--cpus": lambda r: value(r, ("1", "2",)),
        "--njobs": lambda r: value(r, ("1", "2", "3",)),
        "--batch-sizes": lambda r: pick(r, ("64", "128", "0", "-1", "x", "1e9", _huge)),
        "--learning-rate": lambda r: value(r, ("0.05", "0.1",)),
        "--epochs": lambda r: value(r, ("1", "2",)),
        "--seed": lambda r: value(r, ("1",)),
        "--job": lambda r: pick(r, ("lenet", "zz", "", "mlp")),
    })


def _concurrent_case(d: Path, f: Path) -> Case:
    argv = _argv(f)
    out = d / "out"
    before = _files(d)

    def value(flag: str, default: str) -> str:
        got = default
        for i, w in enumerate(argv):
            if w == flag and i + 1 < len(argv):
                got = argv[i + 1]
            elif w.startswith(flag + "="):
                got = w.split("=", 1)[1]
        return got

    def check(o: Outcome) -> str | None:
        problem = answer_problem(o, "text", written=lambda: _files(d), before=before)
        if problem or o.code != 0:
            return problem
        for flag, default, least, whole in (("--cpus", "1", 1, True), ("--njobs", "2", 1, True),
                                             ("--epochs", "1", 1, True), ("--learning-rate", "0.05", 0, False)):
            text = value(flag, default)
            try:
                x = float(text) if len(text) < 40 else math.nan
            except ValueError:
                return f"{flag} {text!r} accepted"
            if not math.isfinite(x) or x < least or (flag == "--learning-rate" and x <= 0) or (
                    whole and not re.fullmatch(r"\s*\+?\d+\s*", text)):
                return f"{flag} {text!r} accepted: {o.out[:200]!r}"
        batch = value("--batch-sizes", "64")
        if not re.fullmatch(r"\s*\+?\d+\s*", batch) or not 1 <= int(batch) <= 1 << 20:
            return f"--batch-sizes {batch[:40]!r} accepted"
        return None
    return Case("concurrent-options", concurrent_main, ["--out", str(out), *argv], check=check)


KINDS: tuple[Kind, ...] = (
    Kind("predict-scale", lambda: "[]", _predict_case, "argv.json"),
    Kind("plan-options", lambda: json.dumps(["--effect", "5%"]), _plan_case, "argv.json"),
    Kind("pareto-objectives", lambda: json.dumps(["--objectives", "wall_clock_s:min,accuracy:max"]), _pareto_case,
         "argv.json"),
    Kind("submit-until-k8s", lambda: json.dumps(["--until", "ci(wall_clock_s) < 5%"]), _submit_case, "argv.json"),
    Kind("batch-slo", lambda: json.dumps(["--slo", "13.5", "--cpus", "1", "--njobs", "1"]), _batch_case, "argv.json"),
    Kind("epochs-budget", lambda: json.dumps(["--budget", "30m"]), _epochs_case, "argv.json"),
    Kind("concurrent-options", lambda: "[]", _concurrent_case, "argv.json"),
)

GENERATORS: dict[str, Callable[[random.Random, str], bytes]] = {
    "predict-scale": _gen_predict, "plan-options": _gen_plan, "pareto-objectives": _gen_pareto,
    "submit-until-k8s": _gen_submit, "batch-slo": _gen_batch, "epochs-budget": _gen_epochs,
    "concurrent-options": _gen_concurrent,
}

#: What these kinds import, loaded once before cases are forked (tests/surface_inputs.py ``warm_up``).
WARM = ("models.predict.cli", "models.power.cli", "optimize.cli.pareto", "optimize.cli.batch", "optimize.cli.epochs",
        "optimize.cli.concurrent", "harness.submit")


def generated_case(kind: Kind, folder: Path, rng: random.Random) -> Case:
    """One generated input of ``kind`` in ``folder`` (its good example 5 % of the time)."""
    data = kind.good().encode() if rng.random() < 0.05 else GENERATORS[kind.name](rng, kind.good())
    case = kind.case(folder, write(folder / kind.filename, data))
    case.name = kind.name
    return case
