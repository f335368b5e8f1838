"""Replaying a recorded surface: bench/surface.py records a grid through the campaign loop (fake Spark here),
optimize.search --replay runs the real search loop against it, pruning and charging as a real run."""

from __future__ import annotations

import argparse
import csv
import shutil
import importlib.util
import math
import random
import re
import sys
from pathlib import Path

import pytest

from harness.command import SubmitOptions
from harness.errors import CampaignError
from optimize.errors import SearchOptionError
from optimize.harvest import epoch_figures
from optimize.pareto import parse_objectives, read_campaign
from optimize.search.pruning import make_rules
from optimize.search.replay import ReplayCluster, ReplayError, Surface, point_of
from optimize.search.space import Factor, SearchSpace, at_largest_epochs
from optimize.search.study import MultiObjectiveSearch, SearchConfig, open_study
from optimize.session import ClusterOptions, JobConfig, open_session
from tests.test_optimize_fakes import FakeBackend, WatchingFakeRunner, fake_env

ROOT = Path(__file__).resolve().parent.parent


def load_bench(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"bench_{name}"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def curve(lr, batch, epoch, replicate):
    """A noisy surface: accuracy best near lr 0.1, batch 32 slower per epoch; each replicate its own noise."""
    noise = random.Random(f"{lr}|{batch}|{epoch}|{replicate}")
    quality = max(0.15, 0.95 - 0.12 * math.log(lr / 0.1) ** 2 - (0.05 if batch == 64 else 0.0))
    acc = 0.1 + (quality - 0.1) * (1 - 0.5 ** epoch) + noise.uniform(-0.01, 0.01)
    return round((8.0 if batch == 32 else 5.0) * epoch * (1 + noise.uniform(-0.05, 0.05)), 3), round(acc, 6)


class ReplicateRunner(WatchingFakeRunner):
    """The watching fake runner, with each replicate's own noise (read from the application's name)."""

    def __init__(self) -> None:
        super().__init__(self.outcome_of)
        self.replicate = 1

    def outcome_of(self, lr, batch, epoch, seed):
        return curve(lr, batch, epoch, self.replicate)

    def run(self, argv, env, out, err, timeout, on_start=None):
        self.replicate = int(re.search(r"run=\d+-(\d+)", argv[argv.index("--name") + 1]).group(1))
        return super().run(argv, env, out, err, timeout, on_start)


SPACE = SearchSpace((Factor("learning_rate", choices=(0.01, 0.1, 0.5)), Factor("batch_size", choices=(32, 64)),
                     Factor("epochs", 1, 3)))


@pytest.fixture(scope="module")
def surface_dir(tmp_path_factory) -> Path:
    surface = load_bench("surface")
    out = tmp_path_factory.mktemp("surface") / "rec"
    args = argparse.Namespace(replicates=3, grid_points=3, order_seed=1, train_samples=256, test_samples=128,
                              job_seed=42, resume=False)
    failed = surface.record(out, SPACE, JobConfig(model="lenet"), args, ClusterOptions(), backend=FakeBackend(),
                            runner=ReplicateRunner(), env=fake_env())
    assert failed == 0
    surface.write_surface_csv(out)
    return out


def test_the_recording_is_every_point_times_three_in_randomized_blocks(surface_dir):
    rows = list(csv.DictReader(open(surface_dir / "results.csv")))
    assert len(rows) == 18 * 3 and {r["status"] for r in rows} == {"ok"}
    cells = {(int(r["run"]), int(r["replicate"])) for r in rows}
    assert cells == {(run, rep) for run in range(1, 19) for rep in (1, 2, 3)}
    by_run = {int(r["run"]): (float(r["learning_rate"]), int(r["batch_size"]), int(r["epochs"])) for r in rows}
    assert sorted(by_run.values()) == sorted((p["learning_rate"], p["batch_size"], p["epochs"]) for p in SPACE.grid())
    # surface.csv: one row per validated epoch, the run's start-up = its elapsed_s less its last wall clock
    table = list(csv.DictReader(open(surface_dir / "surface.csv")))
    assert len(table) == 3 * sum(p["epochs"] for p in SPACE.grid())
    for r in table:
        lr, batch, epochs = by_run[int(r["run"])]
        wall, acc = curve(lr, batch, int(r["epoch"]), int(r["replicate"]))
        assert float(r["wall_clock_s"]) == pytest.approx(wall) and float(r["accuracy"]) == pytest.approx(acc)
        assert float(r["run_startup_s"]) == pytest.approx(5.0, abs=1e-3)  # the fake runner's start-up


def test_the_surface_knows_each_points_replicates_and_the_configurations_means(surface_dir):
    surface = Surface.load(surface_dir)
    assert surface.factors == ("epochs", "learning_rate", "batch_size")
    assert all(len(runs) == 3 for runs in surface.points.values()) and len(surface.points) == 18
    means = surface.mean_points()
    # (lr 0.1, batch 32, epoch 1) is measured by the 3 replicates of each of the epochs-1, -2 and -3 points
    row = means[(means.learning_rate == 0.1) & (means.batch_size == 32) & (means.epochs == 1)].iloc[0]
    walls = [curve(0.1, 32, 1, r)[0] for r in (1, 2, 3)] * 3
    assert row.n == 9 and row.wall_clock_s == pytest.approx(sum(walls) / 9)
    grid = sum(sum(curve(p["learning_rate"], p["batch_size"], p["epochs"], r)[0] + 5.0 for r in (1, 2, 3)) / 3
               for p in SPACE.grid())
    assert surface.grid_time_s() == pytest.approx(grid, rel=1e-6)


def replay_search(out: Path, surface: Surface, seed: int, pruner: str, budget: float, space: SearchSpace | None = None,
                  in_memory: bool = False, repeat: bool = True):
    space, epochs = at_largest_epochs(space or surface.space(), 1)
    config = SearchConfig(space, JobConfig(model="lenet", epochs=epochs), parse_objectives("wall_clock_s:min,accuracy:max"),
                          sampler="tpe", seed=seed, startup_trials=3, repeat=repeat)
    cluster = ReplayCluster(surface, seed)
    with open_session(out, {"replay": seed, "pruner": pruner}, SubmitOptions("spark://x:1"), ClusterOptions(),
                      [config.job.spec(1, 1)], False, backend=cluster) as session:
        outcome = MultiObjectiveSearch(session, open_study(out, config, in_memory), config, make_rules(pruner, None)).run(budget)
    return outcome, cluster


def test_a_replayed_search_prunes_and_charges_exactly_the_recorded_time_to_the_epoch(surface_dir, tmp_path):
    surface = Surface.load(surface_dir)
    outcome, cluster = replay_search(tmp_path / "r", surface, seed=4, pruner="median", budget=600)
    rows = read_campaign(tmp_path / "r").to_dict("records")
    assert len(rows) == len(cluster.log) == len(outcome.trials) >= 10
    assert {r["status"] for r in rows} == {"ok", "pruned"}
    for row, done in zip(rows, cluster.log):
        recorded = next(r for r in surface.replicates(done.point) if r.key == done.replicate)
        replayed = epoch_figures(tmp_path / "r" / row["log"])
        if row["status"] == "ok":  # the whole recorded run: its figures and its elapsed_s
            assert done.stopped_at is None and replayed == list(recorded.epochs)
            assert row["elapsed_s"] == pytest.approx(recorded.elapsed_s)
            assert (row["wall_clock_s"], row["accuracy"]) == pytest.approx(recorded.epochs[-1][1:])
        else:  # stopped after the epoch the watch judged: start-up + the wall clock there
            e = done.stopped_at
            assert row["reason"].startswith(f"pruned: epoch {e}:") and replayed == list(recorded.epochs[:e])
            assert row["elapsed_s"] == pytest.approx(recorded.elapsed_s - recorded.epochs[-1][1] + recorded.epochs[e - 1][1],
                                                     abs=1e-3)
    assert sum(r["elapsed_s"] for r in rows) == pytest.approx(outcome.cluster_time_s)


def test_the_front_rule_stops_exactly_the_runs_an_earlier_point_dominates(surface_dir, tmp_path):
    """Replayed with --pruner front: a run is stopped at the first epoch where some point of a run before it (at any
    epoch) dominates it, once 3 runs are in; every other run ends whole."""
    surface = Surface.load(surface_dir)
    replay_search(tmp_path / "r", surface, seed=4, pruner="front", budget=600, repeat=False)
    rows = read_campaign(tmp_path / "r").to_dict("records")
    curves = [epoch_figures(tmp_path / "r" / row["log"]) for row in rows]
    assert "pruned" in {r["status"] for r in rows}
    for i, (row, mine) in enumerate(zip(rows, curves)):
        earlier = [(w, a) for c in curves[:i] for _, w, a in c]
        beaten = [e for e, w, a in mine if i >= 3 and any(x <= w and y >= a and (x < w or y > a) for x, y in earlier)]
        planned = int(row["epochs"])
        if row["status"] == "pruned":
            assert row["reason"].endswith("front rule") and beaten and beaten[0] == mine[-1][0] < planned
        else:
            assert row["status"] == "ok" and (not beaten or beaten[0] == planned)


def test_the_draw_is_seeded_by_seed_point_and_count(surface_dir, tmp_path):
    surface = Surface.load(surface_dir)
    point = next(iter(surface.points))
    a, b = ReplayCluster(surface, 7), ReplayCluster(surface, 7)
    draws = [a.draw(point).key for _ in range(30)]
    assert draws == [b.draw(point).key for _ in range(30)]
    assert set(draws) == {r.key for r in surface.points[point]}  # every replicate comes up
    other = [ReplayCluster(surface, 8).draw(point).key for _ in range(1)]
    assert len(set(draws[:1]) | set(other)) >= 1
    first, _ = replay_search(tmp_path / "a", surface, seed=2, pruner="none", budget=150)
    again, _ = replay_search(tmp_path / "b", surface, seed=2, pruner="none", budget=150)
    assert [(t.params, t.values) for t in first.trials] == [(t.params, t.values) for t in again.trials]


def test_without_repeats_a_point_already_run_is_told_its_result_without_a_job(surface_dir, tmp_path):
    surface = Surface.load(surface_dir)
    outcome, cluster = replay_search(tmp_path / "r", surface, seed=5, pruner="none", budget=math.inf, in_memory=True,
                                     repeat=False)
    asked = [tuple(sorted(t.params.items())) for t in outcome.trials]
    assert len(asked) == len(set(asked)) == 6 == len(cluster.log)  # every (rate, batch) once, then no more jobs
    assert "nothing new to try" in outcome.stop_reason
    with_repeats, cluster = replay_search(tmp_path / "t", surface, seed=5, pruner="none", budget=1500, in_memory=True)
    assert len({tuple(sorted(t.params.items())) for t in with_repeats.trials}) < len(with_repeats.trials)


def test_points_off_the_grid_are_refused_with_the_levels(surface_dir, tmp_path):
    surface = Surface.load(surface_dir)
    continuous = SearchSpace((Factor("learning_rate", 0.01, 0.5, log=True), Factor("batch_size", choices=(32, 64))))
    with pytest.raises(ReplayError, match=r"\[learning_rate\]: a replay has only the recorded levels; write choices"):
        surface.check(continuous, JobConfig(model="lenet", epochs=3).spec(1, 1).as_row())
    off = SearchSpace((Factor("learning_rate", choices=(0.01, 0.2)), Factor("batch_size", choices=(32,))))
    with pytest.raises(ReplayError, match=r"learning_rate=0.2 \(recorded: 0.01, 0.1, 0.5\)"):
        surface.check(off, JobConfig(model="lenet", epochs=3).spec(1, 1).as_row())
    with pytest.raises(ReplayError, match="off the recorded grid"):  # and at run time, before any attempt
        ReplayCluster(surface).prepare(JobConfig(model="lenet", epochs=3, batch_size=16, learning_rate=0.1).spec(1, 1))
    assert point_of({"learning_rate": 0.1, "batch_size": 32.0}) == (("learning_rate", 0.1), ("batch_size", 32))


def test_the_command_line_replays_and_refuses_a_point_off_the_grid(surface_dir, tmp_path, capsys):
    from optimize.search.__main__ import main

    assert main(["--replay", str(surface_dir), "--job", "lenet", "--per-epoch", "--budget", "200s",
                 "--out", str(tmp_path / "cli"), "--seed", "1"]) == 0
    rows = read_campaign(tmp_path / "cli")
    assert len(rows) >= 5 and set(rows["epochs"]) == {3} and set(rows["learning_rate"]) <= {0.01, 0.1, 0.5}
    space = tmp_path / "space.toml"
    space.write_text("[learning_rate]\nchoices = [0.01, 0.3]\n[batch_size]\nchoices = [32]\n")
    with pytest.raises(ReplayError, match="learning_rate=0.3"):
        main(["--replay", str(surface_dir), "--job", "lenet", "--fixed", "epochs=3", "--space", str(space),
              "--budget", "200s", "--out", str(tmp_path / "off")])
    assert not (tmp_path / "off" / "results.csv").exists()


def test_a_search_resumed_with_other_settings_is_refused_naming_each_one(surface_dir, tmp_path):
    from optimize.search.__main__ import main

    args = ["--replay", str(surface_dir), "--job", "lenet", "--per-epoch", "--out", str(tmp_path / "s"), "--seed", "1"]
    assert main([*args, "--budget", "60s"]) == 0
    rows = len(read_campaign(tmp_path / "s"))
    with pytest.raises(CampaignError) as refused:  # started with the defaults: 3 start-up trials, no repeats
        main([*args, "--budget", "120s", "--resume", "--startup-trials", "5", "--repeat"])
    assert "(repeat false there, not set now; startup_trials 3 there, 5 now)" in str(refused.value)
    assert "resume it with the options it was started with" in str(refused.value)
    assert len(read_campaign(tmp_path / "s")) == rows  # nothing ran, nothing lost
    assert main([*args, "--budget", "120s", "--resume"]) == 0
    assert len(read_campaign(tmp_path / "s")) > rows


def test_a_search_resumed_under_another_pruning_rule_is_refused(surface_dir, tmp_path):
    """Two rules in one study would judge its runs two ways: the rule is a recorded setting (unrecorded = median,
    as every search ran before the front rule became the per-epoch default)."""
    from optimize.search.__main__ import main

    args = ["--replay", str(surface_dir), "--job", "lenet", "--per-epoch", "--seed", "1"]
    front, median = [*args, "--out", str(tmp_path / "front")], [*args, "--out", str(tmp_path / "median")]
    assert main([*front, "--budget", "60s"]) == 0  # per epoch, the front rule by default
    assert main([*median, "--budget", "60s", "--pruner", "median"]) == 0
    rows = len(read_campaign(tmp_path / "front"))
    with pytest.raises(CampaignError, match=r'\(pruner "front" there, not set now\)'):
        main([*front, "--budget", "120s", "--resume", "--pruner", "median"])
    with pytest.raises(CampaignError, match=r'\(pruner not set there, "front" now\)'):
        main([*median, "--budget", "120s", "--resume"])  # a search of the median rule, resumed with the defaults
    assert len(read_campaign(tmp_path / "front")) == rows  # nothing ran, nothing lost
    assert main([*front, "--budget", "120s", "--resume", "--pruner", "front"]) == 0
    assert main([*median, "--budget", "120s", "--resume", "--pruner", "median"]) == 0
    assert len(read_campaign(tmp_path / "front")) > rows

# ---------------------------------------------------------------- the arms and their scoring


def brute_hv(points, reference):
    """2-D hypervolume (both minimised) by summing the dominated area over the distinct x slices: independent of
    optimize.dominance's sweep."""
    xs = sorted({p[0] for p in points} | {reference[0]})
    area = 0.0
    for left, right in zip(xs, xs[1:]):
        ys = [p[1] for p in points if p[0] <= left]
        if ys:
            area += (right - left) * max(0.0, reference[1] - min(ys))
    return area


def test_the_truth_is_the_replicate_means_and_the_fraction_is_their_hypervolume_share(surface_dir):
    from optimize.search.arms import Truth

    surface = Surface.load(surface_dir)
    truth = Truth.of(surface)
    means = surface.mean_points()
    assert len(truth.values) == len(means) == 18  # 6 (lr, batch) x epochs 1..3
    values = [(w, -a) for w, a in truth.values.values()]
    ref = (max(v[0] for v in values), max(v[1] for v in values))
    span = (ref[0] - min(v[0] for v in values), ref[1] - min(v[1] for v in values))
    reference = (ref[0] + 0.1 * span[0], ref[1] + 0.1 * span[1])
    assert tuple(truth.reference) == pytest.approx(reference)
    assert truth.volume == pytest.approx(brute_hv(values, reference))
    assert truth.fraction(set(truth.values)) == pytest.approx(1.0)
    some = set(list(truth.values)[::3])
    expected = brute_hv([(truth.values[p][0], -truth.values[p][1]) for p in some], reference) / truth.volume
    assert truth.fraction(some) == pytest.approx(expected) and truth.fraction(set()) == 0.0


def test_the_fraction_at_a_budget_counts_only_the_runs_ended_within_it(surface_dir):
    from optimize.search.arms import ArmRun, Truth, budget_rows, fractions, pruning_saving

    truth = Truth.of(Surface.load(surface_dir))
    points = sorted(truth.values, key=lambda p: truth.values[p][0])
    t = truth.grid_time_s
    run = ArmRun("a", 0, (0.05 * t, 0.2 * t, 0.6 * t), (frozenset(points[:1]), frozenset(points[1:3]),
                                                         frozenset(points)), (False, True, False))
    got = fractions(run, truth, (0.1, 0.25, 0.5, 1.0))
    assert got == pytest.approx([truth.fraction(set(points[:1])), truth.fraction(set(points[:3])),
                                 truth.fraction(set(points[:3])), 1.0])
    other = ArmRun("a", 1, (0.3 * t,), (frozenset(points),), (False,))
    rows = budget_rows([run, other], truth)
    at_quarter = next(r for r in rows if r.budget == 0.25)
    assert at_quarter.hv_median == pytest.approx((got[1] + 0.0) / 2) and at_quarter.share_95 == 0.0
    assert next(r for r in rows if r.budget == 1.0).share_95 == 1.0
    from optimize.search.arms import time_to, times_to_goal

    first = next(i for i, n in enumerate((1, 3, len(points))) if truth.fraction(set(points[:n])) >= 0.95)
    assert time_to(run, truth) == pytest.approx(run.ended_s[first] / t) and time_to(other, truth) == pytest.approx(0.3)
    never = ArmRun("c", 0, (0.1 * t,), (frozenset(points[:1]),), (False,))
    assert times_to_goal([run, other, never], truth) == pytest.approx({"a": (run.ended_s[first] / t + 0.3) / 2,
                                                                       "c": math.inf})
    # pruning's saving: the first n trials of the same search with and without
    slow = ArmRun("b", 0, (0.1 * t, 0.4 * t, 0.9 * t), run.measured, (False,) * 3)
    saving = pruning_saving([run, slow], truth, "a", "b", trials=2)
    assert saving.trials == 2 and saving.saving == pytest.approx(1 - 0.2 / 0.4) and saving.loss == pytest.approx(0.0)


def test_optunas_pruner_stops_trials_from_the_cost_of_each_epoch(surface_dir, tmp_path):
    from optimize.search.arms import Arm, run_arm

    surface = Surface.load(surface_dir)
    run = run_arm(Arm("halving", sampler="random", pruner="none", optuna_pruner="halving"), surface, 3,
                  0.8 * surface.grid_time_s(), tmp_path)
    assert any(run.pruned) and not all(run.pruned)
    # successive halving's rungs are epochs 1, 3, 9...: a run of 3 epochs is stopped only at epoch 1
    assert all(len(m) == (1 if p else 3) for m, p in zip(run.measured, run.pruned))


def test_the_paper_rule_climbs_the_grids_rates_while_the_cost_falls(surface_dir, tmp_path):
    from optimize.search.arms import Arm, run_arm

    surface = Surface.load(surface_dir)
    run = run_arm(Arm("paper", kind="paper"), surface, 0, math.inf, tmp_path)
    rates = [dict(next(iter(m)))["learning_rate"] for m in run.measured]
    # batch 32, 1 epoch: cost T/A^2 falls from 0.01 to 0.1 and rises at 0.5 on this surface (by its curve)
    cost = {lr: sum(curve(lr, 32, 1, r)[0] / curve(lr, 32, 1, r)[1] ** 2 for r in (1, 2, 3)) for lr in (0.01, 0.1, 0.5)}
    assert cost[0.1] < cost[0.01] and cost[0.5] > cost[0.1]
    assert rates == [0.01, 0.1, 0.5] and run.stop == "the cost rose at 0.5"


def test_the_bench_prints_one_json_object_per_arm_and_budget(surface_dir, tmp_path, capsys):
    import json

    bench = load_bench("search")
    assert bench.main(["--replay", str(surface_dir), "--seeds", "2", "--arms", "default,grid", "--format", "json",
                       "--plot", str(tmp_path / "bands.png")]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["arm"], r["budget"]) for r in rows] == [(a, b) for a in ("default", "grid") for b in (0.1, 0.25, 0.5, 1.0)]
    assert all({"arm", "budget", "hv_median", "share_95"} <= set(r) for r in rows)
    grid = [r for r in rows if r["arm"] == "grid"]
    assert grid[-1]["hv_median"] <= 1.0 and grid[0]["hv_median"] < grid[-1]["hv_median"]
    assert (tmp_path / "bands.png").stat().st_size > 10_000
    with pytest.raises(SearchOptionError, match="--arms nope"):
        bench.main(["--replay", str(surface_dir), "--arms", "default,nope"])


def test_a_packed_surface_drops_the_schedulers_chatter_and_replays_alike(surface_dir, tmp_path):
    surface = load_bench("surface")
    src = tmp_path / "src"
    shutil.copytree(surface_dir, src)
    log = src / "logs" / "1-1.out"
    chatter = b"2026-11-23 15:04:30 INFO  DAGScheduler:57 - Job 3 finished: reduce at DistriOptimizer.scala:2, took 1 s\n"
    text = log.read_bytes()
    log.write_bytes(text.replace(b"\n", b"\n" + chatter, 3))
    short, whole = surface.pack(src, tmp_path / "dest")
    assert (short, whole) == (54, 0)
    assert (tmp_path / "dest" / "logs" / "1-1.out").read_bytes() == text  # the chatter gone, nothing else
    assert {p.name for p in (tmp_path / "dest").iterdir()} >= {"results.csv", "manifest.json", "surface.csv", "logs"}
    a, b = Surface.load(surface_dir), Surface.load(tmp_path / "dest")
    assert {k: [r.epochs for r in v] for k, v in a.points.items()} == {k: [r.epochs for r in v] for k, v in b.points.items()}
    with pytest.raises(SearchOptionError, match="not empty"):
        surface.pack(src, tmp_path / "dest")


def test_a_real_campaign_is_scored_like_a_replay_in_its_run_order(surface_dir):
    from optimize.search.arms import Truth, campaign_run, fractions

    real = campaign_run(surface_dir, Surface.load(surface_dir), "rec")
    rows = sorted(csv.DictReader(open(surface_dir / "results.csv")), key=lambda r: (int(r["run"]), int(r["replicate"])))
    elapsed = [float(r["elapsed_s"]) for r in rows]
    assert real.ended_s == pytest.approx([sum(elapsed[:i + 1]) for i in range(len(elapsed))])
    assert [len(m) for m in real.measured] == [int(r["epochs"]) for r in rows] and not any(real.pruned)
    truth = Truth.of(Surface.load(surface_dir))
    assert fractions(real, truth, (1.0,)) == pytest.approx([truth.fraction(real.configurations(real.within(truth.grid_time_s)))])
    assert truth.fraction(real.configurations(len(rows))) == pytest.approx(1.0)  # every run: every configuration


def test_a_real_campaigns_speed_against_the_recording_is_the_median_ratio_at_the_same_points(surface_dir, tmp_path):
    """bench/search.py --confirm sets a real search against the replays also on the recording's clock."""
    import pandas as pd

    from optimize.search.arms import campaign_run, on_clock, speed_ratio

    surface = Surface.load(surface_dir)
    table = pd.read_csv(surface_dir / "results.csv")
    factors = ["learning_rate", "batch_size", "epochs"]
    means = table.groupby(factors)["elapsed_s"].transform("mean")
    assert speed_ratio(surface_dir, surface) == pytest.approx(float((table["elapsed_s"] / means).median()))
    slower = tmp_path / "slower"
    shutil.copytree(surface_dir, slower)
    table.assign(elapsed_s=table["elapsed_s"] * 1.5).to_csv(slower / "results.csv", index=False)
    assert speed_ratio(slower, surface) == pytest.approx(1.5 * speed_ratio(surface_dir, surface))
    real = campaign_run(slower, surface, "slower")
    assert on_clock(real, 1.5).ended_s == pytest.approx(campaign_run(surface_dir, surface, "rec").ended_s)
    table.assign(learning_rate=0.3).to_csv(slower / "results.csv", index=False)  # off the grid: nothing to compare
    assert speed_ratio(slower, surface) is None


def test_confirm_prints_each_real_search_as_measured_and_on_the_recordings_clock_and_counts_the_band(
        surface_dir, tmp_path, capsys):
    import pandas as pd

    bench = load_bench("search")
    table = pd.read_csv(surface_dir / "results.csv")
    means = table.groupby(["learning_rate", "batch_size", "epochs"])["elapsed_s"].transform("mean")
    slower = tmp_path / "slower"  # every run took 1.5 x its point's recorded mean
    shutil.copytree(surface_dir, slower)
    table.assign(elapsed_s=means * 1.5).to_csv(slower / "results.csv", index=False)
    assert bench.main(["--replay", str(surface_dir), "--seeds", "3", "--arms", "default", "--confirm", str(slower)]) == 0
    out = capsys.readouterr().out.splitlines()
    first = next(i for i, line in enumerate(out) if line.startswith("real slower: 54 runs (0 pruned)"))
    measured, clocked, summary = out[first], out[first + 1], out[first + 2]
    assert clocked.startswith("  its runs took 1.50 x the recording's elapsed_s at the same points (median); "
                              "on the recording's clock: 0.1: ")
    n_in = lambda line: line.count(" in the band ")  # noqa: E731
    assert n_in(measured) + measured.count(" OUT of the band ") == 4 == n_in(clocked) + clocked.count(" OUT of the band ")
    assert summary.startswith(f"real searches in the default arm's 10-90 % band (search x budget): {n_in(measured)} of 4 "
                              f"as measured, {n_in(clocked)} of 4 on the recording's clock; the arm's own replays: ")


SHIPPED = Path(__file__).resolve().parent.parent / "bench" / "data" / "surface-lenet"


def test_the_most_pruning_can_save_is_stopping_every_longest_run_at_its_first_epoch():
    """From the recording's own per-epoch table (bench/surface.py wrote it, not the replay): each 3-epoch run costs
    its start-up plus epoch 1's wall clock when stopped there, instead of its elapsed time."""
    rows = [r for r in csv.DictReader(open(SHIPPED / "surface.csv")) if r["run_epochs"] == "3"]
    full = {(r["run"], r["replicate"]): float(r["run_elapsed_s"]) for r in rows}
    first = {(r["run"], r["replicate"]): float(r["run_startup_s"]) + float(r["wall_clock_s"])
             for r in rows if r["epoch"] == "1"}
    assert len(full) == len(first) == 27  # 9 points at 3 epochs, 3 replicates each
    bound = 1 - sum(first.values()) / sum(full.values())
    assert Surface.load(SHIPPED).most_pruning_saves() == pytest.approx(bound, abs=1e-3)
    assert 0.25 < bound < 0.30  # below the 30 % the comparison asks of pruning, whatever the rule


def test_on_the_long_lenet_surface_pruning_could_save_most_of_the_cluster_time():
    """bench/data/surface-lenet-long (all 4,000 digits, up to 6 epochs): 81 ok runs, and stopping every 6-epoch run at
    its first epoch would save about two thirds of their time (the short surface: 28 %), from its own table."""
    long = SHIPPED.parent / "surface-lenet-long"
    surface = Surface.load(long)
    assert len(surface.points) == 27 and all(len(runs) == 3 for runs in surface.points.values())
    rows = [r for r in csv.DictReader(open(long / "surface.csv")) if r["run_epochs"] == "6"]
    full = {(r["run"], r["replicate"]): float(r["run_elapsed_s"]) for r in rows}
    first = {(r["run"], r["replicate"]): float(r["run_startup_s"]) + float(r["wall_clock_s"])
             for r in rows if r["epoch"] == "1"}
    assert len(full) == len(first) == 27
    bound = 1 - sum(first.values()) / sum(full.values())
    assert surface.most_pruning_saves() == pytest.approx(bound, abs=1e-3) and bound > 0.6


def test_the_shipped_lenet_surface_is_a_whole_recording_that_logparse_reads_as_recorded():
    """bench/data/surface-lenet: 27 points x 3 ok replicates of real LeNet runs; each packed log still gives
    logparse the status, epochs and accuracy the recording kept (the pack checked it; this checks the copy)."""
    import json

    import logparse

    surface = Surface.load(SHIPPED)
    assert len(surface.points) == 27 and all(len(runs) == 3 for runs in surface.points.values())
    rows = list(csv.DictReader(open(SHIPPED / "results.csv")))
    assert len(rows) == 81 and {r["status"] for r in rows} == {"ok"}
    table = list(csv.DictReader(open(SHIPPED / "surface.csv")))
    last = {(r["run"], r["replicate"]): r for r in table if r["epoch"] == r["run_epochs"]}
    assert len(last) == 81
    for r in rows[:9]:
        parsed = logparse.parse(SHIPPED / "logs" / f"{r['run']}-{r['replicate']}.out")
        kept = last[(r["run"], r["replicate"])]
        assert parsed.status == "ok" and parsed.epochs_completed == int(kept["run_epochs"])
        assert parsed.accuracy == pytest.approx(float(kept["accuracy"]))
    provenance = json.loads((SHIPPED / "provenance.json").read_text())
    assert provenance["sessions"][0]["cpus"] >= 1 and provenance["sessions"][0]["command"].startswith("python bench/surface.py")


#: BigDL's per-batch line, written here apart from logparse's pattern (which the pack uses)
BATCH_LINE = re.compile(rb"\]\[Wall Clock [0-9.]+s\] Trained [0-9.]+ records in ")


def test_packing_keeps_the_first_and_last_iteration_line_of_each_epoch_and_what_logparse_reads(tmp_path):
    """A real log (the shipped LeNet surface keeps every iteration line): packing leaves of each unbroken stretch of
    per-batch lines (an epoch's, unless another line interrupts it) only the first and the last, keeps every other
    line in order, and logparse judges it as the original."""
    surface = load_bench("surface")
    row = next(r for r in csv.DictReader(open(SHIPPED / "results.csv")) if r["epochs"] == "3" and r["batch_size"] == "32")
    original = SHIPPED / str(row["log"])
    text = original.read_bytes()
    short = tmp_path / "short.out"
    short.write_bytes(surface.shortened(text))
    lines, kept = text.splitlines(keepends=True), short.read_bytes().splitlines(keepends=True)
    batch = [bool(BATCH_LINE.search(line)) for line in lines]
    assert sum(batch) == 3 * 32  # 1,024 digits in batches of 32, 3 epochs
    ends = [line for i, line in enumerate(lines) if batch[i] and not (0 < i < len(lines) - 1 and batch[i - 1]
                                                                       and batch[i + 1])]
    firsts = [line for line in lines if b"[Epoch " in line and b" 32/1024][" in line and BATCH_LINE.search(line)]
    lasts = [line for line in lines if b" 1024/1024][" in line and BATCH_LINE.search(line)]
    assert len(firsts) == len(lasts) == 3 and set(firsts + lasts) <= set(ends)  # every epoch's first and last batch
    assert [line for line in kept if BATCH_LINE.search(line)] == ends and len(ends) < sum(batch) / 4
    assert [line for line in kept if not BATCH_LINE.search(line)] == [
        line for i, line in enumerate(lines) if not batch[i]]
    it = iter(lines)
    assert all(line in it for line in kept)  # a subsequence: the order kept
    assert surface.same_judgement(original, short, row)
