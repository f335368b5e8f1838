"""optimize.search: the space, the pruning rules, the runner's watch on a real process, the ask-and-tell loop."""

from __future__ import annotations

import csv
import math
import sys
import textwrap
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

import logparse
from harness.command import SubmitOptions
from harness.runner import ProcessRunner
from optimize.errors import SearchOptionError
from optimize.pareto import parse_objectives
from optimize.search.pruning import (CurveTail, EpochFigure, FrontRule, HalvingRule, MedianRule, TargetRule, TrialWatch,
                                     dominates, make_rules)
from optimize.search.space import load_space
from optimize.search.study import MultiObjectiveSearch, SearchConfig, check_objectives, open_study
from optimize.session import ClusterOptions, JobConfig, open_session
from tests.test_optimize_fakes import epoch_text, FakeBackend, WatchingFakeRunner, fake_env

SPACE = """
[learning_rate]
low = 0.01
high = 0.5
log = true

[batch_size]
choices = [32, 64]
"""


def write(tmp_path: Path, text: str, name: str = "space.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


# ---------------------------------------------------------------- space.toml


def test_space_reads_ranges_and_choices_and_builds_the_grid(tmp_path):
    space = load_space(write(tmp_path, SPACE + "\n[epochs]\nlow = 1\nhigh = 3\n"))
    assert space.names == ("learning_rate", "batch_size", "epochs")
    grid = space.grid(3)
    assert len(grid) == 3 * 2 * 3
    assert sorted({g["learning_rate"] for g in grid}) == pytest.approx([0.01, math.sqrt(0.01 * 0.5), 0.5], rel=1e-5)
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=optuna.samplers.RandomSampler(seed=1))
    for _ in range(20):
        params = space.suggest(study.ask())
        assert 0.01 <= params["learning_rate"] <= 0.5 and params["batch_size"] in (32, 64)
        assert params["epochs"] in (1, 2, 3)


@pytest.mark.parametrize("text, needle", [
    ("[speed]\nlow = 1\nhigh = 2\n", "not a design factor"),
    ("[epochs]\nlow = 1.5\nhigh = 2\n", "whole number"),
    ("[learning_rate]\nlow = 0.5\nhigh = 0.1\n", "0 < low < high"),
    ("[learning_rate]\nlow = 0.1\n", "low and high"),
    ("[model]\nlow = 1\nhigh = 2\n", "choices"),
    ("[batch_size]\nchoices = []\n", "non-empty"),
    ("", "names no factor"),
    ("learning_rate = 3\n", "must be tables"),
    ("[epochs\n", "not valid TOML"),
])
def test_bad_space_files_are_refused_with_the_fix(tmp_path, text, needle):
    with pytest.raises(SearchOptionError, match=needle):
        load_space(write(tmp_path, text))


# ---------------------------------------------------------------- pruning rules


def fig(e, w, a):
    return EpochFigure(e, w, a)


def test_target_rule_by_hand():
    rule = TargetRule(0.9)
    # epoch 1 at 0.4: gain over chance 0.3; 3 epochs left: 0.4 + 2 * 0.3 = 1.0 >= 0.9, go on
    assert rule.check([fig(1, 5, 0.4)], 3, []) is None
    # epoch 2 at 0.45: best gain still 0.3: 0.45 + 0.3 = 0.75 < 0.9: stop
    reason = rule.check([fig(1, 5, 0.4), fig(2, 10, 0.45)], 3, [])
    assert reason and "0.7500 < target 0.9" in reason
    # a curve that never rose above chance cannot reach anything above it
    assert TargetRule(0.2).check([fig(1, 5, 0.05)], 10, []) is not None


def test_median_rule_matches_a_direct_count():
    history = [[fig(1, w, a)] for w, a in ((4, 0.5), (6, 0.7), (3, 0.2), (8, 0.9), (5, 0.6))]
    rule = MedianRule(min_runs=3)
    for w, a in ((5.5, 0.55), (2, 0.1), (9, 0.95), (7, 0.3), (4, 0.5)):
        me = fig(1, w, a)
        beaten = sum(1 for (h,) in history if h.wall_clock_s <= w and h.accuracy >= a
                     and (h.wall_clock_s < w or h.accuracy > a))
        assert (rule.check([me], 2, history) is not None) == (beaten >= 3)
    assert MedianRule(min_runs=6).check([fig(1, 100, 0.0)], 2, history) is None  # too few earlier runs
    assert rule.check([fig(1, 100, 0.0)], 2, [[fig(2, 1, 1.0)]] * 5) is None  # nobody reached epoch 1


def test_halving_rule_acts_on_rungs_only():
    history = [[fig(1, 1, 0.9), fig(2, 2, 0.95), fig(3, 3, 0.97)]] * 4
    rule = HalvingRule(eta=3, min_runs=3)
    assert rule.check([fig(1, 5, 0.1)], 5, history) is not None  # rung 0
    assert rule.check([fig(2, 6, 0.2)], 5, history) is None  # epoch 2 is no rung (eta 3: rungs 1, 3, 9)
    assert rule.check([fig(3, 6, 0.2)], 5, history) is not None  # rung 1
    assert rule.check([fig(1, 0.5, 0.1)], 5, history) is None  # the fastest: nobody dominates it


def test_front_rule_stops_a_run_any_earlier_point_dominates_at_any_epoch():
    # three earlier runs; their points at every epoch are the front so far
    history = [[fig(1, 5, 0.60), fig(2, 10, 0.80), fig(3, 15, 0.85)],
               [fig(1, 3, 0.90), fig(2, 6, 0.95)],
               [fig(1, 20, 0.20)]]
    rule = FrontRule(min_runs=3)
    # epoch 1 at 8 s, 0.85: no earlier run reached 0.85 by epoch 1, but run 2's epoch 1 (3 s, 0.90) beats it
    reason = rule.check([fig(1, 8, 0.85)], 6, history)
    assert reason and "dominated by a point of the 3 earlier runs" in reason and "front rule" in reason
    # the median rule, which compares epoch 1 with epoch 1 only, lets it go on (1 of 3 beat it)
    assert MedianRule(min_runs=3).check([fig(1, 8, 0.85)], 6, history) is None
    assert rule.check([fig(1, 2, 0.5)], 6, history) is None  # the fastest so far
    assert rule.check([fig(1, 30, 0.96)], 6, history) is None  # the most accurate so far
    assert rule.check([fig(1, 6, 0.95)], 6, history) is None  # equal to a point is not dominated
    assert FrontRule(min_runs=4).check([fig(1, 100, 0.0)], 6, history) is None  # too few earlier runs
    # patience 2: both of the last two epochs dominated
    patient = FrontRule(patience=2, min_runs=3)
    assert patient.check([fig(1, 8, 0.85)], 6, history) is None  # one epoch only
    assert patient.check([fig(1, 4, 0.95), fig(2, 8, 0.9)], 6, history) is None  # its epoch 1 was on the front
    assert patient.check([fig(1, 8, 0.85), fig(2, 16, 0.84)], 6, history) is not None
    for f, dominated in ((fig(1, 8, 0.85), True), (fig(1, 2, 0.5), False), (fig(1, 11, 0.81), True)):
        direct = any(p.wall_clock_s <= f.wall_clock_s and p.accuracy >= f.accuracy
                     and (p.wall_clock_s < f.wall_clock_s or p.accuracy > f.accuracy) for c in history for p in c)
        assert direct == dominated == (rule.check([f], 6, history) is not None)


def test_dominates():
    assert dominates(fig(1, 1, 0.9), fig(1, 2, 0.8)) and not dominates(fig(1, 1, 0.9), fig(1, 1, 0.9))
    assert not dominates(fig(1, 1, 0.7), fig(1, 2, 0.8))


def test_curve_tail_reads_whole_lines_incrementally(tmp_path):
    out = tmp_path / "1-1.out"
    line = epoch_text(e=1, wall=2.5, ms=2500, acc=0.4)
    out.write_text(line[:-20])  # a validation line cut mid-way
    tail = CurveTail(out)
    assert tail.read() == []
    with open(out, "a") as f:
        f.write(line[-20:] + epoch_text(e=2, wall=5.0, ms=2500, acc=0.6))
    assert tail.read() == [fig(1, 2.5, 0.4), fig(2, 5.0, 0.6)]
    assert tail.read() == [] and tail.curve == [fig(1, 2.5, 0.4), fig(2, 5.0, 0.6)]


def test_trial_watch_asks_rules_on_new_epochs_short_of_the_last(tmp_path):
    out = tmp_path / "1-1.out"
    out.write_text(epoch_text(e=1, wall=2.0, ms=2000, acc=0.2))
    watch = TrialWatch(make_rules("none", target=0.99), planned=2, history=[])
    assert watch(out) and "target 0.99" in watch.reasons[0]
    last = TrialWatch(make_rules("none", target=0.99), planned=1, history=[])
    assert last(out) is None  # the last epoch: nothing left to save


# ---------------------------------------------------------------- the runner's watch, on a real process


JOB = """
import sys, time
line = "26-11-23 15:04:44 [Thread-5] INFO  DistriOptimizer$:184 - [Epoch {e} 256/256][Iteration 4][Wall Clock {w}s] Top1Accuracy is Accuracy(correct: 23, count: 128, accuracy: {a})"
for e in range(1, 6):
    time.sleep(0.6)
    print(line.format(e=e, w=0.6 * e, a=0.1 + 0.02 * e), flush=True)
print("done", flush=True)
"""


def test_process_runner_watch_stops_a_real_process_and_logparse_calls_it_pruned(tmp_path):
    script = write(tmp_path, JOB, "job.py")
    out, err = tmp_path / "1-1.out", tmp_path / "1-1.err"
    watch = TrialWatch(make_rules("none", target=0.9), planned=5, history=[])
    completed = ProcessRunner(watch).run([sys.executable, str(script)], {"PATH": "/usr/bin:/bin"}, out, err, 60)
    assert completed.stopped and "target 0.9" in completed.stopped and not completed.timed_out
    assert completed.elapsed_s < 2.6  # stopped after epoch 1 (0.6 s) + at most a 1 s watch interval (+ slack)
    text = out.read_text()
    assert "done" not in text and text.rstrip().splitlines()[-1].startswith("sparkdl: pruned: epoch 1 of 5")
    log = logparse.parse(out, expected_epochs=5)
    assert log.status == logparse.Status.PRUNED and log.reason.startswith("pruned: epoch 1 of 5")
    assert log.failure_kind is None
    # without a watch the same job runs to its end and is not pruned
    completed = ProcessRunner().run([sys.executable, str(script)], {"PATH": "/usr/bin:/bin"}, out, err, 60)
    assert completed.stopped is None and "done" in out.read_text()


# ---------------------------------------------------------------- the ask-and-tell loop (fake Spark)


def curve(lr, batch, epoch, seed):
    """Accuracy rises with epochs, best near lr 0.1; batch 32 is slower per epoch but learns more."""
    quality = max(0.15, 0.95 - 0.12 * math.log(lr / 0.1) ** 2 - (0.05 if batch == 64 else 0.0))
    acc = 0.1 + (quality - 0.1) * (1 - 0.5 ** epoch)
    return (8.0 if batch == 32 else 5.0) * epoch, round(acc, 6)


def run_fake_search(out, space, runner, *, budget, pruner="median", target=None, sampler="tpe", resume=False,
                    max_trials=None, objectives="wall_clock_s:min,accuracy:max", cost="time_per_squared_accuracy",
                    repeat=False):
    config = SearchConfig(space, JobConfig(model="lenet", epochs=3), parse_objectives(objectives),
                          sampler=sampler, seed=3, startup_trials=3, cost=cost, repeat=repeat)
    settings = {"test": "search", "sampler": sampler}
    with open_session(out, settings, SubmitOptions("spark://x:1"), ClusterOptions(), [config.job.spec(1, 1)], resume,
                      backend=FakeBackend(), runner=runner, env=fake_env()) as session:
        search = MultiObjectiveSearch(session, open_study(out, config), config, make_rules(pruner, target))
        return search.run(budget, max_trials), session, search


def pruned_at(row) -> int:
    return int(row["reason"].split("epoch ")[1].split(":")[0].split()[0])


def test_search_runs_trials_prunes_dominated_runs_and_records_them_as_pruned(tmp_path):
    space = load_space(write(tmp_path, SPACE))
    runner = WatchingFakeRunner(curve)
    outcome, session, search = run_fake_search(tmp_path / "s", space, runner, budget=400)
    rows = list(csv.DictReader(open(tmp_path / "s" / "results.csv")))
    assert len(rows) == len(outcome.trials) == len(runner.argvs) and outcome.stop_reason.startswith("cluster-time")
    statuses = [r["status"] for r in rows]
    assert set(statuses) <= {"ok", "pruned"} and "pruned" in statuses and "ok" in statuses
    assert len(runner.stopped) == statuses.count("pruned")
    # the cluster time is the sum of the runs' elapsed_s; the loop stopped when a mean trial no longer fitted
    total = math.fsum(float(r["elapsed_s"]) for r in rows)
    assert outcome.cluster_time_s == pytest.approx(total) and total <= 400 < total + total / len(rows)
    before = math.fsum(float(r["elapsed_s"]) for r in rows[:-1])
    assert before + before / (len(rows) - 1) <= 400  # ...and it did fit before the last trial
    # the study agrees with the harness, trial by trial
    study = open_study(tmp_path / "s", search.config)
    for t, r in zip(study.trials, rows):
        assert int(r["run"]) == t.number + 1
        assert t.state == (TrialState.COMPLETE if r["status"] == "ok" else TrialState.PRUNED)
        if t.state == TrialState.COMPLETE:
            assert t.values == [float(r["wall_clock_s"]), float(r["accuracy"])]
        assert t.params["batch_size"] == int(r["batch_size"])
        assert t.params["learning_rate"] == pytest.approx(float(r["learning_rate"]))
    # each pruned run was dominated at its epoch by at least half the runs before it (the median rule)
    for i, r in enumerate(rows):
        if r["status"] == "pruned":
            lr, batch = float(r["learning_rate"]), int(r["batch_size"])
            epoch = pruned_at(r)
            me = fig(epoch, *curve(lr, batch, epoch, 42))
            peers = [fig(epoch, *curve(float(p["learning_rate"]), int(p["batch_size"]), epoch, 42))
                     for p in rows[:i] if p["status"] == "ok" or pruned_at(p) >= epoch]
            assert sum(dominates(p, me) for p in peers) >= math.ceil(len(peers) / 2)


def test_the_cost_objective_is_computed_from_each_runs_time_and_accuracy(tmp_path):
    space = load_space(write(tmp_path, SPACE))
    outcome, _, search = run_fake_search(tmp_path / "s", space, WatchingFakeRunner(curve), budget=1000, max_trials=3,
                                         pruner="none", objectives="cost:min,elapsed_s:min", cost="time_per_squared_percent")
    rows = list(csv.DictReader(open(tmp_path / "s" / "results.csv")))
    study = open_study(tmp_path / "s", search.config)
    assert len(rows) == 3 and all(t.state == TrialState.COMPLETE for t in study.trials)
    for t, r in zip(study.trials, rows):  # Marinos 2021's cost T / (100 A)^2, computed here by hand
        t_s, a = float(r["wall_clock_s"]), float(r["accuracy"])
        assert t.values == pytest.approx([t_s / (100 * a) ** 2, float(r["elapsed_s"])], rel=1e-12)


def test_an_objective_an_ok_run_does_not_record_stops_the_search_with_one_line_and_keeps_the_run(tmp_path):
    space = load_space(write(tmp_path, SPACE))
    with pytest.raises(SearchOptionError, match=r"run 1-1 finished ok but its objective spark_gc_share is missing"):
        run_fake_search(tmp_path / "s", space, WatchingFakeRunner(curve), budget=1000, max_trials=3,
                        objectives="spark_gc_share:min,accuracy:max")
    rows = list(csv.DictReader(open(tmp_path / "s" / "results.csv")))
    assert [r["status"] for r in rows] == ["ok"]  # the finished run is kept...
    study = open_study(tmp_path / "s", SearchConfig(space, JobConfig(), parse_objectives("spark_gc_share:min,accuracy:max")))
    told = [t.state for t in study.trials if t.state != TrialState.WAITING]  # (WAITING: the unasked start-up points)
    assert told == [TrialState.FAIL]  # ...and the study was told


@pytest.mark.parametrize("objectives, fix", [("run:min,accuracy:max", "numeric figure"),
                                             ("1x:min,accuracy:max", "numeric figure")])
def test_objectives_that_no_run_can_record_are_refused_before_any_job(objectives, fix):
    with pytest.raises(SearchOptionError, match=fix):
        check_objectives(parse_objectives(objectives))


def test_a_cost_formula_models_cost_cannot_read_is_refused_before_any_job():
    with pytest.raises(SearchOptionError, match="--cost"):
        check_objectives(parse_objectives("cost:min,accuracy:max"), "tta:x")


def test_a_resumed_search_spends_only_the_rest_of_its_budget_and_reruns_nothing(tmp_path):
    space = load_space(write(tmp_path, SPACE))
    runner = WatchingFakeRunner(curve)
    first, _, _ = run_fake_search(tmp_path / "s", space, runner, budget=1000, max_trials=4, pruner="none")
    assert len(runner.argvs) == 4 and first.stop_reason == "max trials (4) reached"
    mean = first.cluster_time_s / 4  # every trial takes 20 or 29 s (3 epochs, no pruning)
    again, session, _ = run_fake_search(tmp_path / "s", space, runner, budget=first.cluster_time_s + mean + 1,
                                        resume=True, max_trials=3, pruner="none")
    assert len(again.trials) == 1 and len(runner.argvs) == 5  # room for one mean trial, not two
    assert again.stop_reason.startswith("cluster-time budget")
    assert len(open_study(tmp_path / "s", SearchConfig(space, JobConfig(), parse_objectives(
        "wall_clock_s:min,accuracy:max"))).trials) == 5


def test_a_trial_left_running_by_a_killed_search_is_asked_again(tmp_path):
    space = load_space(write(tmp_path, SPACE))
    runner = WatchingFakeRunner(curve)
    run_fake_search(tmp_path / "s", space, runner, budget=1000, max_trials=2)
    config = SearchConfig(space, JobConfig(), parse_objectives("wall_clock_s:min,accuracy:max"))
    study = open_study(tmp_path / "s", config)
    orphan = study.ask()  # the search was killed while this trial's job ran
    params = space.suggest(orphan)
    outcome, _, _ = run_fake_search(tmp_path / "s", space, runner, budget=1000, max_trials=1, resume=True)
    study = open_study(tmp_path / "s", config)
    assert study.trials[orphan.number].state == TrialState.FAIL
    rerun = study.trials[orphan.number + 1]
    assert rerun.params == params and outcome.trials[0].number == rerun.number


def test_the_grid_sampler_runs_every_point_once_and_stops(tmp_path):
    space = load_space(write(tmp_path, SPACE))
    runner = WatchingFakeRunner(curve)
    outcome, _, search = run_fake_search(tmp_path / "g", space, runner, budget=math.inf, pruner="none", sampler="grid")
    line = search.progress_line(outcome.trials[2], math.inf, 30.0, 3)
    assert "cluster time" in line and "of no limit" in line and "ETA" in line
    asked = sorted((float(a[a.index("--learning-rate") + 1]), int(a[a.index("--batch-size") + 1]))
                   for a in runner.argvs)
    assert outcome.stop_reason == "every point of the grid ran" and len(asked) == 6
    assert asked == sorted((lr, b) for lr in (0.01, 0.0707107, 0.5) for b in (32, 64))


def test_target_accuracy_prunes_exactly_the_runs_whose_optimistic_curve_falls_short(tmp_path):
    space = load_space(write(tmp_path, SPACE))
    runner = WatchingFakeRunner(curve)
    outcome, _, _ = run_fake_search(tmp_path / "t", space, runner, budget=10_000, pruner="none", target=0.9,
                                    max_trials=8, sampler="random")
    for t in outcome.trials:
        accs = [0.1] + [curve(t.params["learning_rate"], t.params["batch_size"], e, 42)[1] for e in (1, 2, 3)]
        # epoch e (1, 2) is cut when acc_e + (3 - e) * (largest gain up to e) < 0.9
        cut = next((e for e in (1, 2) if accs[e] + (3 - e) * max(b - a for a, b in zip(accs[:e + 1], accs[1:e + 1]))
                    < 0.9), None)
        assert t.status == ("ok" if cut is None else "pruned"), t
        if cut is not None:
            assert t.reason.startswith(f"pruned: epoch {cut} of 3") and t.elapsed_s == 5.0 + 8.0 * cut * (
                t.params["batch_size"] == 32) + 5.0 * cut * (t.params["batch_size"] == 64)
    assert {t.status for t in outcome.trials} == {"ok", "pruned"}


# ---------------------------------------------------------------- real jobs


@pytest.mark.slow
@pytest.mark.cluster
def test_real_search_prunes_a_real_job_after_its_first_epoch(local_cluster, tmp_path):
    """One real lenet trial of 2 epochs that cannot reach accuracy 0.999: stopped after epoch 1, recorded pruned.

    The job must be cut between its two validations, which the runner's watch sees once a second: a tiny
    learning rate keeps epoch 1 near chance (so the target rule cuts it), and 1,024 digits in batches of 32
    make epoch 2 last seconds. (256 digits in batches of 64 once did: the job now trains them in 0.6 s.)
    """
    import subprocess

    space = write(tmp_path, "[learning_rate]\nlow = 0.0005\nhigh = 0.001\nlog = true\n\n"
                            "[batch_size]\nchoices = [32]\n")
    out = tmp_path / "search"
    argv = [sys.executable, "-m", "optimize.search", "--job", "lenet", "--fixed", "epochs=2", "--space", str(space),
            "--budget", "30m", "--max-trials", "1", "--target-accuracy", "0.999", "--out", str(out),
            "--train-samples", "1024", "--test-samples", "128", "--state-dir", str(local_cluster.state_dir),
            "--port", str(local_cluster.port), "--webui-port", str(local_cluster.webui_port),
            "--executor-memory", "600m"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert [r["status"] for r in rows] == ["pruned"] and rows[0]["reason"].startswith("pruned: epoch 1 of 2")
    text = (out / rows[0]["log"]).read_text()
    assert text.count("Top1Accuracy is") == 1  # stopped before a second validation
    assert text.rstrip().splitlines()[-1].startswith("sparkdl: pruned: epoch 1 of 2")
    study = optuna.load_study(study_name="search", storage=f"sqlite:///{out / 'study.sqlite'}")
    # the first of the Latin hypercube's 3 start-up points (the default) ran; the other 2 wait for a --resume
    assert [t.state for t in study.trials] == [TrialState.PRUNED] + [TrialState.WAITING] * 2
    assert "1 trials this session (0 ok, 1 pruned" in proc.stdout and "cluster time" in proc.stdout


@pytest.mark.parametrize("points, seed", [(3, 0), (4, 1), (7, 2), (9, 5)])
def test_the_latin_hypercube_start_puts_one_point_in_every_stratum_of_every_factor(points, seed):
    from optimize.search.space import Factor, SearchSpace, latin_hypercube

    space = SearchSpace((Factor("learning_rate", 0.01, 0.5, log=True), Factor("batch_size", choices=(32, 64, 128)),
                         Factor("epochs", 1, 4)))
    design = latin_hypercube(space, points, seed)
    assert design == latin_hypercube(space, points, seed) != latin_hypercube(space, points, seed + 1)
    # the rate: exactly one point in each of `points` equal strata of the log range (computed here independently)
    strata = sorted(int((math.log(d["learning_rate"]) - math.log(0.01)) / (math.log(0.5) - math.log(0.01)) * points)
                    for d in design)
    assert strata == list(range(points))
    # a list of choices and an integer range: each level floor(points/levels) or one more times
    for name, levels in (("batch_size", (32, 64, 128)), ("epochs", (1, 2, 3, 4))):
        counts = [sum(d[name] == v for d in design) for v in levels]
        assert sum(counts) == points and max(counts) - min(counts) <= 1, (name, counts)
        assert max(counts) == 1 or points > len(levels)


def test_a_tpe_search_asks_its_latin_hypercube_start_first(tmp_path):
    from optimize.search.space import latin_hypercube

    space = load_space(write(tmp_path, SPACE))
    runner = WatchingFakeRunner(curve)
    outcome, _, search = run_fake_search(tmp_path / "s", space, runner, budget=1000, max_trials=4, pruner="none")
    start = latin_hypercube(space, 3, 3)  # run_fake_search: startup_trials=3, seed=3
    asked = [t.params for t in open_study(tmp_path / "s", search.config).trials[:3]]
    assert [{k: pytest.approx(v) for k, v in p.items()} for p in start] == asked
    assert len(outcome.trials) == 4  # the fourth is TPE's own


def test_the_command_line_reaches_every_field_of_the_search_config(tmp_path):
    from optimize.search.__main__ import build_parser, search_config

    space = write(tmp_path, SPACE)
    args = build_parser().parse_args(["--job", "lenet", "--fixed", "epochs=2", "--space", str(space), "--out", str(tmp_path / "o"),
                                      "--budget", "10m",
                                      "--sampler", "tpe", "--seed", "7", "--startup-trials", "4", "--population", "6",
                                      "--grid-points", "5", "--cost", "time_per_squared_percent", "--startup", "random",
                                      "--objectives", "cost:min,accuracy:max", "--no-repeat"])
    c = search_config(args)
    assert (c.sampler, c.seed, c.startup_trials, c.population, c.grid_points, c.cost, c.start, c.repeat) == \
        ("tpe", 7, 4, 6, 5, "time_per_squared_percent", "random", False)
    plain = ["--job", "lenet", "--space", str(space), "--out", str(tmp_path / "o"), "--budget", "10m"]
    default = search_config(build_parser().parse_args(plain))  # the defaults tuned on the recorded surfaces
    assert (default.start, default.startup_trials, default.repeat) == ("lhs", 3, False)
    assert search_config(build_parser().parse_args([*plain, "--repeat"])).repeat is True


def test_the_default_pruning_rule_is_the_front_per_epoch_and_the_median_for_whole_runs():
    """Per epoch, every validated epoch is a point of the search's front, so the front rule's premise holds; a search
    of whole runs keeps the median rule (an earlier run's middle epoch is not a configuration it reports)."""
    from optimize.search.pruning import default_pruner

    assert default_pruner(None, per_epoch=True) == "front"
    assert default_pruner(None, per_epoch=False) == "median"
    rules = ["none", "median", "halving", "front"]
    assert [default_pruner(p, per_epoch=True) for p in rules] == rules  # a given rule is kept
