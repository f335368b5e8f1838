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
from optimize.cli.pareto import main
from optimize.pareto import hypervolume, parse_objectives, pareto_front, per_epoch_front
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


def test_the_epochs_clock_is_checked_against_the_training_loop_not_the_training_call(tmp_path):
    """A run whose wall_clock_s is its training call (torch-lenet, harness/times.py) has its epochs on the loop's
    clock: train_loop_s is what the last epoch must equal; without it, only accuracy is checked."""
    synthetic_campaign(tmp_path)
    results = pd.read_csv(tmp_path / "results.csv")
    results["wall_clock_of"] = ["fit", None, None, None]
    results["train_loop_s"] = [30.0, None, None, None]
    results.loc[0, "wall_clock_s"] = 87.0  # the fit call, with the processes' start: longer than the loop
    assert len(harvest(results, tmp_path).table()) == 4
    results.loc[0, "train_loop_s"] = 29.0
    with pytest.raises(CampaignDataError, match=r"run 1-1: results.csv has train_loop_s 29 but its log's last "):
        harvest(results, tmp_path)
    results = results.drop(columns=["train_loop_s"])
    assert len(harvest(results, tmp_path).table()) == 4  # a fit time, no loop time: accuracy alone is checked
    results["wall_clock_of"] = [None] * 4  # a table from before the time vocabulary: wall_clock_s is the loop's
    with pytest.raises(CampaignDataError, match=r"run 1-1: results.csv has wall_clock_s 87 but"):
        harvest(results, tmp_path)


def test_without_a_log_column_the_log_is_found_by_the_runs_key(tmp_path):
    synthetic_campaign(tmp_path)
    results = pd.read_csv(tmp_path / "results.csv").drop(columns=["log"])
    assert [p.label for p in harvest(results, tmp_path).points] == ["1-1@1", "1-1@2", "1-1@3", "2-1@1"]


def test_cli_per_epoch_text_json_and_refused_objectives(tmp_path, capsys):
    synthetic_campaign(tmp_path)
    assert run_cli(main, [str(tmp_path), "--per-epoch", "--no-plot", "--reference-point", "wall_clock_s=40,accuracy=0"]) == 0
    text = capsys.readouterr().out
    assert "2-1@1" in text and "1-1@3" in text and "1-1@1 " not in text
    assert "3 of 4 validated epochs of 2 ok or pruned runs on the front (2 failed or incomplete runs left out)" in text
    assert "hypervolume 24.6 " in text
    assert run_cli(main, [str(tmp_path), "--per-epoch", "--format", "json", "--plot", str(tmp_path / "f.svg"),
                          "--reference-point", "wall_clock_s=40,accuracy=0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["per_epoch"], data["points"], data["harvested_runs"]) == (True, 4, 2)
    assert [(r["point"], r["epochs"], r["run_epochs"], r["run_status"]) for r in data["front"]] == [
        ("2-1@1", 1, 3, "pruned"), ("1-1@2", 2, 3, "ok"), ("1-1@3", 3, 3, "ok")]
    assert data["hypervolume"] == pytest.approx(24.6)
    assert run_cli(main, [str(tmp_path), "--per-epoch", "--objectives", "elapsed_s:min,accuracy:max"]) == 2
    assert "drop --per-epoch" in capsys.readouterr().err
    with pytest.raises(SearchOptionError, match="elapsed_s"):
        per_epoch_front(tmp_path, parse_objectives("elapsed_s:min,accuracy:max"))


# ---------------------------------------------------------------- bench/search.py: the same harvesting in every arm


def load_bench():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("bench_search", Path(__file__).parent.parent / "bench" / "search.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_search"] = bench  # dataclasses look their module up
    spec.loader.exec_module(bench)
    return bench


def arm(rows: list[tuple[int, float, float, list[tuple[float, float]]]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(results table, harvested points) of an arm of ok runs: (epochs, elapsed_s, status, validations)."""
    results, points = [], []
    for i, (epochs, elapsed, status, validations) in enumerate(rows, start=1):
        last = validations[-1] if status == "ok" else (None, None)
        results.append({"run": i, "replicate": 1, "epochs": epochs, "status": status, "elapsed_s": elapsed,
                        "wall_clock_s": last[0], "accuracy": last[1]})
        points += [{"run": i, "replicate": 1, "point": f"{i}-1@{e}", "epoch": e, "epochs": e, "status": "ok",
                    "wall_clock_s": w, "accuracy": a} for e, (w, a) in enumerate(validations, start=1)]
    return pd.DataFrame(results), pd.DataFrame(points)


def test_bench_scores_every_arm_per_run_and_per_epoch_against_one_reference():
    bench = load_bench()
    grid, grid_points = arm([(1, 40.0, "ok", [(10.0, 0.5)]), (2, 40.0, "ok", [(10.5, 0.52), (20.0, 0.7)]),
                             (3, 40.0, "ok", [(10.2, 0.49), (20.5, 0.69), (30.0, 0.8)])])
    found, found_points = arm([(3, 40.0, "ok", [(9.8, 0.51), (19.5, 0.7), (29.0, 0.79)])])
    rows = {r.name: r for r in bench.compare_arms({"grid": grid, "search": found},
                                                  {"grid": grid_points, "search": found_points})}
    minimised = lambda t: np.column_stack([t["wall_clock_s"].to_numpy(float), -t["accuracy"].to_numpy(float)])  # noqa: E731
    union = np.vstack([minimised(t) for t in (grid, found, grid_points, found_points)])
    worst, best = union.max(axis=0), union.min(axis=0)
    ref = worst + 0.1 * (worst - best)  # the reference from every arm's points, per run and per epoch
    assert rows["grid"].hypervolume == pytest.approx(hypervolume_by_cells(minimised(grid), ref))
    assert rows["search"].hypervolume == pytest.approx(hypervolume_by_cells(minimised(found), ref))
    assert rows["grid"].hypervolume_per_epoch == pytest.approx(hypervolume_by_cells(minimised(grid_points), ref))
    assert rows["search"].hypervolume_per_epoch == pytest.approx(hypervolume_by_cells(minimised(found_points), ref))
    assert (rows["grid"].points, rows["search"].points) == (6, 3)
    for r in rows.values():  # the harvested points hold each ok run's final one: never less volume
        assert r.hypervolume_per_epoch >= r.hypervolume
    per_run = rows["search"].hypervolume / rows["grid"].hypervolume
    per_epoch = rows["search"].hypervolume_per_epoch / rows["grid"].hypervolume_per_epoch
    assert per_run < 0.95 <= per_epoch  # one 3-epoch run is one point per run, but three per epoch
    assert "per run (search's" in bench.goal_line(list(rows.values())) and ": NOT met" in bench.goal_line(
        list(rows.values()))
    assert f": MET ({per_epoch:.1%} of the hypervolume in 33.3% of the time)" in bench.goal_line(
        list(rows.values()), per_epoch=True)
    table = bench.arm_table(list(rows.values()))
    assert "HV per run" in table and "HV per epoch" in table
    assert table.splitlines()[2].split()[-1] == f"{per_epoch:.3f}"
    # an extra search arm (bench --more-seeds) is judged on its own, against the same grid
    slow, slow_points = arm([(3, 80.0, "ok", [(9.8, 0.51), (19.5, 0.7), (29.0, 0.79)])])
    rows = bench.compare_arms({"grid": grid, "search": found, "search-seed1": slow},
                              {"grid": grid_points, "search": found_points, "search-seed1": slow_points})
    assert ": NOT met" in bench.goal_line(rows, per_epoch=True, arm="search-seed1")  # twice the time: 66.7 %
    assert "(search-seed1's hypervolume" in bench.goal_line(rows, per_epoch=True, arm="search-seed1")
    assert bench.arm_table(rows).splitlines()[3].startswith("search-seed1")


def test_bench_prints_its_design_before_any_job():
    bench = load_bench()
    args = bench.build_parser().parse_args(["--out", "x"])
    job = bench.parse_job(args.job, args.fixed)
    text = bench.design_text(bench.DEFAULT_SPACE, job, args)
    assert "learning_rate 0.01/0.0707107/0.5 x batch_size 32/64/128 x epochs 1/2/3 (27 points)" in text
    assert "grid   all 27 points, no pruning" in text
    assert "over learning_rate x batch_size at epochs 3, the lower epochs harvested; budget 0.333" in text
    assert "from 0.01 (doubling, then 10 % steps), batch 64, epochs 1, at most 10 jobs" in text
    assert "per epoch (every validated epoch of the ok and pruned runs, harvested alike in every arm)" in text
    old = bench.build_parser().parse_args(["--out", "x", "--search-epochs", "factor"])
    assert "over learning_rate x batch_size x epochs (epochs searched as a factor)" in bench.design_text(
        bench.DEFAULT_SPACE, job, old)
    front = bench.build_parser().parse_args(["--out", "x", "--pruner", "front"])  # the search arm's rule, as run
    assert "start-up trials from a Latin hypercube), front pruning, over" in bench.design_text(
        bench.DEFAULT_SPACE, job, front)


# ---------------------------------------------------------------- the report's time-against-accuracy section


def test_report_section_adds_the_per_epoch_front_of_a_campaign_folder(tmp_path):
    from report.front import render
    from report.html import num

    synthetic_campaign(tmp_path)
    raw = pd.read_csv(tmp_path / "results.csv")
    assert "validated epoch" not in render(raw, plots=False)  # a table alone: no logs to read
    html = render(raw, plots=False, target=0.6, campaign=tmp_path)
    front, _ = per_epoch_front(tmp_path, OBJECTIVES, pareto_front(raw, OBJECTIVES).reference)
    assert "Counting every validated epoch of the 2 ok and pruned runs" in html and "4 points, 3 on the front" in html
    assert "The fastest point reaching 0.6: 2-1@1, 4 s at accuracy 0.6." in html
    assert f"hypervolume {num(front.hypervolume)} against the same reference" in html
    (tmp_path / "logs" / "1-1.out").unlink()
    assert "No per-epoch front: run 1-1 is ok but its log" in render(raw, plots=False, campaign=tmp_path)


@pytest.mark.slow
@pytest.mark.cluster
def test_real_bench_harvests_every_arm(local_cluster, tmp_path):
    """bench/search.py on real LeNet jobs, 2 rates x 2 epochs: the grid's 4 runs give 6 validated epochs."""
    import subprocess
    import sys

    space = tmp_path / "space.toml"
    space.write_text("[learning_rate]\nchoices = [0.05, 0.5]\n\n[epochs]\nlow = 1\nhigh = 2\n")
    out = tmp_path / "bench"
    argv = [sys.executable, str(Path(__file__).parent.parent / "bench" / "search.py"), "--out", str(out),
            "--space", str(space), "--paper-points", "2", "--train-samples", "256", "--test-samples", "128",
            "--state-dir", str(local_cluster.state_dir), "--port", str(local_cluster.port),
            "--webui-port", str(local_cluster.webui_port), "--executor-memory", "600m"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("design of the comparison") and "over learning_rate at epochs 2" in proc.stdout
    grid = next(line.split() for line in proc.stdout.splitlines() if line.startswith("grid "))
    assert grid[1] == "4" and grid[10] == "6"  # jobs; validated epochs harvested (1 + 2 + 1 + 2)
    assert "goal per run" in proc.stdout and "goal per epoch" in proc.stdout
    searched = pd.read_csv(out / "search" / "results.csv")
    assert set(searched["epochs"]) == {2}  # the search arm ran every trial at the space's largest epochs
