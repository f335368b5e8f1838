"""The time vocabulary (sparkdl.times, harness.times): which span wall_clock_s is, the times line of a BigDL job, counts as integers.

Pure logic here; tests/test_frameworks.py runs lenet, torch-lenet, xgboost and mlp in one real design.
"""

from __future__ import annotations

import json

import pytest

from harness.metrics import parse_metrics
from harness.times import bigdl_times, wall_clock_of
from sparkdl.times import describe_wall_clock
from logparse.epochlines import parse_times, read_times


def test_counts_stay_integers_and_epochs_completed_fills_its_column():
    m = parse_metrics(json.dumps({"accuracy": 1, "wall_clock_s": 3, "fit_s": 3, "epochs_completed": 2,
                                  "processes": 2, "train_samples": 4000, "loss": 0.5}))
    assert m.problem is None
    assert type(m.figures["processes"]) is int and type(m.figures["train_samples"]) is int
    assert (m.accuracy, m.wall_clock_s, m.epochs_completed) == (1.0, 3.0, 2)
    assert type(m.accuracy) is float and type(m.wall_clock_s) is float  # the float columns stay floats
    assert "epochs_completed" not in m.extra()  # it fills the record's own column, not a metric
    assert parse_metrics('{"epochs_completed": 3.0}').epochs_completed == 3  # a count written as a float
    assert "whole number" in parse_metrics('{"epochs_completed": 2.5}').problem
    assert "whole number" in parse_metrics('{"epochs_completed": -1}').problem
    assert "whole number" in parse_metrics('{"epochs_completed": "two"}').problem


@pytest.mark.parametrize("figures, expected", [
    ({"wall_clock_s": 12.5, "fit_s": 12.5}, "fit"),
    ({"wall_clock_s": 2.5, "fit_s": 59.0}, "job"),  # torch's loop time reported as wall_clock_s: not the fit
    ({"wall_clock_s": 2.5}, "job"),
    ({"fit_s": 2.5}, None),
])
def test_wall_clock_of_says_whether_wall_clock_s_is_the_training_call(figures, expected):
    assert wall_clock_of(figures) == expected


def test_a_bigdl_run_has_its_fit_from_the_times_line_and_its_loop_from_the_log(tmp_path):
    log = tmp_path / "1-1.out"
    log.write_bytes(b"INFO DistriOptimizer$:474 - [Epoch 1 512/512][Iteration 8][Wall Clock 2.04s] Epoch finished\n"
                    b"sparkdl-times {\"fit_s\": 9.0}\n"
                    b"jobs.train: lenet trained 512 digits for 1 epoch(s) in 9.0 s (validated on 128)\n"
                    b"sparkdl-times {\"fit_s\": 9.125, \"train_loop_s\": -1, \"other\": 3}\n")
    assert read_times(log) == {"fit_s": 9.125}  # the last line counts; a negative time or another name is dropped
    assert bigdl_times(log, 2.04) == {"fit_s": 9.125, "train_loop_s": 2.04, "wall_clock_of": "bigdl-wall-clock"}
    assert bigdl_times(tmp_path / "none.out", None) == {"wall_clock_of": "bigdl-wall-clock"}
    assert parse_times(b'sparkdl-times {"fit_s": NaN}') is None and parse_times(b"sparkdl-times [1]") is None


def test_the_report_line_names_each_jobs_span():
    rows = [{"model": "lenet", "wall_clock_of": "bigdl-wall-clock"}, {"model": "torch-lenet", "wall_clock_of": "fit"},
            {"model": "torch-lenet", "wall_clock_of": None}, {"model": "xgboost", "wall_clock_of": "fit"}]
    assert describe_wall_clock(rows) == ("lenet: BigDL's own Wall Clock in its log (train_loop_s); "
                                         "torch-lenet: the training call (fit_s); xgboost: the training call (fit_s)")
    assert describe_wall_clock([{"wall_clock_of": "fit"}], "mlp") == "mlp: the training call (fit_s)"
    assert describe_wall_clock([{"x": 1}]) is None


def test_a_model_column_mixes_jobs_whose_columns_differ(tmp_path):
    from harness.designfile import check_design

    design = tmp_path / "design.csv"
    design.write_text("run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size,rounds,max_depth\n"
                      "1,lenet,1,1,2,2,0.05,64,,\n2,xgboost,1,1,2,,0.3,,3,3\n3,lenet,1,1,2,2,0.05,64,4,\n"
                      "4,xgboost,1,1,2,,0.3,,,3\n")
    checked = check_design(design)
    assert [dict(s.params) for s in checked.specs] == [
        {"model": "lenet", "epochs": 2, "learning_rate": 0.05, "batch_size": 64, "rounds": None, "max_depth": None},
        {"model": "xgboost", "epochs": None, "learning_rate": 0.3, "batch_size": None, "rounds": 3, "max_depth": 3}]
    assert checked.problems == [
        "row 3: rounds='4' is for the design's other jobs: the job lenet does not use rounds; leave it empty on this row",
        "row 4: rounds is empty: give a value"]
    design.write_text("run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size,trees\n"
                      "1,lenet,1,1,2,2,0.05,64,\n")
    from harness.errors import DesignFileError

    with pytest.raises(DesignFileError, match="design column trees is not used by the job lenet"):
        check_design(design)  # a column no job uses is still refused
