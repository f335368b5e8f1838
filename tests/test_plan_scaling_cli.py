"""``sparkdl plan --scaling``: the command's design is the library's (models.power.scaling) on Ernest's documented
example, its design CSV is one ``sparkdl submit --dry-run`` accepts (the built-in job reads each run's fraction),
its precision at the target is what simulated campaigns show, and bad input is one line, exit 2, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models.power.cli import main
from models.power.scaling import design, features, plan_scaling, relative_error
from sparkdl.cli import run_cli
from tests.test_plan_scaling import ARGS, COLLECTED

ROOT = Path(__file__).resolve().parent.parent
ERNEST = ["--scaling", "--machines", "1..8", "--cores-per-machine", "4", "--fractions", "4/256..32/256",
          "--partitions", "256", "--budget", "20"]


def test_the_command_chooses_the_librarys_runs_on_ernest_s_example(capsys):
    assert run_cli(main, [*ERNEST, "--format", "json", "--at", "8,16", "--cv", "5%"]) == 0
    out = json.loads(capsys.readouterr().out)
    runs, _ = design(*ARGS, budget=20.0)
    assert sorted((r["machines"], round(r["fraction"], 6)) for r in out["runs"]) == \
        sorted((r.machines, round(r.fraction, 6)) for r in runs)
    assert {(m, s) for m, s in COLLECTED} <= {(r["machines"], round(r["fraction"], 6)) for r in out["runs"]}
    assert out["budget_units"] == 20.0 and out["candidates"] == 83 and out["df"] == len(runs) - 4
    # each run's cost is Ernest's (s / s_min) / m in units of --base-time (1 s); every weight above 0.3 runs once
    assert out["cost_s"] == pytest.approx(sum((r.fraction / (4 / 256)) / r.machines for r in runs))
    assert [t["machines"] for t in out["targets"]] == [8.0, 16.0] and all(t["half_width"] > 0 for t in out["targets"])
    assert [r["machines"] for r in out["runs"]] == sorted(r["machines"] for r in out["runs"])  # run order


def test_the_text_names_the_runs_their_cost_and_the_interval_at_the_target(capsys):
    assert run_cli(main, [*ERNEST[:-1], "10m", "--base-time", "30s", "--cv", "5%"]) == 0  # 20 runs of 30 s
    text = capsys.readouterr().out
    assert "14 of 83 candidate runs chosen" in text and "a run costs 30 s x (fraction / 0.015625) / machines" in text
    assert "at 8 machines (32 cores) on the full data: standard error" in text and "90% prediction interval" in text


def test_the_standard_error_is_what_simulated_campaigns_show():
    """Ernest's least squares on runs whose times are s/m with a 5 % noise: the spread of its prediction at 16
    machines on the full data over 4,000 campaigns is relative_error's (the sandwich form), to 5 %."""
    runs, _ = design(*ARGS, budget=20.0)
    s = np.array([r.fraction for r in runs])
    m = np.array([r.machines for r in runs], dtype=float)
    x, star = features(s, m), features(np.array([1.0]), np.array([16.0]))[0]
    rng = np.random.default_rng(7)
    truth = s / m
    times = truth * (1 + 0.05 * rng.standard_normal((4000, len(runs))))
    theta = np.linalg.lstsq(x, times.T, rcond=None)[0]
    spread = float(np.std(star @ theta)) / (1 / 16)
    assert spread == pytest.approx(0.05 * relative_error(runs, 16)[0], rel=0.05)
    assert relative_error(runs[:3], 16) == (float("inf"), float("inf"))  # three runs cannot fit four coefficients


def _submit_dry_run(design_csv: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sparkdl", "submit", str(design_csv), "--dry-run", "--local",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_sparkdl_submit_runs_the_written_design(tmp_path, capsys):
    out = tmp_path / "design.csv"
    assert run_cli(main, ["--scaling", "--machines", "1..4", "--fractions", "1/8..1/2", "--budget", "3m",
                          "--base-time", "20s", "--fixed", "model=lenet,epochs=1,learning_rate=0.05,batch_size=96",
                          "--out", str(out)]) == 0
    assert f"wrote 13 runs to {out}" in capsys.readouterr().err
    frame = pd.read_csv(out)
    assert list(frame.columns)[:6] == ["run", "replicate", "nodes", "executors", "executor_cores", "input_fraction"]
    assert frame["input_fraction"].between(1 / 8, 1 / 2).all() and frame["nodes"].between(1, 4).all()
    done = _submit_dry_run(out, tmp_path / "campaign")
    assert done.returncode == 0, done.stderr[-500:]
    lines = [line for line in done.stdout.splitlines() if "jobs/train.py" in line]
    assert len(lines) == len(frame)
    assert [float(line.split("--train-fraction ")[1].split()[0]) for line in lines] == \
        pytest.approx(frame["input_fraction"].tolist())


def test_a_work_column_of_samples_holds_whole_amounts(tmp_path, capsys):
    out = tmp_path / "d.csv"
    assert run_cli(main, ["--scaling", "--machines", "1..4", "--fractions", "1/8..1/2", "--budget", "40",
                          "--work", "samples=4000", "--out", str(out), "--format", "csv"]) == 0
    frame = pd.read_csv(out)
    rows = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert "input_fraction" not in frame and frame["samples"].tolist() == \
        [int(np.ceil(f * 4000 - 1e-9)) for f in rows["fraction"]]


@pytest.mark.parametrize("argv, needle", [
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "0.1"], "below the cheapest run"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "0.5"], "too few for Ernest's four coefficients"),
    (["--machines", "8..1", "--fractions", "1/64..1/8", "--budget", "20"], "the smallest must be below the largest"),
    (["--machines", "1..8", "--fractions", "1/8..1/64", "--budget", "20"], "the smallest must be below the largest"),
    (["--machines", "1..8", "--fractions", "0..1/8", "--budget", "20"], "above 0 and at most 1"),
    (["--machines", "1..8", "--fractions", "1/8..2", "--budget", "20"], "above 0 and at most 1"),
    (["--machines", "0..8", "--fractions", "1/64..1/8", "--budget", "20"], "at least 1"),
    (["--machines", "1..2", "--fractions", "1/8..1/2", "--budget", "1h"], "three or more machine counts"),
    (["--machines", "1.5..8", "--fractions", "1/64..1/8", "--budget", "20"], "whole machine counts"),
    (["--machines", "8", "--fractions", "1/64..1/8", "--budget", "20"], "give a range MIN..MAX"),
    (["--machines", "1..8", "--fractions", "1/0..1/8", "--budget", "20"], "not a number or a ratio"),
    (["--machines", "1..8", "--fractions", "1/64..1/8"], "needs --budget"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "20", "--base-time", "0s"], "--base-time"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "20", "--cores-per-machine", "0"], "1 to 10000"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "20", "--at", "8,8"], "distinct machine counts"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "20", "--fixed", "nodes=2"], "writes that column"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "20", "--fixed", "epochs"], "not key=value"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "20", "--work", "nodes"], "writes that column"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "20", "--cv", "5"], "% sign"),
    (["--machines", "1..8", "--fractions", "1/64..1/8", "--budget", "20", "results.csv"], "give no DESIGN"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, argv, needle):
    out = tmp_path / "design.csv"
    assert run_cli(main, ["--scaling", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


def test_the_scaling_flags_need_scaling_and_a_power_plan_still_needs_its_own(capsys):
    assert run_cli(main, ["--machines", "1..8"]) == 2
    assert "--machines belongs to a scaling design: add --scaling" in capsys.readouterr().err
    assert run_cli(main, []) == 2
    assert "needs DESIGN and --effect" in capsys.readouterr().err


def test_a_budget_too_small_to_identify_ernest_s_model_is_refused():
    from models.errors import PlanError

    with pytest.raises(PlanError, match="buys 2 runs"):
        plan_scaling((1, 8), 4, (4 / 256, 32 / 256), 1.5, partitions=256)


def test_the_built_in_jobs_read_a_runs_fraction_and_leave_it_out_when_the_design_has_none():
    from harness.job import builtin, column_problems
    from jobs.train import fraction_of, parse_args

    base = ["--learning-rate", "0.1", "--batch-size", "8", "--epochs", "1"]
    assert parse_args([*base, "--train-fraction", "0.125"]).train_fraction == 0.125
    assert parse_args(base).train_fraction is None and fraction_of(4000, None) is None
    assert (fraction_of(4000, 0.125), fraction_of(4000, 1 / 3), fraction_of(3, 0.01)) == (500, 1334, 1)
    for name in ("lenet", "birnn"):
        job = builtin(name)
        cols = ["nodes", "executors", "executor_cores", "learning_rate", "batch_size", "epochs"]
        assert column_problems(job, cols) == [] and column_problems(job, [*cols, "input_fraction"]) == []
        assert "--train-fraction" not in job.fill({"learning_rate": 0.1, "batch_size": 8, "epochs": 1, "seed": 1})
