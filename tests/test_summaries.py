"""Every model result has one summary (models.summary.Summary) with three renderings: the text a person reads, its
table as CSV and ``to_dict()`` as JSON. They are views of the same numbers: each test reads the CSV and the JSON
back and finds their numbers, formatted as the text formats them, in the text's lines; and the text is what the
command prints."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models.summary import Summary, csv_cell, num, p_text
from sparkdl.cli import run_cli


def read_csv(summary: Summary) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(summary.as_csv())))


def read_json(summary: Summary) -> dict:
    return json.loads(summary.as_json())


def line_of(summary: Summary, start: str) -> str:
    (line,) = [x for x in summary.lines if x.startswith(start)]
    return line


def test_a_summary_renders_its_three_views() -> None:
    s = Summary(("a line",), ("name", "x", "n", "missing"), (("a", 0.1, 3, math.nan), ("b", np.float64(2.5),
                                                                                     np.int64(4), None)),
                {"x": [0.1, math.inf], "n": np.int64(3)})
    assert s.render("text") == "a line"
    assert s.render("csv") == "name,x,n,missing\na,0.1,3,\nb,2.5,4,"
    assert json.loads(s.render("json")) == {"x": [0.1, None], "n": 3}
    assert [csv_cell(v) for v in (True, None, -math.inf, 1e-300, "t")] == ["True", "", "", "1e-300", "t"]


def test_one_text_number_and_one_p_value_for_every_table() -> None:
    assert [num(v) for v in (None, math.nan, np.float32("inf"), 3, 1234567.0, np.float64(0.000123456))] == \
        ["-", "-", "-", "3", "1.235e+06", "0.0001235"]
    assert num(0.5, "{:.2f}") == "0.50"
    assert [p_text(v) for v in (None, math.nan, 0.04567, 1e-4, 9.99e-5, 0.0)] == \
        ["-", "-", "0.0457", "0.0001", "1.0e-04", "0.0e+00"]


# ---------------------------------------------------------------- ANOVA


def anova_table() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = [(a, b, r) for a in (-1, 1) for b in (-1, 1) for r in range(3)]
    frame = pd.DataFrame(rows, columns=["a", "b", "rep"])
    frame["y"] = 10 + 2 * frame["a"] - frame["b"] + 0.5 * frame["a"] * frame["b"] + rng.normal(0, 0.3, len(frame))
    return frame


def test_the_anova_summary_is_the_format_modules_text_and_csv_and_to_dict() -> None:
    from models.anova import anova_summary, fit_anova, format_csv, format_summary, format_table

    result = fit_anova(anova_table().drop(columns="rep"), "y", "a * b")
    s = anova_summary(result)
    assert s.as_text() == format_table(result) + "\n\n" + format_summary(result)
    assert pd.read_csv(io.StringIO(s.as_csv())).equals(pd.read_csv(io.StringIO(format_csv(result))))
    doc = read_json(s)
    for row, csv_row, line in zip(doc["rows"], read_csv(s), s.lines[1:]):
        assert float(csv_row["sum_sq"]) == row["sum_sq"] == result.row(row["term"]).sum_sq
        assert line.split()[0] == row["term"] and f"{row['sum_sq']:.4g}" in line.split()


# ---------------------------------------------------------------- response surface


def test_the_surface_summary_numbers_are_the_texts() -> None:
    from models.rsm import analyse
    from tests.test_rsm import FACTORS, bbd_data

    frame, _, _ = bbd_data(seed=3)
    result = analyse(frame, "y", FACTORS)
    s = result.summary()
    assert list(s.lines) == result.text()
    doc = read_json(s)
    for row in read_csv(s):
        coded = doc["coded_coefficients"][row["term"]]
        assert float(row["coded"]) == coded["estimate"] and float(row["p"]) == coded["p"]
        assert float(row["natural"]) == doc["coefficients"][row["term"]]
        line = line_of(s, row["term"] + " ")
        assert line.split()[1:4] == [f"{float(row['natural']):.6g}", f"{float(row['coded']):.5g}",
                                     f"{float(row['se']):.4g}"]
    # one AnovaRow: the surface's ANOVA rows are models.anova's, the JSON its fields
    from models.anova import AnovaRow

    assert all(type(r) is AnovaRow for r in result.fit.anova)
    total = next(r for r in doc["anova"] if r["term"] == "total")
    assert total["sum_sq"] == pytest.approx(sum(r["sum_sq"] for r in doc["anova"] if r["term"] in
                                                ("model", "residual")))
    assert total["pct_variation"] == pytest.approx(100.0)
    for r in doc["anova"]:
        assert f"{r['sum_sq']:.5g}" in line_of(s, r["term"] + " ").split()


def test_the_surface_command_prints_the_summary(tmp_path, capsys) -> None:
    from models.rsm.cli import main
    from tests.test_rsm import write_results

    write_results(tmp_path)
    argv = [str(tmp_path), "--response", "accuracy", "--factors", "lr,batch,epochs"]
    assert run_cli(main, argv) == 0
    text = capsys.readouterr().out
    assert run_cli(main, argv + ["--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert f"R^2 {doc['r2']:.4f}, adjusted {doc['adj_r2']:.4f}" in text and "1 status=failed" in doc["rows"]
    assert text.splitlines()[0] == doc["rows"]


# ---------------------------------------------------------------- desirability


def test_the_desirability_summary_numbers_are_the_texts(tmp_path, capsys) -> None:
    from models.desirability import compromise
    from models.desirability.cli import main
    from tests.test_desirability import FACTORS, GOALS, campaign

    frame = campaign()
    result = compromise(frame, GOALS, FACTORS, seed=1)
    s = result.summary()
    assert list(s.lines) == result.text()
    doc = read_json(s)
    for row, response in zip(read_csv(s), doc["responses"]):
        assert row["response"] == response["response"]
        assert float(row["predicted"]) == response["predicted"]
        assert [float(row["prediction_low"]), float(row["prediction_high"])] == response["prediction_interval"]
        line = line_of(s, row["response"] + " ")
        assert f"{float(row['predicted']):.4g}" in line and f"{float(row['desirability']):.3f}" in line
        assert f"[{float(row['prediction_low']):.4g}, {float(row['prediction_high']):.4g}]" in line
    assert f"D = {doc['overall_desirability']:.4f}" in s.as_text()
    # the command prints the same numbers
    frame.to_csv(tmp_path / "results.csv", index=False)
    argv = [str(tmp_path), "--factors", ",".join(FACTORS), "--objective", "wall_clock_s:min:12:30",
            "--objective", "accuracy:max:0.6:0.9:i=2", "--seed", "1"]
    assert run_cli(main, argv) == 0
    text = capsys.readouterr().out
    assert run_cli(main, argv + ["--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # the table went through a CSV file: the same numbers to the last digits printed
    assert printed["overall_desirability"] == pytest.approx(doc["overall_desirability"], rel=1e-12)
    assert f"D = {printed['overall_desirability']:.4f}" in text
    assert printed["responses"][0]["predicted"] == pytest.approx(doc["responses"][0]["predicted"], rel=1e-12)


# ---------------------------------------------------------------- prediction


def test_the_prediction_summary_numbers_are_the_texts() -> None:
    from models.predict import compare, make_splits

    rng = np.random.default_rng(2)
    n = np.repeat([1, 2, 4, 8], 6)
    frame = pd.DataFrame({"nodes": n, "batch_size": np.tile([32, 64, 128], 8)})
    frame["wall_clock_s"] = 5 + 40 / frame["nodes"] + frame["batch_size"] / 64 + rng.normal(0, 0.2, len(frame))
    splits = make_splits(frame, ["random"], seed=1)
    result = compare(splits, "wall_clock_s", ["linear", "loglinear"], seed=1, factors=["nodes", "batch_size"],
                     level=None)
    s = result.summary(len(frame))
    assert s.as_text() == result.text(len(frame))
    doc = read_json(s)
    for row, doc_row in zip(read_csv(s), doc["rows"]):
        assert float(row["r2"]) == doc_row["r2"] and float(row["mse"]) == doc_row["mse"]
        assert row["coverage"] == "" and doc_row["coverage"] is None  # no intervals asked: NaN is empty / null
        line = line_of(s, f"{row['model']:<9} {row['split']}")
        assert f"{float(row['r2']):.3f}" in line.split() and f"{float(row['mse']):.4g}" in line.split()
        assert f"{100 * float(row['mape']):.1f}%" in line.split()


# ---------------------------------------------------------------- queueing


def test_one_queues_summary_numbers_are_the_texts(capsys) -> None:
    from models.queueing import mmk
    from models.queueing.cli import main

    s = mmk(2.8, 1.0, 4).summary()
    (row,) = read_csv(s)
    doc = read_json(s)
    for key in ("rho", "p_wait", "EN", "ENq", "ET", "ETq"):
        assert float(row[key]) == doc[key]
        assert line_of(s, f"{key:7s} ") == f"{key:7s} {doc[key]:.6g}"
    assert row["model"] == doc["model"] == "M/M/4" and int(row["servers"]) == 4
    assert run_cli(main, ["mmk", "--arrival-rate", "2.8", "--service-rate", "1", "--servers", "4"]) == 0
    assert capsys.readouterr().out == s.as_text() + "\n"


def test_a_queue_plan_from_results_and_fast_vs_slow_summaries(tmp_path, capsys) -> None:
    from models.queueing.cli import main

    (tmp_path / "t.csv").write_text("run,cost\n1,0.02\n2,0.04\n3,0.06\n")
    argv = ["from-results", str(tmp_path / "t.csv"), "--utilization", "0.8", "--servers", "1,4"]
    assert run_cli(main, argv) == 0
    text = capsys.readouterr().out.splitlines()
    assert run_cli(main, argv + ["--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for row, line in zip(doc["rows"], text[4:]):
        assert line.split()[:2] == [str(row["servers"]), row["model"]]
        assert line.split()[2:] == [f"{row[k]:.5g}" for k in ("arrival_rate", "rho", "p_wait", "EN", "ENq", "ET",
                                                                 "ETq")]
    assert run_cli(main, ["compare", "--servers", "4", "--utilization", "0.5,0.9", "--scv", "1,10",
                          "--format", "json"]) == 0
    grid = json.loads(capsys.readouterr().out)
    assert [(c["utilization"], c["scv"]) for c in grid["cells"]] == [(0.5, 1.0), (0.5, 10.0), (0.9, 1.0), (0.9, 10.0)]
    assert run_cli(main, ["compare", "--servers", "4", "--utilization", "0.5,0.9", "--scv", "1,10"]) == 0
    text = capsys.readouterr().out
    for c in grid["cells"]:
        assert f"{c['fast']['ET']:>9.4g} {c['slow']['ET']:>9.4g} {c['ratio']:>9.3f}  {c['winner']:6}" in text
    assert all(f"rho={rho}: {v:.3g}" in text for rho, v in grid["break_even_scv"].items())


def test_the_cpu_disk_summary_numbers_are_the_texts() -> None:
    from models.queueing import fit_cpu_disk
    from models.queueing.result import cpu_disk_fit
    from tests.test_queueing import _synthetic_runs

    configs, times, truth = _synthetic_runs()
    fitted = cpu_disk_fit(fit_cpu_disk(configs, times, 0.045), configs, times)
    s = fitted.summary()
    doc = read_json(s)
    assert doc["disk_rate"]["per_process"] == pytest.approx(truth[2], rel=1e-8)
    rows = read_csv(s)
    assert len(rows) == len(doc["rows"]) == len(set(configs))
    for row, doc_row, line in zip(rows, doc["rows"], s.lines[3:]):
        assert float(row["measured_ET"]) == doc_row["measured_ET"]
        assert float(row["run_high"]) == doc_row["run_high"]
        # role batch cpus workers njobs epochs runs measured [CI] predicted [CI] [PI] inside rho
        words = line.replace(", ", ",").split()
        assert words[0] == doc_row["role"] == "fit"
        assert [int(w) for w in words[1:7]] == [doc_row[k] for k in ("batch_size", "cpus", "workers", "njobs",
                                                                      "epochs", "runs")]
        assert [words[7], words[9], words[-1]] == [f"{doc_row['measured_ET']:.4g}", f"{doc_row['predicted_ET']:.4g}",
                                                   f"{doc_row['disk_rho']:.3f}"]
        assert words[11] == f"[{doc_row['run_low']:.4g},{doc_row['run_high']:.4g}]"
        assert words[12] == f"{doc_row['inside']}/{doc_row['runs']}"
    assert s.lines[-1].endswith(f"{doc['mape_config_means']:.1%}")


# ---------------------------------------------------------------- --format csv of every command reading a result


#: 15 real LeNet jobs of a Box-Behnken design (examples/rsm_lenet/results.csv).
REAL = Path(__file__).resolve().parents[1] / "examples" / "rsm_lenet"
REAL_FACTORS = "learning_rate,batch_size,epochs"


def _same_number(cell: str, value: float | None) -> bool:
    """A CSV cell holds the JSON's number unrounded (empty for null)."""
    return cell == "" if value is None else float(cell) == value


def _surface_rows(doc: dict, rows: list[dict[str, str]]) -> bool:
    return {r["term"] for r in rows} == set(doc["coefficients"]) and all(
        _same_number(r["natural"], doc["coefficients"][r["term"]]) for r in rows)


def _desirability_rows(doc: dict, rows: list[dict[str, str]]) -> bool:
    return [r["response"] for r in rows] == [x["response"] for x in doc["responses"]] and all(
        _same_number(r["predicted"], x["predicted"]) for r, x in zip(rows, doc["responses"]))


def _prediction_rows(doc: dict, rows: list[dict[str, str]]) -> bool:
    return [(r["model"], r["split"]) for r in rows] == [(x["model"], x["split"]) for x in doc["rows"]] and all(
        _same_number(r["r2"], x["r2"]) and _same_number(r["mse"], x["mse"]) for r, x in zip(rows, doc["rows"]))


def _queue_rows(doc: dict, rows: list[dict[str, str]]) -> bool:
    return [int(r["servers"]) for r in rows] == [x["servers"] for x in doc["rows"]] and all(
        _same_number(r["ET"], x["ET"]) for r, x in zip(rows, doc["rows"]))


#: command -> (its module, its arguments on the real table, its table's columns, the check of the rows against the JSON)
CSV_COMMANDS = {
    "rsm": ("models.rsm.cli", [str(REAL), "--response", "accuracy", "--factors", REAL_FACTORS],
            ("term", "natural", "coded", "se", "t", "p"), _surface_rows),
    "desirability": ("models.desirability.cli", [str(REAL), "--factors", REAL_FACTORS, "--objective", "wall_clock_s:min",
                                                 "--objective", "accuracy:max:0.5:0.9", "--seed", "1"],
                     ("response", "goal", "predicted", "prediction_low", "prediction_high"), _desirability_rows),
    "predict": ("models.predict.cli", [str(REAL), "--response", "wall_clock_s", "--factors", REAL_FACTORS,
                                       "--models", "linear,loglinear", "--split", "random", "--no-intervals"],
                ("model", "split"), _prediction_rows),
    "queueing": ("models.queueing.cli", ["from-results", str(REAL), "--servers", "1,2"],
                 ("servers", "model", "arrival_rate", "service_rate"), _queue_rows),
}


@pytest.mark.parametrize("command", sorted(CSV_COMMANDS))
def test_every_command_reading_a_result_prints_its_table_as_csv(command: str, capsys) -> None:
    """``--format csv`` on a real results table: stdout is one CSV (a header, rows of its length) holding the JSON's
    numbers unrounded."""
    import importlib

    module, argv, leading, same = CSV_COMMANDS[command]
    main = importlib.import_module(module).main
    assert run_cli(main, [*argv, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert run_cli(main, [*argv, "--format", "csv"]) == 0
    header, *body = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert tuple(header[:len(leading)]) == leading and body and all(len(row) == len(header) for row in body)
    assert same(doc, [dict(zip(header, row)) for row in body])
