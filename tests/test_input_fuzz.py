"""Generated bad inputs (hypothesis) through every command and every kind of file: no traceback, no hang, no
silent change. The kinds, their damages and what a right outcome is are in tests/inputs.py; the seeds (the 20
classes of bad input) run in tests/test_input_classes.py, and bench/fuzz.py runs thousands of inputs."""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import inputs, surface_inputs


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(kind=st.sampled_from(inputs.KINDS), seed=st.integers(0, 2**32 - 1))
def test_generated_inputs_are_refused_or_kept_as_written(kind: inputs.Kind, seed: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="sparkdl-fuzz-"))
    try:
        case = inputs.generated_case(kind, folder, random.Random(seed))
        outcome = inputs.run_main(case.main, case.argv, timeout=30)
        problem = case.judge(outcome)
        data = (folder / kind.filename).read_bytes()[:300] if (folder / kind.filename).exists() else b""
        assert problem is None, f"{kind.name}: {problem}\ninput: {data!r}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_every_kind_accepts_its_good_example(tmp_path: Path) -> None:
    # the generator's starting points are right inputs: a mutation is what makes them bad
    for kind in inputs.KINDS:
        folder = tmp_path / kind.name
        case = kind.case(folder, inputs.write(folder / kind.filename, kind.good()))
        outcome = inputs.run_main(case.main, case.argv)
        assert outcome.code == 0 and case.judge(outcome) is None, (kind.name, outcome.err[-300:])


def test_mutations_damage_the_input():
    rng = random.Random(3)
    text = inputs._space_good()
    damaged = [inputs.mutate(rng, text) for _ in range(50)]
    assert sum(d != text.encode() for d in damaged) >= 45
    assert any(b"nan" in d or b"inf" in d for d in damaged)


@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(kind=st.sampled_from(surface_inputs.KINDS), seed=st.integers(0, 2**32 - 1))
def test_generated_surface_inputs_are_refused_naming_the_field_or_kept_as_given(kind: inputs.Kind, seed: int) -> None:
    # MLflow URIs, sizes and results tables, runtime files with special files, lock --out, the dispatcher; each
    # case in a forked child (tests/surface_inputs.py), its judge comparing the output with the input
    folder = Path(tempfile.mkdtemp(prefix="sparkdl-fuzz-"))
    try:
        case = surface_inputs.generated_case(kind, folder, random.Random(seed))
        outcome = surface_inputs.run_forked(case.main, case.argv, timeout=120)
        assert case.judge(outcome) is None, f"{kind.name} {case.argv!r}: {case.judge(outcome)}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_judges_catch_what_they_must() -> None:
    # a judge that accepts anything would pass every input: each is shown a wrong outcome and must object
    from tests.inputs import Outcome

    folder = Path(tempfile.mkdtemp(prefix="sparkdl-fuzz-"))
    try:
        uri = surface_inputs._uri_case(folder, inputs.write(folder / "u.txt", "http://127.0.0.1:5000/"))
        assert uri.judge(Outcome(0, "http://127.0.0.1:5000/x\n", "")) is not None  # a value changed
        assert uri.judge(Outcome(0, "http://127.0.0.1:5000\n", "")) is None
        bad = surface_inputs._uri_case(folder, inputs.write(folder / "b.txt", f"http://u:{surface_inputs.PASSWORD}@h:1"))
        assert bad.judge(Outcome(2, "", f"error: tracking URI 'http://u:{surface_inputs.PASSWORD}@h:1'")) is not None
        assert bad.judge(Outcome(0, "http://h:1\n", "")) is not None  # a refusal that did not happen
        size = surface_inputs._size_case(folder, inputs.write(folder / "s.txt", "nan"))
        assert size.judge(Outcome(0, "nan\n", "")) is not None
        table = surface_inputs._export_table_case(folder, inputs.write(
            folder / "camp" / "results.csv", surface_inputs._results_good().replace("11.5", "nan")))
        assert table.judge(Outcome(0, "[]", "")) is not None
        assert table.judge(Outcome(2, "", "error: camp/results.csv: line 2: wall_clock_s 'nan'...")) is None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_hang_in_c_code_is_isolated_in_its_case() -> None:
    import re

    def catastrophic(argv: object) -> int:  # the re module's backtracking never returns to check a signal
        re.fullmatch(r"(a+)+b", "a" * 60)
        return 0
    outcome = surface_inputs.run_forked(catastrophic, [], timeout=3)
    assert outcome.hung
    assert surface_inputs.run_forked(lambda argv: 0, [], timeout=60).code == 0  # this process goes on


def test_the_tightened_judges_check_values(tmp_path: Path) -> None:
    # the factors, options, runtime and results judges once took any exit 0: each is shown a wrong value and objects
    from tests.inputs import Outcome

    factors = inputs.write(tmp_path / "f.toml", '[factors.nodes]\nlevels = [1, 2]\n[constants]\nmodel = "lenet"\n')
    case = inputs._factors_case(tmp_path, factors)
    design = tmp_path / "design.csv"
    design.write_text("run,replicate,nodes,model\n1,1,1,lenet\n2,1,2,lenet\n")
    assert case.judge(Outcome(0, "", "")) is None
    design.write_text("run,replicate,nodes,model\n1,1,1,lenet\n2,1,3,lenet\n")  # a level changed
    assert "not one of the levels" in case.judge(Outcome(0, "", ""))
    design.write_text("run,replicate,nodes,model\n1,1,1,lenet\n2,1,2,lenet5\n")  # a constant changed
    assert "constant 'model'" in case.judge(Outcome(0, "", ""))

    options = inputs._options_case(tmp_path, inputs.write(tmp_path / "argv.txt", "--timeout\n-1\n"))
    assert "--timeout '-1' accepted" in options.judge(Outcome(0, "", ""))  # before: any word not starting with a digit
    memory = inputs._options_case(tmp_path, inputs.write(tmp_path / "argv2.txt", "--executor-memory\n700m\n"))
    assert "the argv has '8g'" in memory.judge(Outcome(0, "spark-submit --executor-memory 8g x.py\n", ""))

    runtime = inputs.write(tmp_path / "rt.toml", '[runtime]\nname = "fz"\nspark = "4.3.0"\njava = [17]\n'
                                                 'requirements = ["pyspark==4.3.0"]\n')
    listed = inputs._runtime_case(tmp_path, runtime)
    from cluster.runtime import builtin_names
    rows = "name spark\n" + "".join(f"{n} 4.3.0\n" for n in builtin_names())
    assert listed.judge(Outcome(0, rows + "fz 4.3.0 17\n", "")) is None
    assert listed.judge(Outcome(0, rows + "fz 4.2.0 17\n", "")) is not None  # a value changed
    assert listed.judge(Outcome(0, rows + "fz 4.3.0 17\nforged 9.9\n", "")) is not None  # a row forged

    folder = inputs.results_table(tmp_path / "r", factor_values=lambda i: {"accuracy": "1e309"} if i == 1 else {})
    results = inputs._results_check(folder / "results.csv")
    assert "'1e309'" in results(Outcome(0, "", ""))  # a number no float holds, taken as inf


def test_the_design_judge_reads_a_value_inside_its_args_template(tmp_path: Path) -> None:
    # job args ["--max-iter", "'{max_iter}"] pass '5 for the cell 5, as written: the judge called that a silent change
    # (bench/fuzz.py --inputs 10000 --seed 38, job kind); a changed value inside the template is still one
    from tests.inputs import Outcome

    inputs.job_file(tmp_path, args='["--max-iter", "\'{max_iter}", "--reg-param", "{reg_param}x"]')
    design = inputs.design(tmp_path, "nodes,executors,executor_cores,max_iter,reg_param", "1,1,1,5,0.1")
    case = inputs._argv_keeps_design(design)
    assert case(Outcome(0, "spark-submit app.py --max-iter \"'5\" --reg-param 0.1x\n", "")) is None
    assert "reached the argv" in case(Outcome(0, "spark-submit app.py --max-iter \"'6\" --reg-param 0.1x\n", ""))
    assert "reached the argv" in case(Outcome(0, "spark-submit app.py --max-iter \"'5\" --reg-param 0.2x\n", ""))


def test_the_json_log_judge_on_cut_lines_several_lines_and_bad_characters(tmp_path: Path) -> None:
    # found by the run on the judge itself: a cut line that still says OutOfMemoryError may read as failed, a message
    # of two lines is one logger line in JSON (its layout twin has them joined), a bad character is ? or U+FFFD
    from tests.inputs import Outcome

    def case(rec: dict, cut: bool):
        spec = {"record": rec, "base": "cut", "cut": cut, "seed": 1}
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        return surface_inputs._json_log_case(folder, inputs.write(folder / "event.json", json.dumps(spec)))

    def rows(c, json_row: tuple, twin_row: tuple, bare_row: tuple = ("incomplete", "cut", "infrastructure")) -> Outcome:
        out = [{"path": c.argv[i], "status": r[0], "reason": r[1], "failure_kind": r[2]}
               for i, r in ((0, json_row), (1, twin_row), (2, bare_row)) if c.argv[i].endswith(".out")]
        return Outcome(3, json.dumps(out), "")

    rec = {"ts": "2026-11-27T23:19:10.894Z", "level": "INFO", "msg": "java.lang.OutOfMemoryError: x", "logger": "L"}
    cut = case(rec, True)
    assert cut.judge(rows(cut, ("failed", "oom", "job"), ("failed", "oom", "job"))) is None  # what is left says OOM
    assert cut.judge(rows(cut, ("incomplete", "x", "infrastructure"), ("failed", "oom", "job"))) is None
    assert "cut mid-write reads as ok" in cut.judge(rows(cut, ("ok", "", None), ("failed", "oom", "job")))
    stopped = case({**rec, "msg": "Successfully stopped SparkContext"}, True)  # Spark's end, cut after the message
    assert stopped.judge(rows(stopped, ("ok", "", None), ("ok", "", None))) is None
    two = case({**rec, "msg": "a\nb"}, False)
    assert two.judge(rows(two, ("failed", "ERROR L: a", "job"), ("failed", "ERROR L: a b", "job"))) is None
    assert two.judge(rows(two, ("incomplete", "r", "infrastructure"), ("ok", "", None))) is not None
    bad = case({**rec, "level": "ERROR", "msg": "\udcff"}, False)
    assert bad.judge(rows(bad, ("failed", "ERROR L: ?", "job"), ("failed", "ERROR L: \ufffd", "job"))) is None
    assert bad.judge(rows(bad, ("failed", "ERROR L: x", "job"), ("failed", "ERROR L: \ufffd", "job"))) is not None
