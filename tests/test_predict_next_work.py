"""``sparkdl predict --work COLUMN=VALUE --at M --next``: the next run is a parallelism and an amount of work, ranked
by the expected interval at the target (the full data at M), with the work in the table and the JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from models.predict.cli import main
from models.predict.scaleout import MAX_WORK_LEVELS, work_levels
from sparkdl.cli import run_cli


def _runs(path, fractions=(0.125, 0.25, 0.5)):
    rng = np.random.default_rng(1)
    rows = []
    for m in (1, 2, 3, 4):
        for s in fractions:
            for r in (1, 2):
                t = (5 + 80 * s / m + 2 * np.log(m) + 0.5 * m) * (1 + 0.03 * rng.standard_normal())
                rows.append({"run": len(rows) + 1, "replicate": r, "nodes": m, "executors": 1, "executor_cores": 1,
                             "input_fraction": s, "wall_clock_s": t, "status": "ok"})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_the_next_run_is_a_parallelism_and_an_amount_of_work(tmp_path, capsys):
    where = str(_runs(tmp_path / "results.csv"))
    argv = [where, "--work", "input_fraction=1", "--at", "6", "--next", "--no-intervals", "--split", "random",
            "--models", "ernest,usl,amdahl", "--candidates", "2,5"]
    assert run_cli(main, [*argv, "--format", "json"]) == 0
    advice = json.loads(capsys.readouterr().out)["next"]
    shapes = {(c["parallelism"], c["work"]) for c in advice["candidates"]}
    assert shapes == {(m, s) for m in (2.0, 5.0) for s in (0.125, 0.25, 0.5)}
    widths = [c["width"] for c in advice["candidates"]]
    assert widths == sorted(widths)
    # the cost is the predicted time at the candidate's own work: more work, a dearer run at the same m
    cost = {(c["parallelism"], c["work"]): c["cost"] for c in advice["candidates"]}
    assert cost[(5.0, 0.125)] < cost[(5.0, 0.25)] < cost[(5.0, 0.5)]
    assert run_cli(main, argv) == 0
    text = capsys.readouterr().out
    assert "next run (target m = 6, s = 1;" in text and "s: the amount of work of the runs" in text


def test_without_work_the_next_run_table_is_as_before(tmp_path, capsys):
    where = str(_runs(tmp_path / "results.csv", fractions=(1.0,)))
    assert run_cli(main, [where, "--at", "6", "--next", "--no-intervals", "--split", "random", "--models",
                          "ernest,usl,amdahl", "--candidates", "2,5", "--format", "json"]) == 0
    advice = json.loads(capsys.readouterr().out)["next"]
    assert [c["work"] for c in advice["candidates"]] == [None, None]


def test_the_work_levels_are_the_runs_own_spread_from_smallest_to_largest():
    assert work_levels(np.array([0.5, 0.125, 0.5, 0.25])) == [0.125, 0.25, 0.5]
    many = work_levels(np.arange(1, 11, dtype=float))
    assert len(many) == MAX_WORK_LEVELS and many[0] == 1 and many[-1] == 10
