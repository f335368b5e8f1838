"""optimize.harvest: every validated epoch of the ok and pruned runs, read from real and written logs, and its front."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.runner import write_prune_line
from optimize.errors import CampaignDataError, SearchOptionError
from optimize.harvest import harvest
from optimize.pareto import hypervolume, main, parse_objectives, pareto_front, per_epoch_front
from sparkdl.cli import run_cli
from tests.test_optimize_fakes import LOG, epoch_text
from tests.test_optimize_pareto import hypervolume_by_cells, hypervolume_monte_carlo

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
OBJECTIVES = parse_objectives("wall_clock_s:min,accuracy:max")
#: A validation line, read independently of logparse: epoch, wall clock, Top1 accuracy.
TOP1 = re.compile(rb"\[Epoch (\d+) [^\]]*\]\[Iteration \d+\]\[Wall Clock ([0-9.]+)s\] Top1Accuracy is "
                  rb"Accuracy\(correct: \d+, count: \d+, accuracy: ([0-9.]+)\)")


def row(run: int, status: str, epochs: int, lr: float, wall: float | None = None, acc: float | None = None,
        log: str | None = None) -> dict[str, object]:
    return {"run": run, "replicate": 1, "model": "lenet", "nodes": 1, "executors": 1, "executor_cores": 1,
            "epochs": epochs, "learning_rate": lr, "batch_size": 64, "status": status, "wall_clock_s": wall,
            "accuracy": acc, "elapsed_s": 60.0, "log": f"logs/{run}-1.out" if log is None else log}


def top1(text: bytes) -> list[tuple[int, float, float]]:
    return [(int(e), float(w), float(a)) for e, w, a in TOP1.findall(text)]


# ---------------------------------------------------------------- real BigDL logs


def real_campaign(root: Path) -> dict[str, list[tuple[int, float, float]]]:
    """Five runs made of the fixture logs: ok (3 and 2 epochs), pruned after epoch 1, incomplete, failed.

    Returns each run's validations as the regex reads them from the raw text."""
    (root / "logs").mkdir(parents=True)
    made = {"1-1": ("lenet-lr2.5-3ep", False), "2-1": ("lenet-4000-2ep", False), "3-1": ("bigdl0-killed", True),
            "4-1": ("lenet-killed", False), "5-1": ("bad-data-dir", False)}
    truth = {}
    for key, (name, prune) in made.items():
        out = root / "logs" / f"{key}.out"
        out.write_bytes(gzip.decompress((FIXTURES / f"{name}.out.gz").read_bytes()))
        if prune:  # what the runner appends when a rule stops the job
            write_prune_line(out, "epoch 1 of 2: 2 of 3 earlier runs were faster and more accurate (median rule)")
        truth[key] = top1(out.read_bytes())
    final = {k: v[-1] for k, v in truth.items() if v}
    pd.DataFrame([row(1, "ok", 3, 2.5, *final["1-1"][1:]), row(2, "ok", 2, 0.1, *final["2-1"][1:]),
                  row(3, "pruned", 2, 0.5), row(4, "incomplete", 4, 0.05), row(5, "failed", 1, 0.05)]
                 ).to_csv(root / "results.csv", index=False)
    return truth


def test_real_logs_give_one_point_per_validated_epoch_of_ok_and_pruned_runs(tmp_path):
    truth = real_campaign(tmp_path)
    assert [len(truth[k]) for k in ("1-1", "2-1", "3-1", "4-1", "5-1")] == [3, 2, 1, 1, 0]
    got = harvest(pd.read_csv(tmp_path / "results.csv"), tmp_path)
    assert (got.runs, got.excluded) == (3, 2)  # the incomplete run's validated epoch is not harvested
    expected = [(k, *v) for k in ("1-1", "2-1", "3-1") for v in truth[k]]
    assert [(p.key, p.epoch, p.wall_clock_s, p.accuracy) for p in got.points] == expected
    assert [p.label for p in got.points] == ["1-1@1", "1-1@2", "1-1@3", "2-1@1", "2-1@2", "3-1@1"]
    table = got.table()
    # the factors of each point: the run's, with epochs = the point's epoch; the run's own epochs kept aside
    assert list(table["epochs"]) == [1, 2, 3, 1, 2, 1] and list(table["run_epochs"]) == [3, 3, 3, 2, 2, 2]
    assert list(table["learning_rate"]) == [2.5, 2.5, 2.5, 0.1, 0.1, 0.5]
    assert list(table["run_status"]) == ["ok"] * 5 + ["pruned"] and set(table["status"]) == {"ok"}


def test_an_ok_runs_last_point_is_its_recorded_result_and_the_per_epoch_front_contains_the_per_run_one(tmp_path):
    real_campaign(tmp_path)
    results = pd.read_csv(tmp_path / "results.csv")
    points = harvest(results, tmp_path).table()
    for _, r in results[results["status"] == "ok"].iterrows():
        last = points[points["run"] == r["run"]].iloc[-1]
        assert (last["wall_clock_s"], last["accuracy"], last["epochs"]) == (r["wall_clock_s"], r["accuracy"], r["epochs"])
    reference = [20.0, 0.0]
    per_run = pareto_front(results, OBJECTIVES, reference)
    per_epoch, _ = per_epoch_front(tmp_path, OBJECTIVES, reference)
    assert per_epoch.excluded == 2 and per_run.excluded == 3  # runs left out: (incomplete, failed) vs (+ pruned)
    assert per_epoch.hypervolume > per_run.hypervolume
    # the pruned run's only epoch (2.80 s, 0.289) is on the front: no ok run is as fast and as accurate
    assert "3-1@1" in set(per_epoch.front["point"])


def test_hypervolume_of_the_harvested_points_matches_cells_and_monte_carlo(tmp_path):
    truth = real_campaign(tmp_path)
    pts = np.array([(w, -a) for k in ("1-1", "2-1", "3-1") for _, w, a in truth[k]])  # minimisation form
    ref = np.array([20.0, -0.0])
    front, _ = per_epoch_front(tmp_path, OBJECTIVES, [20.0, 0.0])
    exact = hypervolume_by_cells(pts, ref)
    assert front.hypervolume == pytest.approx(exact, rel=1e-12)
    mc, se = hypervolume_monte_carlo(pts, ref, 200_000, 3)
    assert abs(mc - front.hypervolume) < 4 * se
    # had the incomplete run been harvested, its epoch would not change this front's volume, but a failed run's
    # good point would: the synthetic test below checks that case


# ---------------------------------------------------------------- written logs: who is harvested


def write_log(root: Path, key: str, epochs: list[tuple[float, float]], tail: str = "") -> None:
    text = LOG.format(model="lenet", lr=0.1, batch=64, epochs=3, n=1, used=0.1)
    text += "".join(epoch_text(e=e, wall=w, ms=1000.0, acc=a) for e, (w, a) in enumerate(epochs, start=1))
    (root / "logs").mkdir(parents=True, exist_ok=True)
    (root / "logs" / f"{key}.out").write_text(text + tail)


def synthetic_campaign(root: Path) -> None:
    """ok 3 epochs; pruned after epoch 1 (on the front); failed and incomplete runs with better points than anyone."""
    write_log(root, "1-1", [(10.0, 0.5), (20.0, 0.7), (30.0, 0.8)])
    write_log(root, "2-1", [(4.0, 0.6)], "\nsparkdl: pruned: epoch 1 of 3: median rule\n")
    write_log(root, "3-1", [(2.0, 0.9)], "Exception in thread main java.lang.OutOfMemoryError: Java heap space\n")
    write_log(root, "4-1", [(1.0, 0.95)])
    pd.DataFrame([row(1, "ok", 3, 0.1, 30.0, 0.8), row(2, "pruned", 3, 0.2), row(3, "failed", 3, 0.3),
                  row(4, "incomplete", 3, 0.4)]).to_csv(root / "results.csv", index=False)


def test_pruned_points_count_and_failed_or_incomplete_ones_do_not(tmp_path):
    synthetic_campaign(tmp_path)
    front, got = per_epoch_front(tmp_path, OBJECTIVES, [40.0, 0.0])
    assert [p.label for p in got.points] == ["1-1@1", "1-1@2", "1-1@3", "2-1@1"]
    assert list(front.front["point"]) == ["2-1@1", "1-1@2", "1-1@3"]  # 1-1@1 (10 s, 0.5) is beaten by 2-1@1
    # by hand, strips of the staircase against (40 s, accuracy 0): 36 x 0.6 + 20 x 0.1 + 10 x 0.1
    assert front.hypervolume == pytest.approx(24.6)
    # the per-run front of the same campaign has only the ok run's last epoch: 10 x 0.8
    assert pareto_front(pd.read_csv(tmp_path / "results.csv"), OBJECTIVES, [40.0, 0.0]).hypervolume == pytest.approx(8.0)
    assert hypervolume(np.array([[4.0, -0.6], [20.0, -0.7], [30.0, -0.8]]), [40.0, 0.0]) == pytest.approx(24.6)


def test_a_missing_or_foreign_log_is_refused_naming_the_run(tmp_path):
    synthetic_campaign(tmp_path)
    results = pd.read_csv(tmp_path / "results.csv")
    (tmp_path / "logs" / "2-1.out").unlink()
    with pytest.raises(CampaignDataError, match=r"run 2-1 is pruned but its log .* is missing"):
        harvest(results, tmp_path)
    synthetic_campaign(tmp_path)
    results.loc[0, "accuracy"] = 0.75
    with pytest.raises(CampaignDataError, match=r"run 1-1: results.csv has accuracy 0.75 but its log's last "):
        harvest(results, tmp_path)


def test_without_a_log_column_the_log_is_found_by_the_runs_key(tmp_path):
    synthetic_campaign(tmp_path)
    results = pd.read_csv(tmp_path / "results.csv").drop(columns=["log"])
    assert [p.label for p in harvest(results, tmp_path).points] == ["1-1@1", "1-1@2", "1-1@3", "2-1@1"]


def test_cli_per_epoch_text_json_and_refused_objectives(tmp_path, capsys):
    synthetic_campaign(tmp_path)
    assert run_cli(main, [str(tmp_path), "--per-epoch", "--no-plot", "--reference", "wall_clock_s=40,accuracy=0"]) == 0
    text = capsys.readouterr().out
    assert "2-1@1" in text and "1-1@3" in text and "1-1@1 " not in text
    assert "3 of 4 validated epochs of 2 ok or pruned runs on the front (2 failed or incomplete runs left out)" in text
    assert "hypervolume 24.6 " in text
    assert run_cli(main, [str(tmp_path), "--per-epoch", "--format", "json", "--plot", str(tmp_path / "f.svg"),
                          "--reference", "wall_clock_s=40,accuracy=0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["per_epoch"], data["points"], data["harvested_runs"]) == (True, 4, 2)
    assert [(r["point"], r["epochs"], r["run_epochs"], r["run_status"]) for r in data["front"]] == [
        ("2-1@1", 1, 3, "pruned"), ("1-1@2", 2, 3, "ok"), ("1-1@3", 3, 3, "ok")]
    assert data["hypervolume"] == pytest.approx(24.6)
    assert run_cli(main, [str(tmp_path), "--per-epoch", "--objectives", "elapsed_s:min,accuracy:max"]) == 2
    assert "drop --per-epoch" in capsys.readouterr().err
    with pytest.raises(SearchOptionError, match="elapsed_s"):
        per_epoch_front(tmp_path, parse_objectives("elapsed_s:min,accuracy:max"))
