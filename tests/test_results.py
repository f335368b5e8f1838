"""The results table: status filtering, cost, factor detection, input errors."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy import stats

from models.anova.cli import main as anova_main
from models.errors import InvalidTableError, MissingColumnError, ResultsNotFoundError
from models.results import build_table, detect_factors, load_results, read_csv
from sparkdl.cli import run_cli

TABLE2 = Path(__file__).resolve().parents[1] / "examples" / "marinos2021" / "table2.csv"


def harness_rows() -> pd.DataFrame:
    rows = []
    for run, (nodes, lr) in enumerate([(1, 0.01), (2, 0.01), (1, 0.1), (2, 0.1)], start=1):
        for rep in (1, 2):
            rows.append({
                "run": run, "replicate": rep, "model": "lenet", "nodes": nodes, "executors": 1,
                "executor_cores": 2, "epochs": 1, "learning_rate": lr, "batch_size": 64,
                "status": "ok", "reason": "", "wall_clock_s": 100.0 * run + rep, "accuracy": 0.9,
                "elapsed_s": 120.0, "start": "2024-01-01T00:00:00", "end": "2024-01-01T00:02:00",
                "app_id": f"app-{run}-{rep}",
            })
    df = pd.DataFrame(rows)
    df.loc[1, "status"] = "failed"
    df.loc[1, "reason"] = "executor lost"
    df.loc[2, "status"] = "incomplete"
    df.loc[3, "accuracy"] = 0.0
    return df


def test_campaign_directory_keeps_ok_rows_and_counts_the_rest(tmp_path):
    harness_rows().to_csv(tmp_path / "results.csv", index=False)
    table = load_results(tmp_path)
    assert len(table.frame) == 5 and table.n_read == 8
    assert table.dropped["status=failed"] == 1 and table.dropped["status=incomplete"] == 1
    assert sum(v for k, v in table.dropped.items() if k.startswith("cost not finite")) == 1
    assert table.n_dropped == 3 and "5 of 8 rows analysed" in table.describe_dropped()
    t, a = table.frame["wall_clock_s"], table.frame["accuracy"]
    assert np.allclose(table.frame["cost"], t / (a * 100) ** 2)
    # model, executors, ... are constant: not factors; run/replicate/app_id are bookkeeping.
    assert table.factors == ("nodes", "learning_rate")


def test_include_failed_and_other_costs(tmp_path):
    harness_rows().to_csv(tmp_path / "results.csv", index=False)
    table = load_results(tmp_path, include_failed=True, cost="time")
    assert len(table.frame) == 8 and np.allclose(table.frame["cost"], table.frame["wall_clock_s"])
    table = load_results(tmp_path, cost="T / A**2")
    assert np.allclose(table.frame["cost"], table.frame["wall_clock_s"] / 0.81)


def test_existing_cost_column_is_used_as_is():
    table = load_results(TABLE2)
    raw = pd.read_csv(TABLE2)
    assert np.array_equal(table.frame["cost"].to_numpy(), raw["cost"].to_numpy())
    assert table.factors == ("nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size")
    assert len(table.frame) == 320 and table.n_dropped == 0


def test_exclude_runs():
    table = load_results(TABLE2, exclude_runs=[2, 3])
    assert len(table.frame) == 300 and not table.frame["run"].isin([2, 3]).any()


def test_table2_transcription_is_the_2_6_1_design():
    t = pd.read_csv(TABLE2)
    factors = ["nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size"]
    assert len(t) == 320 and (t.groupby("run").size() == 10).all()
    pts = t.groupby("run")[factors].first()
    codedpts = np.where(pts == pts.max(), 1, -1)
    assert len({tuple(r) for r in codedpts}) == 32
    assert (codedpts.prod(axis=1) == 1).all()  # I = ABCDEF
    assert t["cost"].between(0.004, 0.545).all()
    assert t.loc[t["run"] == 8, "cost"].max() == 0.545  # the outlier the paper's Q-Q plot shows


def test_accuracy_in_percent_is_refused(tmp_path):
    df = harness_rows().assign(accuracy=90.0)
    with pytest.raises(InvalidTableError, match="fraction"):
        build_table(df)


def test_missing_inputs():
    with pytest.raises(ResultsNotFoundError):
        load_results("/nonexistent/campaign")
    with pytest.raises(MissingColumnError, match="wall_clock_s"):
        build_table(pd.DataFrame({"a": [1, 2], "accuracy": [0.5, 0.6]}))


def test_detect_factors_skips_bookkeeping_and_constants():
    df = pd.DataFrame({"run": [1, 2], "x": [1, 2], "k": [3, 3], "opt": ["sgd", "adam"], "cost": [1.0, 2.0]})
    assert detect_factors(df) == ("x", "opt")


def test_harness_bookkeeping_columns_are_never_factors():
    from sparkdl.campaign import EXECUTION_COLUMNS, OUTCOME_COLUMNS
    from models.results import NON_FACTOR_COLUMNS

    # every results.csv column that is not a design factor is known as a non-factor
    assert set(OUTCOME_COLUMNS) | set(EXECUTION_COLUMNS) <= NON_FACTOR_COLUMNS


# --- factors declared, never guessed; status decided once; bad responses ------


def replicated_with_rep(rng: np.random.Generator) -> pd.DataFrame:
    """A 2^2 design x 4 replicates whose replicate column is called ``rep`` (not a known name)."""
    rows = []
    for a, b in itertools.product((1, 2), (10, 20)):
        for rep in range(1, 5):
            sd = 0.1 if a == 1 else 2.0  # unequal variances, so the test has something to find
            rows.append({"a": a, "b": b, "rep": rep, "cost": 5 + a + 0.1 * b + rng.normal(0, sd)})
    return pd.DataFrame(rows)


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(anova_main, [str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_rep_column_is_refused_then_factors_give_the_variance_test(tmp_path, capsys):
    data = replicated_with_rep(np.random.default_rng(3))
    path = tmp_path / "reps.csv"
    data.to_csv(path, index=False)
    with pytest.raises(InvalidTableError, match=r"'rep' is named like an identifier.*--factors a,b"):
        load_results(path)
    code, _, err = cli([path], capsys)
    assert code == 2 and err.startswith("error: column 'rep'") and err.count("\n") == 1
    code, out, _ = cli([path, "--factors", "a,b", "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["summary"]["design_points"] == 4 and doc["summary"]["replicated"] is True
    assert doc["input"]["factors"] == ["a", "b"] and doc["input"]["factors_from"] == "--factors"
    variance = next(c for c in doc["diagnostics"]["checks"] if c["assumption"].startswith("equal variances"))
    assert variance["verdict"] != "not tested"
    # independently: the same test on the response grouped by design point with scipy
    groups = [g["cost"].to_numpy() for _, g in data.groupby(["a", "b"])]
    ref = stats.bartlett(*groups) if variance["name"] == "Bartlett" else stats.levene(*groups, center="median")
    assert variance["statistic"] == pytest.approx(ref.statistic, rel=1e-9)
    assert variance["p"] == pytest.approx(ref.pvalue, rel=1e-9)


def test_manifest_declares_the_factors(tmp_path):
    data = replicated_with_rep(np.random.default_rng(4)).assign(seed=range(16))
    data.to_csv(tmp_path / "results.csv", index=False)
    from sparkdl.campaign import CampaignDir, Manifest

    CampaignDir(tmp_path).write_manifest(Manifest(factors=("a", "b"), responses=("cost",)))  # as the harness does
    table = load_results(tmp_path)
    assert table.factors == ("a", "b") and table.factors_from == "manifest.json"
    assert not any("taken from the columns" in n for n in table.notices())
    assert load_results(tmp_path, factors=["a"]).factors == ("a",)  # --factors wins
    (tmp_path / "manifest.json").write_text(json.dumps({"factors": ["a", "nodes"]}))
    with pytest.raises(MissingColumnError, match=r"\['nodes'\] \(manifest.json\)"):
        load_results(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(InvalidTableError, match="manifest.json is not a campaign manifest"):
        load_results(tmp_path)


def test_guessed_factors_are_named_on_stderr(tmp_path, capsys):
    rng = np.random.default_rng(5)
    rows = [{"x": x, "opt": o, "cost": 1 + x + (o == "adam") + rng.normal(0, 0.1)}
            for x, o in itertools.product((1, 2), ("sgd", "adam")) for _ in range(3)]
    path = tmp_path / "plain.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    code, _, err = cli([path], capsys)
    assert code == 0
    assert "note: factors taken from the columns (no manifest.json, no --factors): x, opt" in err
    assert "note: no 'status' column: all 12 rows assumed ok" in err


def test_a_text_column_with_a_value_per_row_is_refused(tmp_path):
    df = pd.DataFrame({"x": [1, 2, 1, 2], "host": ["h1", "h2", "h3", "h4"], "cost": [1.0, 2.0, 1.5, 2.5]})
    with pytest.raises(InvalidTableError, match="'host' is text with a different value in every row"):
        build_table(df)


def test_zero_ok_rows_says_so(tmp_path, capsys):
    df = harness_rows().assign(status=["failed"] * 5 + ["incomplete"] * 3)
    df.to_csv(tmp_path / "results.csv", index=False)
    code, _, err = cli([tmp_path], capsys)
    assert code == 2 and err == "error: 0 of 8 rows are ok (5 failed, 3 incomplete): nothing to analyse\n"


def test_status_is_decided_once():
    from models.results import ok_mask, status_is_ok

    df = pd.DataFrame({"status": ["ok", " OK", "failed", None, "pruned", "okay"]})
    assert ok_mask(df).tolist() == [True, True, False, False, False, False]
    assert [status_is_ok(s) for s in ("ok", "Ok ", "incomplete", float("nan"))] == [True, True, False, False]


def test_constant_response_is_refused(tmp_path, capsys):
    df = pd.DataFrame({"a": [1, 2, 1, 2], "b": [1, 1, 2, 2], "cost": [0.1] * 4})
    df.to_csv(tmp_path / "c.csv", index=False)
    code, _, err = cli([tmp_path / "c.csv", "--factors", "a,b"], capsys)
    assert code == 2 and err.splitlines() == [
        "note: no 'status' column: all 4 rows assumed ok",
        "error: response 'cost' is constant (4 values, all 0.1): there is no variation to analyse; "
        "pick a response that varies"]


def test_absurd_and_non_finite_responses_are_dropped_with_a_count():
    df = harness_rows()
    df.loc[0, "wall_clock_s"] = 1e308
    df.loc[4, "wall_clock_s"] = float("inf")
    df.loc[5, "wall_clock_s"] = -3.0
    table = build_table(df)
    assert table.dropped["wall_clock_s not a time in [0, 31536000] s"] == 3
    assert np.isfinite(table.frame["cost"]).all() and len(table.frame) == 2
    y = pd.DataFrame({"x": [1, 2, 1, 2, 1], "y": [1.0, 2.0, 1e200, float("nan"), 1.5]})
    table = build_table(y.assign(cost=1.0), response="y", factors=["x"])
    assert table.dropped == {"y not finite": 1, "y beyond +-1e+100": 1} and len(table.frame) == 3


def test_without_cost_only_status_and_the_response_filter_rows():
    df = harness_rows()  # row 3 has accuracy 0: no cost, but a valid time
    table = build_table(df, compute_cost=False, response="wall_clock_s")
    assert len(table.frame) == 6 and table.cost_name == "not computed" and "cost" not in table.frame
    assert table.dropped == {"status=failed": 1, "status=incomplete": 1}


# --- no results table makes a models CLI print a traceback ---------------------

STATUSES = ["ok", "ok", "ok", "failed", "incomplete", " OK", "", "pruned", "weird"]
ODD_NUMBERS = [0.0, -1.0, 1e308, -1e308, 5e-324, float("inf"), float("-inf"), float("nan"), 1.0, 2.5, 1e-300]


@st.composite
def results_tables(draw: st.DrawFn) -> pd.DataFrame:
    """Small results tables: some factor columns, maybe a rep/status column, odd or constant responses."""
    n = draw(st.integers(0, 12))
    column = lambda values: draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))  # noqa: E731
    numbers = st.one_of(st.sampled_from(ODD_NUMBERS), st.floats(allow_nan=True, allow_infinity=True),
                        st.floats(0.01, 100.0))
    cols: dict[str, list] = {}
    if draw(st.booleans()):
        cols["a"] = column([1, 2])
    if draw(st.booleans()):
        cols["b"] = column([0.1, 0.2, 0.4])
    if draw(st.booleans()):
        cols["opt"] = column(["sgd", "adam"])
    if draw(st.booleans()):
        cols["rep"] = list(range(n))
    if draw(st.booleans()):
        cols["status"] = column(STATUSES)
    kind = draw(st.sampled_from(["cost", "time+accuracy", "constant", "none"]))
    if kind == "cost":
        cols["cost"] = draw(st.lists(numbers, min_size=n, max_size=n))
    elif kind == "constant":
        cols["cost"] = [draw(numbers)] * n
    elif kind == "time+accuracy":
        cols["wall_clock_s"] = draw(st.lists(numbers, min_size=n, max_size=n))
        cols["accuracy"] = draw(st.lists(st.one_of(st.sampled_from(ODD_NUMBERS), st.floats(0, 1)), min_size=n,
                                         max_size=n))
    return pd.DataFrame(cols, index=range(n))


def run_quietly(main, argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = run_cli(main, argv)
    return code, err.getvalue()


def commands(path: Path, out: Path) -> list[tuple[str, object, list[str]]]:
    from report.cli import main as report_main
    from models.predict.cli import main as predict_main
    from models.queueing.cli import main as queueing_main

    p = str(path)
    return [
        ("models.anova", anova_main, [p, "--format", "json"]),
        ("models.anova --factors", anova_main, [p, "--factors", "a,b", "--kruskal"]),
        ("models.predict", predict_main, [p, "--models", "linear", "--split", "random"]),
        ("models.queueing", queueing_main, ["from-results", p, "--utilization", "0.5"]),
        ("report", report_main, [p, "--no-plots", "--out", str(out)]),
    ]


TRACEBACK = re.compile(r'Traceback \(most recent call last\):\n  File "')


def assert_no_traceback(path: Path, out: Path) -> None:
    for name, main, argv in commands(path, out):
        code, err = run_quietly(main, argv)
        assert code != 1, f"{name} hit a bug on {path.read_text()[:2000]!r}: {err}"
        # a Python traceback: its header and a frame on the next line. Not the words alone: a table whose one column
        # is named "Traceback (most recent call last)" (Hypothesis draws the test's own string constants) is named back
        assert not TRACEBACK.search(err), err
        if code != 0:
            errors = [line for line in err.splitlines() if line.startswith("error: ")]
            assert len(errors) == 1 and err.splitlines()[-1] == errors[0], (name, err)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(results_tables())
def test_no_results_table_makes_a_cli_print_a_traceback(table: pd.DataFrame) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.csv"
        table.to_csv(path, index=False)
        assert_no_traceback(path, Path(tmp) / "report.html")


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), st.binary(max_size=300).map(lambda b: b.decode("latin-1"))))
@example("Traceback (most recent call last)")  # once a flaky failure: a column of that name was named back
def test_no_file_content_makes_a_cli_print_a_traceback(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.csv"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        assert_no_traceback(path, Path(tmp) / "report.html")


def test_the_time_response_comes_from_the_campaigns_manifest(tmp_path):
    """predict's and plan's default --response: the time column the manifest records, else wall_clock_s."""
    from models.results import time_response
    from sparkdl.campaign import CampaignDir, Manifest

    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "results.csv").write_text("run,replicate,a,status,spark_jobs_span_s\n1,1,1,ok,3.5\n")
    assert time_response(folder) == "wall_clock_s"  # no manifest
    CampaignDir(folder).write_manifest(Manifest(factors=("a",), time="spark_jobs_span_s"))
    assert time_response(folder) == "spark_jobs_span_s"
    assert time_response(folder / "results.csv") == "spark_jobs_span_s"
    CampaignDir(folder).write_manifest(Manifest(factors=("a",), time="mixed"))
    assert time_response(folder) == "wall_clock_s"  # two time columns: no one default
    assert time_response(tmp_path / "missing") == "wall_clock_s"  # the command's reader reports the path


# ---------------------------------------------------------------- one span for wall_clock_s (rule 2)
MIXED = Path(__file__).resolve().parent / "fixtures" / "frameworks-campaign"


def test_a_campaign_mixing_bigdls_wall_clock_with_the_training_call_is_analysed_on_fit_s():
    raw = pd.read_csv(MIXED / "results.csv")
    assert set(raw["wall_clock_of"]) == {"bigdl-wall-clock", "fit"}  # the real campaign: the spans differ
    assert (raw["wall_clock_s"] < raw["fit_s"]).sum() == 4  # BigDL's Wall Clock is inside its call
    table = load_results(MIXED)
    assert table.frame["wall_clock_s"].tolist() == pytest.approx(raw["fit_s"].tolist())
    assert set(table.frame["wall_clock_of"]) == {"fit"}
    expected = raw["fit_s"] / (raw["accuracy"] * 100) ** 2  # the default cost T/(100A)^2 on the call
    assert table.frame["cost"].tolist() == pytest.approx(expected.tolist())
    (note,) = [n for n in table.notices() if "spans" in n]
    assert note == ("wall_clock_s measured different spans in these runs: BigDL's own Wall Clock in its log "
                    "(train_loop_s) in 4 rows, the training call (fit_s) in 4 rows. So that they compare, "
                    "wall_clock_s is each run's fit_s here (the training call)")


def test_the_split_plot_anova_of_wall_clock_s_on_mixed_spans_equals_that_of_fit_s(capsys):
    outputs = {}
    for response in ("wall_clock_s", "fit_s"):
        assert run_cli(anova_main, [str(MIXED), "--terms", "model * executors", "--response", response,
                                    "--format", "json"]) == 0
        outputs[response] = json.loads(capsys.readouterr().out)
    rows = {r: {t["term"]: (t["F"], t["p"]) for t in outputs[r]["rows"]} for r in outputs}
    for term, got in rows["fit_s"].items():
        assert rows["wall_clock_s"][term] == pytest.approx(got)
    # the stratum ANOVA by hand (balanced: 2 whole plots per model, 2 runs each): MS_model / MS_whole-plot error
    raw = pd.read_csv(MIXED / "results.csv")
    grand = raw["fit_s"].mean()
    by_model = raw.groupby("model")["fit_s"].transform("mean")
    by_plot = raw.groupby("whole_plot")["fit_s"].transform("mean")
    ms_model = ((by_model - grand) ** 2).sum() / 1
    ms_plots = ((by_plot - by_model) ** 2).sum() / 2
    f = ms_model / ms_plots
    assert rows["fit_s"]["model"] == pytest.approx((f, stats.f.sf(f, 1, 2)))
    assert rows["fit_s"]["model"][1] > 0.5  # the calls do not differ (examples/frameworks/README.md)


def test_one_span_is_left_alone_and_a_mix_without_fit_s_everywhere_is_named_not_changed():
    raw = pd.read_csv(MIXED / "results.csv")
    one = build_table(raw[raw["model"] == "lenet"])
    assert one.frame["wall_clock_s"].tolist() == raw.loc[raw["model"] == "lenet", "wall_clock_s"].tolist()
    assert not any("spans" in n for n in one.notices())
    gap = raw.assign(fit_s=raw["fit_s"].where(raw.index != 0))  # one BigDL run without its times line
    table = build_table(gap)
    assert table.frame["wall_clock_s"].tolist() == raw["wall_clock_s"].tolist()
    (note,) = [n for n in table.notices() if "spans" in n]
    assert "Not every run has a fit_s" in note and "--response" in note


# three wall clocks of tests/test_splitplot.py's two_level_split_plot(seed=5), as pandas' to_csv wrote them: pandas'
# default read_csv parser gave back ...749, ...069 and ...248, one or two ulp off
ULP_TRAPS = (94.29863468820747, 98.69711062528067, 100.74253890757247)


def test_a_results_table_reads_back_exactly_the_numbers_written(tmp_path):
    path = tmp_path / "results.csv"
    pd.DataFrame({"run": [1, 2, 3], "wall_clock_s": ULP_TRAPS}).to_csv(path, index=False)
    assert tuple(read_csv(path)[1]["wall_clock_s"]) == ULP_TRAPS


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=20))
def test_any_finite_float_survives_the_results_reader(tmp_path, values):
    path = tmp_path / "results.csv"
    pd.DataFrame({"run": range(1, len(values) + 1), "wall_clock_s": values}).to_csv(path, index=False)
    got = read_csv(path)[1]["wall_clock_s"].astype(float).tolist()
    assert got == [float(v) for v in values]
