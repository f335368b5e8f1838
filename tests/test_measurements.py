"""One rule for what a measurement is, in every command that reads runs, and the answers a new user got wrong.

Each table is built by hand: a campaign of 24 runs (batch_size x learning_rate x nodes, 3 replicates), then damaged as
a user's table would be (a time of 1e308, -5 or inf, an accuracy of 1.5, a bare table without manifest.json)."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models.results import (build_table, factor_list, guess_factors, invalid_measurements, is_measurement,
                            read_runs, set_aside_note)
from sparkdl.cli import run_cli

COLUMNS = ["run", "replicate", "model", "nodes", "executors", "executor_cores", "epochs", "learning_rate",
           "batch_size", "status", "wall_clock_s", "accuracy", "epoch_wall_clock_ms", "final_loss"]


def campaign(folder: Path, rows: int = 24, bad: dict[int, dict[str, object]] | None = None, manifest: bool = True,
             nodes: tuple[int, ...] = (1, 2), columns: list[str] | None = None) -> Path:
    """A campaign folder: 8 design points (batch_size, learning_rate, nodes) replicated in turn."""
    rng = random.Random(1)
    lines = []
    for i in range(rows):
        b, lr, n = (32, 64)[i % 2], (0.01, 0.1)[(i // 2) % 2], nodes[(i // 4) % len(nodes)]
        t = 100 + b * 0.5 + 30 / n + rng.random() * 5
        row = dict(run=i % 8 + 1, replicate=i // 8 + 1, model="lenet", nodes=n, executors=n, executor_cores=1,
                   epochs=2, learning_rate=lr, batch_size=b, status="ok", wall_clock_s=round(t, 3),
                   accuracy=round(min(0.8 + lr + rng.random() / 50, 0.99), 4),
                   epoch_wall_clock_ms=round(t * 500 + rng.random() * 100, 1), final_loss=round(rng.random(), 4))
        row.update((bad or {}).get(i, {}))
        lines.append(row)
    cols = columns or COLUMNS
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.csv").write_text(
        "\n".join([",".join(cols), *(",".join(str(r[c]) for c in cols) for r in lines)]) + "\n")
    if manifest:
        (folder / "manifest.json").write_text(json.dumps({"version": 1, "factors": ["batch_size", "learning_rate",
                                                                                   "nodes"]}))
    return folder


BAD_TIMES = {1: {"wall_clock_s": "1e308"}, 5: {"wall_clock_s": -5}, 9: {"wall_clock_s": "inf"}}
NOTE = "note: set aside 3 of 24 rows that are not measurements: wall_clock_s not a time in [0, 31536000] s (3)"


def run(main, argv: list[str], capsys) -> tuple[int, str, str]:
    code = run_cli(main, argv)
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- the rule itself


def test_the_rule_sets_aside_times_accuracies_and_counts_that_are_not_measurements():
    frame = pd.DataFrame({"wall_clock_s": [1.0, -5, np.inf, 4e7, 2.0, np.nan, 3.0],
                          "accuracy": [0.5, 0.5, 0.5, 0.5, 1.5, 0.5, -0.1],
                          "attempts": [1, 1, 1, 1, 1, -1, 1]})
    bad = invalid_measurements(frame)
    assert bad["wall_clock_s not a time in [0, 31536000] s"].tolist() == [False, True, True, True, False, False, False]
    assert bad["accuracy not a fraction in [0, 1]"].tolist() == [False, False, False, False, True, False, True]
    assert bad["attempts a negative or infinite count"].tolist() == [False] * 5 + [True, False]
    runs = read_runs_of(frame)
    assert len(runs.frame) == 1 and runs.frame["wall_clock_s"].tolist() == [1.0]
    assert runs.note() == ("set aside 6 of 7 rows that are not measurements: wall_clock_s not a time in "
                           "[0, 31536000] s (3), accuracy not a fraction in [0, 1] (2), "
                           "attempts a negative or infinite count (1)")


def read_runs_of(frame):
    from models.results import runs_of
    return runs_of(frame)


def test_a_time_column_in_milliseconds_has_its_bound_in_milliseconds():
    frame = pd.DataFrame({"epoch_wall_clock_ms": [5e4, 4e10, -1.0]})
    assert invalid_measurements(frame, also=["epoch_wall_clock_ms"])[
        "epoch_wall_clock_ms not a time in [0, 31536000000] ms"].tolist() == [False, True, True]


def test_percentages_are_refused_not_set_aside(tmp_path):
    from models.errors import InvalidTableError

    folder = campaign(tmp_path / "c", bad={i: {"accuracy": 80 + i / 10} for i in range(24)})
    with pytest.raises(InvalidTableError, match="divide percentages by 100"):
        read_runs(folder)


def test_no_note_when_nothing_is_set_aside():
    assert set_aside_note(5, {"status=failed": 2}) is None


# ---------------------------------------------------------------- the same note in every command


def _mains():
    from models.anova.cli import main as anova
    from models.power.cli import main as plan
    from optimize.cli.pareto import main as pareto
    from report.cli import main as report
    return anova, plan, pareto, report


def test_every_command_sets_aside_the_same_rows_with_the_same_note(tmp_path, capsys):
    anova, plan, pareto, report = _mains()
    folder = campaign(tmp_path / "c", bad=BAD_TIMES)
    for main, argv in ((anova, [str(folder), "--response", "wall_clock_s"]),
                       (plan, [str(folder), "--effect", "5%"]),
                       (pareto, [str(folder), "--no-plot"]),
                       (report, [str(folder), "--no-plots", "--out", str(tmp_path / "r.html")])):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # numpy or matplotlib overflowing on a time of 1e308
            code, out, err = run(main, argv, capsys)
        assert code == 0, (main.__module__, err)
        assert NOTE in err.splitlines(), (main.__module__, err)
        assert "inf" not in out.replace("info", "") and "nan" not in out, (main.__module__, out)


def test_pareto_on_times_of_1e308_gives_a_finite_hypervolume(tmp_path, capsys):
    _, _, pareto, _ = _mains()
    folder = campaign(tmp_path / "c", bad=BAD_TIMES)
    code, out, err = run(pareto, [str(folder), "--no-plot", "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    text = json.dumps(doc)
    assert "Infinity" not in text and "NaN" not in text
    assert NOTE in err


def test_an_accuracy_of_1_5_is_set_aside_by_every_command_not_refused_by_some(tmp_path, capsys):
    anova, plan, pareto, report = _mains()
    folder = campaign(tmp_path / "c", bad={4: {"accuracy": 1.5}})
    note = "note: set aside 1 of 24 rows that are not measurements: accuracy not a fraction in [0, 1] (1)"
    for main, argv in ((anova, [str(folder)]), (pareto, [str(folder), "--no-plot"]),
                       (report, [str(folder), "--no-plots", "--out", str(tmp_path / "r.html")])):
        code, _, err = run(main, argv, capsys)
        assert code == 0 and note in err.splitlines(), (main.__module__, err)


def test_predict_and_anova_tell_factors_from_measurements_by_one_rule(tmp_path):
    # a bare table of 6 runs: epoch_wall_clock_ms and final_loss were predict's factors and anova's measurements
    folder = campaign(tmp_path / "bare", rows=6, manifest=False,
                      columns=["nodes", "learning_rate", "batch_size", "wall_clock_s", "accuracy",
                               "epoch_wall_clock_ms", "final_loss"])
    frame = pd.read_csv(folder / "results.csv")
    guess = guess_factors(frame, exclude=["wall_clock_s"])
    assert guess.factors == ("nodes", "learning_rate", "batch_size")
    assert guess.measurements == ("epoch_wall_clock_ms", "final_loss")
    from models.predict.table import model_inputs
    _, choice = model_inputs(frame, "wall_clock_s", None, folder)
    assert choice.factors == guess.factors and choice.measurements == guess.measurements
    table = build_table(frame, response="wall_clock_s", csv_path=folder / "results.csv")
    assert table.factors == guess.factors and table.measurements == guess.measurements


def test_a_design_factor_with_few_repeated_levels_is_still_a_factor():
    assert not is_measurement(pd.Series([1, 2, 4, 1, 2, 4], name="nodes"))
    assert not is_measurement(pd.Series([0.01, 0.1, 0.01, 0.1], name="learning_rate"))
    assert is_measurement(pd.Series([1.5, 2.25, 3.125, 4.75], name="x"))  # a different fraction in every row
    assert is_measurement(pd.Series([1, 1, 2, 2], name="final_loss"))


# ---------------------------------------------------------------- plan


def test_a_factor_named_twice_is_refused_in_one_line(tmp_path, capsys):
    _, plan, _, _ = _mains()
    folder = campaign(tmp_path / "c")
    code, _, err = run(plan, [str(folder), "--effect", "5%", "--factors", "batch_size,batch_size"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("error: --factors 'batch_size,batch_size' names 'batch_size' twice")
    with pytest.raises(Exception, match="names 'a' twice"):
        factor_list("a,b,a")


def test_a_negative_effect_reaches_plan_and_is_refused_naming_the_fix(tmp_path, capsys):
    _, plan, _, _ = _mains()
    folder = campaign(tmp_path / "c")
    code, _, err = run(plan, [str(folder), "--effect", "-5%"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "give --effect 5%" in err and "expected one argument" not in err


def test_a_negative_number_is_an_options_value_in_every_command():
    from sparkdl.options import CommandParser

    p = CommandParser()
    p.add_argument("--at")
    for value in ("-5%", "-1e3", "-.5", "-2"):
        assert p.parse_args(["--at", value]).at == value


# ---------------------------------------------------------------- submit --until


def test_until_on_a_response_no_run_reports_is_refused_before_the_campaign(tmp_path, capsys):
    from harness.submit import main as submit

    design = tmp_path / "d.csv"
    design.write_text("run,nodes,executors,executor_cores,epochs,learning_rate,batch_size,model\n"
                      "1,1,1,1,2,0.1,64,lenet\n")
    code, out, err = run(submit, [str(design), "--dry-run", "--until", "ci(nope) < 5%"], capsys)
    assert code == 2 and err.count("\n") == 1 and out == "", err
    assert err.startswith("error: --until ci(nope): no run of this campaign reports nope")
    code, out, _ = run(submit, [str(design), "--dry-run", "--until", "ci(spark_jobs_span_s) < 5%"], capsys)
    assert code == 0 and out


# ---------------------------------------------------------------- drift


def test_the_drift_of_a_short_campaign_is_its_change_over_the_campaign_not_a_rate_extrapolated_per_hour():
    from datetime import datetime, timedelta, timezone

    from models.drift import check_drift

    # 24 runs over 3 minutes (0.05 h) whose time rises by 6 s in that span: 120 s per hour extrapolated
    t0 = datetime(2026, 12, 7, 8, 0, tzinfo=timezone.utc)
    rng = np.random.default_rng(4)
    minutes = np.linspace(0, 3, 24)
    y = 100 + 2 * minutes + rng.normal(0, 0.2, 24)
    frame = pd.DataFrame({"start": [(t0 + timedelta(minutes=float(m))).isoformat() for m in minutes], "y": y})
    drift = check_drift(frame, "y")
    text = drift.to_text()
    assert "per hour" not in text and "across 3.0 min" in text, text
    change = float(text.split("min: ")[1].split(" over the campaign")[0])
    assert change == pytest.approx(drift.slope_per_h * drift.span_h, rel=1e-3)
    assert change == pytest.approx(6.0, abs=0.6)  # what the data saw, not 120 per hour
    long = check_drift(frame.assign(start=[(t0 + timedelta(hours=float(m))).isoformat() for m in minutes]), "y")
    assert "per hour" in long.to_text()


# ---------------------------------------------------------------- predict


def _predict():
    from models.predict.cli import main
    return main


def test_predict_with_its_default_splits_on_runs_at_one_scale_gives_the_random_split_and_says_why(tmp_path, capsys):
    folder = campaign(tmp_path / "c", nodes=(1,))
    code, out, err = run(_predict(), [str(folder), "--models", "linear", "--fit-processes", "1"], capsys)
    assert code == 0, err
    assert ("note: the extrapolate split is left out (column 'parallelism' has one level; extrapolation needs at "
            "least two): the random split alone") in err.splitlines()
    assert "random split: random 19/5 rows" in out and "extrapolate split" not in out
    code, _, err = run(_predict(), [str(folder), "--models", "linear", "--split", "extrapolate"], capsys)
    assert code == 2 and err.startswith("error: column 'parallelism' has one level"), err  # asked for: refused


def test_a_tree_model_that_cannot_be_fitted_on_few_rows_is_a_note_on_its_row_not_an_error(tmp_path, capsys):
    folder = campaign(tmp_path / "c", rows=6)
    code, out, err = run(_predict(), [str(folder), "--models", "linear,rf,gb", "--split", "random",
                                      "--fit-processes", "1"], capsys)
    assert code == 0 and "error" not in err, err
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith(("rf ", "gb ", "linear "))}
    assert "rf needs at least 10 training rows" in rows["rf"] and "failed" not in rows["rf"]
    assert "gb needs at least 10 training rows" in rows["gb"]
    assert "needs at least" not in rows["linear"]


def test_the_scale_out_note_of_the_extrapolate_split_names_that_split(tmp_path, capsys):
    folder = campaign(tmp_path / "c")
    code, out, err = run(_predict(), [str(folder), "--models", "linear,amdahl", "--at", "8", "--no-intervals",
                                      "--fit-processes", "1"], capsys)
    assert code == 0, err
    notes = [line for line in out.splitlines() if "one level of parallelism (1)" in line]
    assert notes == ["scale-out on the extrapolate split (train parallelism < 4 (12 rows), test parallelism >= 4 "
                     "(12 rows)): the training rows have one level of parallelism (1); scale-out needs runs at two or "
                     "more scales"], out


def test_amdahl_names_the_two_factors_aliased_with_each_other_not_the_parallelism(tmp_path, capsys):
    folder = tmp_path / "alias"
    folder.mkdir()
    rng = random.Random(2)
    lines = ["run,replicate,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size,status,wall_clock_s,"
             "accuracy"]
    for i, (rep, n, b) in enumerate(((r, n, b) for r in (1, 2) for n in (1, 2, 4) for b in (32, 64))):
        lr = 0.01 if b == 32 else 0.1  # learning_rate set by batch_size in every run
        lines.append(f"{i + 1},{rep},lenet,{n},{n},1,2,{lr},{b},ok,{20 + 200 / n + b * 0.3 + rng.random():.3f},0.9")
    (folder / "results.csv").write_text("\n".join(lines) + "\n")
    (folder / "manifest.json").write_text(json.dumps({"version": 1, "factors": ["batch_size", "learning_rate",
                                                                               "nodes"]}))
    code, out, err = run(_predict(), [str(folder), "--models", "amdahl", "--split", "random", "--no-intervals"],
                         capsys)
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("amdahl "))
    assert "learning_rate and batch_size are aliased with each other" in row, row
    assert "parallelism is confounded" not in row
    code, out, err = run(_predict(), [str(folder), "--models", "amdahl", "--split", "random", "--no-intervals",
                                      "--factors", "nodes,batch_size"], capsys)
    row = next(line for line in out.splitlines() if line.startswith("amdahl "))
    assert code == 0 and "not identified" not in row, row  # keeping one of them identifies the curve


# ---------------------------------------------------------------- the readers of one run at a time, and of Courier's table


def test_the_stopping_rule_sets_aside_a_run_the_validity_rule_sets_aside():
    from harness.until import observations
    from sparkdl.campaign import RunRecord

    def record(run: int, replicate: int, t: object) -> RunRecord:
        return RunRecord.from_row({"run": run, "replicate": replicate, "model": "lenet", "nodes": 1, "executors": 1,
                                   "executor_cores": 1, "epochs": 1, "learning_rate": 0.1, "batch_size": 32,
                                   "status": "ok", "wall_clock_s": t, "accuracy": 0.9})

    got = observations([record(1, 1, 10.0), record(1, 2, 1e308), record(1, 3, -5.0), record(1, 4, 11.0)],
                       "wall_clock_s")
    assert [o.value for o in got[1]] == [10.0, None, None, 11.0]


def test_batch_on_a_courier_table_sets_aside_the_rows_every_command_sets_aside(tmp_path, capsys):
    from optimize.batch import load_table

    rows = ["batch,cpus,njobs,network,time,accuracy"] + [f"{b},{c},1,lenet,{t},0.9" for b, c, t in
                                                          ((32, 1, 10), (64, 1, 9), (32, 2, "1e308"), (64, 2, -5))]
    (tmp_path / "courier.csv").write_text("\n".join(rows) + "\n")
    table = load_table(tmp_path / "courier.csv")
    assert table["time"].tolist() == [10, 9]
    assert ("note: set aside 2 of 4 rows that are not measurements: time not a time in [0, 31536000] s (2)"
            in capsys.readouterr().err.splitlines())
