"""The results table: status filtering, cost, factor detection, input errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models.errors import InvalidTableError, MissingColumnError, ResultsNotFoundError
from models.results import build_table, detect_factors, load_results

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
    from harness.schema import EXECUTION_COLUMNS, OUTCOME_COLUMNS
    from models.results import NON_FACTOR_COLUMNS

    # every results.csv column that is not a design factor is known as a non-factor
    assert set(OUTCOME_COLUMNS) | set(EXECUTION_COLUMNS) <= NON_FACTOR_COLUMNS
