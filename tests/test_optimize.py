"""optimize.lr: the paper's rule step by step on known curves, the golden search, the real-job objective."""

from __future__ import annotations

import csv
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from harness.command import SubmitOptions
from sparkdl.cost import time_per_squared_accuracy
from optimize.errors import JobFailedError, LearningRateMismatchError, ObjectiveError, SearchOptionError
from optimize.lr import (LRPoint, adaptive_search, golden_search, linear_step, point_to_replicate, pooled_log_sd,
                         search, write_csv)
from optimize.objective import JobObjective
from optimize.session import ClusterOptions, JobConfig, open_session
from tests.test_optimize_fakes import FakeBackend, FakeRunner, fake_env


def bowl(minimum: float):
    """Convex in log lr: 1 + ln(lr / minimum)^2, least value 1 at ``minimum``."""
    return lambda lr: 1.0 + math.log(lr / minimum) ** 2


class Counting:
    def __init__(self, f):
        self.f, self.calls = f, []

    def __call__(self, lr):
        self.calls.append(lr)
        return self.f(lr)


# ---------------------------------------------------------------- the paper's rule


def test_paper_rule_minimum_near_0_05_exact_sequence():
    # cost = 1 + ln(lr/0.05)^2, by hand:
    # 0.002: 11.36, 0.004: 7.38, 0.008: 4.36, 0.016: 2.30, 0.032: 1.199, 0.064: 1.061 (all going down)
    # 0.128: 1.884 goes up -> back to L = 0.064; 0.064 * 1.1 = 0.0704: 1.117 > 1.061 -> stop.
    f = Counting(bowl(0.05))
    r = search(f, replications=1)
    assert r.learning_rates == (0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.0704)
    assert [p.step for p in r.points] == ["start"] + ["double"] * 6 + ["linear"]
    assert r.best_lr == 0.064 and r.best.mean == pytest.approx(1 + math.log(1.28) ** 2)
    assert r.jobs == 8 and f.calls == list(r.learning_rates)
    assert "linear step 1" in r.stop_reason


def test_paper_rule_linear_phase_runs_until_no_improvement():
    # cost = 1 + ln(lr/0.08)^2: 0.032: 1.840, 0.064: 1.0498, 0.128: 1.221 (up) -> L = 0.064:
    # 0.0704: 1.0163, 0.0768: 1.00167, 0.0832: 1.00154 (still down: |ln 1.04| < |ln 0.96|),
    # 0.0896: 1.0128 (up) -> stop; best 0.0832.
    r = search(bowl(0.08), replications=1)
    assert r.learning_rates == (0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.0704, 0.0768, 0.0832, 0.0896)
    assert r.best_lr == 0.0832
    assert "linear step 4" in r.stop_reason


def test_linear_step_ten_is_2L_and_is_reused_not_measured_again():
    # 1/lr up to a cliff at 0.0155: every +10% step from L = 0.008 improves, step 10 is 0.016 = 2L (the cliff).
    f = Counting(lambda lr: 1.0 / lr if lr < 0.0155 else 1000.0)
    r = search(f, replications=2)
    linear = tuple(float(Fraction(8 * (10 + k), 10000)) for k in range(1, 10))
    assert r.learning_rates == (0.002, 0.004, 0.008, 0.016) + linear
    assert linear[-1] == 0.0152 and r.best_lr == 0.0152
    assert len(f.calls) == 2 * 13 == r.jobs  # 0.016 measured once (2 replications), never again
    assert "2L, already measured" in r.stop_reason


def test_equal_cost_stops_doubling_and_stops_the_linear_phase():
    f = Counting(lambda lr: 5.0 if lr <= 0.004 else 1.0)
    r = search(f, replications=1)
    # 0.004 ties 0.002 -> back to 0.002; 0.0022 ties 0.002 -> stop. The first of equals is the answer.
    assert r.learning_rates == (0.002, 0.004, 0.0022)
    assert r.best_lr == 0.002


def test_replications_are_averaged_and_decide():
    table = {0.002: [10.0, 10.0], 0.004: [9.0, 12.0], 0.0022: [11.0, 11.0]}
    f = Counting(lambda lr: table[lr].pop(0))
    r = search(f, replications=2)
    # the first replication alone (9 < 10) would keep doubling; the mean 10.5 >= 10 backs off.
    assert r.learning_rates == (0.002, 0.004, 0.0022)
    assert r.points[1].costs == (9.0, 12.0) and r.points[1].mean == 10.5
    assert r.jobs == 6 and len(f.calls) == 6


def test_max_points_and_max_lr_stop_the_search():
    r = search(lambda lr: 1.0 / lr, replications=1, max_points=3)
    assert r.learning_rates == (0.002, 0.004, 0.008) and "max_points=3" in r.stop_reason
    r = search(lambda lr: 1.0 / lr, replications=1, max_lr=0.01)
    assert r.learning_rates == (0.002, 0.004, 0.008) and "max_lr" in r.stop_reason


@given(st.integers(min_value=1, max_value=10**6), st.integers(min_value=1, max_value=30))
def test_linear_step_is_the_double_nearest_the_decimal(milli, k):
    base = milli / 1000  # a short decimal, like every learning rate the paper rule produces
    assert linear_step(base, k) == float(Fraction(milli * (10 + k), 10000))


def test_doubling_keeps_learning_rates_short_decimals():
    r = search(lambda lr: 1.0 / lr, replications=1, max_points=14)
    assert [repr(x) for x in r.learning_rates][-3:] == ["4.096", "8.192", "16.384"]


# ---------------------------------------------------------------- errors


def test_objective_errors_name_the_learning_rate_and_keep_the_cause():
    def broken(lr):
        if lr > 0.005:
            raise ValueError("disk full")
        return 1.0 / lr

    with pytest.raises(ObjectiveError, match=r"learning rate 0\.008 \(replication 1 of 2\): ValueError: disk full") as e:
        search(broken, replications=2)
    assert isinstance(e.value.__cause__, ValueError)


def test_nan_and_non_numbers_are_errors_optimize_errors_pass_through():
    with pytest.raises(ObjectiveError, match="NaN at learning rate 0.002"):
        search(lambda lr: float("nan"), replications=1)
    with pytest.raises(ObjectiveError, match="must return one number"):
        search(lambda lr: "fast", replications=1)

    def failed(lr):
        raise JobFailedError("run 1-1 failed: boom")

    with pytest.raises(JobFailedError, match="^run 1-1 failed: boom$"):
        golden_search(failed, replications=1)


@pytest.mark.parametrize("kwargs", [dict(start=0), dict(start=-1.0), dict(replications=0), dict(max_lr=0.001)])
def test_bad_options_are_refused(kwargs):
    with pytest.raises(SearchOptionError):
        search(lambda lr: 1.0, **kwargs)


# ---------------------------------------------------------------- the better search


CURVES = {
    "bowl 0.05": bowl(0.05),
    "bowl 0.08": bowl(0.08),
    "bowl 0.3": bowl(0.3),
    "bowl 1": bowl(1.0),
    "bowl 5": bowl(5.0),
    # asymmetric: steep below the minimum, shallow above
    "skewed": lambda lr: lr + 0.8 * (0.2 / lr) ** 1.5,
}


def least_value(f) -> float:
    """The curve's minimum over [1e-4, 100], found by scipy's bounded Brent on log lr."""
    res = minimize_scalar(lambda u: f(math.exp(u)), bounds=(math.log(1e-4), math.log(100)), method="bounded",
                          options={"xatol": 1e-9})
    return float(res.fun)


@pytest.mark.parametrize("name", sorted(CURVES))
def test_golden_uses_fewer_points_and_gets_within_5_percent(name):
    f = CURVES[name]
    least = least_value(f)
    paper, golden = search(f, replications=1), golden_search(f, replications=1)
    assert len(golden.points) < len(paper.points)
    assert golden.best.mean <= 1.05 * min(least, paper.best.mean)


def test_golden_goes_below_the_start_when_the_start_is_past_the_minimum():
    r = golden_search(bowl(0.0007), replications=1)
    assert r.best.mean <= 1.05 and r.best_lr < 0.002
    paper = search(bowl(0.0007), replications=1)
    assert paper.best_lr == 0.002  # the paper's rule only goes up


def test_golden_never_measures_a_learning_rate_twice_and_counts_jobs():
    f = Counting(bowl(0.3))
    r = golden_search(f, replications=3)
    assert len(set(f.calls)) == len(r.points) and len(f.calls) == r.jobs == 3 * len(r.points)


# ---------------------------------------------------------------- sequential replication


@pytest.mark.parametrize("name", sorted(CURVES))
def test_adaptive_gets_within_5_percent_with_under_half_the_paper_jobs(name):
    f = Counting(CURVES[name])
    paper, r = search(CURVES[name], replications=5), adaptive_search(f, replications=5)
    assert r.best.mean <= 1.05 * least_value(CURVES[name])
    assert 2 * r.jobs <= paper.jobs
    # the answer has all its replications; no point more; the trace is every call, in order
    assert len(r.best.costs) == 5 and max(len(p.costs) for p in r.points) <= 5
    assert r.jobs == len(f.calls) == sum(len(p.costs) for p in r.points) and r.job_lrs == tuple(f.calls)


def test_adaptive_on_noisy_curves_beats_the_paper_rule_at_half_the_jobs():
    # lognormal noise sd 0.1 on a bowl with minimum 0.3: 20 searches each, seeds 0..19
    curve, trials = bowl(0.3), 20
    jobs, ok = {"paper": [], "adaptive": []}, {"paper": 0, "adaptive": 0}
    for method, name in ((search, "paper"), (adaptive_search, "adaptive")):
        for seed in range(trials):
            rng = np.random.default_rng(seed)
            r = method(lambda lr: curve(lr) * math.exp(rng.normal(0.0, 0.1)), replications=5)
            jobs[name].append(r.jobs)
            ok[name] += curve(r.best_lr) <= 1.05
    assert 2 * np.mean(jobs["adaptive"]) <= np.mean(jobs["paper"])
    assert ok["adaptive"] >= 0.9 * trials


def test_adaptive_replicates_near_the_best_only():
    # a steep bowl: every point but the ones next to the minimum is clearly worse after one job
    f = Counting(lambda lr: bowl(0.3)(lr) * (1.0 + 0.05 * math.sin(1e4 * lr)))
    r = adaptive_search(f, replications=4)
    far = [p for p in r.points if p.mean > 2.0 * r.best.mean]
    assert far and all(len(p.costs) == 1 for p in far)
    assert len(r.best.costs) == 4


def test_pooled_noise_matches_numpy_with_its_prior():
    rng = np.random.default_rng(3)
    groups = [np.exp(rng.normal(0.0, 0.2, size=n)) * m for n, m in ((4, 1.0), (3, 5.0), (1, 2.0), (6, 0.3))]
    points = [LRPoint(0.01 * (i + 1), tuple(float(x) for x in g), "start") for i, g in enumerate(groups)]
    logs = [np.log(g) for g in groups if len(g) >= 2]
    ss = sum(np.var(x, ddof=1) * (len(x) - 1) for x in logs)
    df = sum(len(x) - 1 for x in logs)
    assert pooled_log_sd(points, prior=0.1, prior_df=2) == pytest.approx(math.sqrt((ss + 2 * 0.01) / (df + 2)), rel=1e-12)
    assert pooled_log_sd(points[2:3], prior=0.1) == pytest.approx(0.1)  # no replicated point: the prior alone


def test_contest_replicates_the_less_measured_of_two_close_points_until_separated():
    best, near, far = LRPoint(0.1, (1.0,), "start"), LRPoint(0.2, (1.1,), "expand"), LRPoint(0.4, (3.0,), "expand")
    # gap 10% < 2 * 0.1 * sqrt(2) = 28%: the best (tie on replications) gets one more
    assert point_to_replicate([best, near, far], best, 5, sigma=0.1, z=2.0) is best
    two = LRPoint(0.1, (1.0, 1.0), "start")
    assert point_to_replicate([two, near, far], two, 5, sigma=0.1, z=2.0) is near
    # far apart (gap 200%): nobody; at the cap: nobody
    assert point_to_replicate([best, far], best, 5, sigma=0.1, z=2.0) is None
    assert point_to_replicate([best, near], best, 1, sigma=0.1, z=2.0) is None
    # final: the best first gets all its replications
    assert point_to_replicate([best, far], best, 3, sigma=0.1, z=2.0, final=True) is best


# ---------------------------------------------------------------- real-job objective (fake Spark)


def accuracy_curve(lr, batch, epochs, seed):
    """Wall clock 10 s; accuracy peaks at 0.9 near lr = 0.05."""
    return 10.0, max(0.1, 0.9 - 0.1 * math.log(lr / 0.05) ** 2)


def run_search(out, runner, resume=False, replications=2, method=search):
    config = JobConfig(model="lenet")
    with open_session(out, {"test": 1}, SubmitOptions("spark://x:1"), ClusterOptions(), [config.spec(1, 1)], resume,
                      backend=FakeBackend(), runner=runner, env=fake_env()) as session:
        objective = JobObjective(session, config, time_per_squared_accuracy())
        return method(objective, replications=replications), session, objective


def test_adaptive_on_jobs_numbers_replicates_in_order_and_resumes_without_jobs(tmp_path):
    runner = FakeRunner(accuracy_curve)
    result, session, objective = run_search(tmp_path, runner, replications=3, method=adaptive_search)
    assert session.executed == len(runner.argvs) == result.jobs < 3 * len(result.points)
    for lr in {r.spec.learning_rate for r in objective.results}:
        reps = [r.replicate for r in objective.results if r.spec.learning_rate == lr]
        assert reps == list(range(1, len(reps) + 1)) == list(range(1, len(result.points[
            result.learning_rates.index(lr)].costs) + 1))
    again, session2, _ = run_search(tmp_path, runner, resume=True, replications=3, method=adaptive_search)
    assert session2.executed == 0 and again == result


def test_job_objective_runs_cells_and_resume_replays_without_jobs(tmp_path):
    runner = FakeRunner(accuracy_curve)
    result, session, objective = run_search(tmp_path, runner)
    assert session.executed == len(runner.argvs) == result.jobs == 16
    # cost = T / A^2 from each job's own log, independently recomputed
    wall, acc = accuracy_curve(0.064, 256, 1, 42)
    assert result.points[5].lr == 0.064 and result.points[5].mean == pytest.approx(wall / acc**2, rel=1e-9)
    cells = sorted((r.run, r.replicate, r.spec.learning_rate) for r in objective.results)
    assert cells[:3] == [(1, 1, 0.002), (1, 2, 0.002), (2, 1, 0.004)]
    # replicate r uses seed 42 + r - 1 (distinct jobs, not copies)
    assert {a[a.index("--seed") + 1] for a in runner.argvs} == {"42", "43"}

    again, session2, _ = run_search(tmp_path, runner, resume=True)
    assert session2.executed == 0 and len(runner.argvs) == 16 and again == result

    path = write_csv(result, tmp_path / "lr_search.csv")
    rows = list(csv.DictReader(open(path)))
    assert [float(r["learning_rate"]) for r in rows] == list(result.learning_rates)
    assert [r["best"] for r in rows].count("1") == 1


def test_a_directory_of_another_search_is_refused(tmp_path):
    run_search(tmp_path, FakeRunner(accuracy_curve), replications=1)
    from harness.errors import CampaignError

    with pytest.raises(CampaignError, match=r"holds a search with other settings \(test 1 there, 2 now\)"):
        config = JobConfig(model="lenet")
        with open_session(tmp_path, {"test": 2}, SubmitOptions("x"), ClusterOptions(), [config.spec(1, 1)], True,
                          backend=FakeBackend(), runner=FakeRunner(accuracy_curve), env=fake_env()):
            pass


def test_a_job_that_ran_another_learning_rate_is_an_error_not_a_point(tmp_path):
    # like the original study's script: asked 0.008, the job ran 0.004
    runner = FakeRunner(accuracy_curve, lie={0.008: 0.004})
    with pytest.raises((LearningRateMismatchError, JobFailedError), match="0.008"):
        run_search(tmp_path, runner, replications=1)
    assert len(runner.argvs) == 3


def test_check_learning_rate_compares_with_the_log():
    from optimize.objective import check_learning_rate

    from sparkdl.runspec import RunSpec
    from sparkdl.campaign import Execution, Outcome, RunRecord

    R = RunRecord(RunSpec(3, 1, 1, 1, 1, 1, 9.0112, 64), Outcome("ok", learning_rate_used=1.024),
                  Execution(1, "", "", 1.0, 0, "logs/3-1.out"))
    with pytest.raises(LearningRateMismatchError, match=r"asked learning rate 9\.0112 .* shows 1\.024"):
        check_learning_rate(R, 9.0112)
    check_learning_rate(R, 1.024)


def test_a_failed_job_stops_the_search_with_its_reason_and_log(tmp_path):
    runner = FakeRunner(accuracy_curve, fail={0.004})
    with pytest.raises(JobFailedError, match=r"run 2-1 at learning rate 0\.004 failed: .*OutOfMemoryError.*logs/2-1\.out"):
        run_search(tmp_path, runner, replications=1)


@pytest.mark.parametrize("seed", range(12))
def test_golden_terminates_on_noisy_curves_without_repeating_a_point(seed):
    rng = np.random.default_rng(seed)
    f = Counting(lambda lr: bowl(0.3)(lr) * math.exp(rng.normal(0, 0.2)))
    r = golden_search(f, replications=1, xtol=1.2, max_points=60)
    assert len(set(f.calls)) == len(f.calls) == len(r.points) < 60


# ---------------------------------------------------------------- real jobs


@pytest.mark.slow
@pytest.mark.cluster
def test_real_search_on_a_local_cluster(local_cluster, tmp_path):
    """Two real lenet jobs through the harness; every learning rate read back from its log."""
    import subprocess
    import sys

    out = tmp_path / "lr"
    argv = [sys.executable, "-m", "optimize.lr", "--job", "lenet", "--replications", "1", "--max-points", "2",
            "--train-samples", "256", "--test-samples", "128", "--batch-size", "64", "--start", "0.05",
            "--out", str(out), "--state-dir", str(local_cluster.state_dir), "--port", str(local_cluster.port),
            "--webui-port", str(local_cluster.webui_port), "--executor-memory", "600m"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "max_points=2 reached" in proc.stdout
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert [(float(r["learning_rate"]), float(r["learning_rate_used"])) for r in rows] == [(0.05, 0.05), (0.1, 0.1)]
    assert all(r["status"] == "ok" for r in rows)
    search_rows = list(csv.DictReader(open(out / "lr_search.csv")))
    for r, s in zip(rows, search_rows):  # the default cost T / (100 A)^2 recomputed from the harness's results
        assert float(s["mean_cost"]) == pytest.approx(float(r["wall_clock_s"]) / (100 * float(r["accuracy"])) ** 2)
    assert (out / "lr_search.png").stat().st_size > 10_000
    again = subprocess.run(argv + ["--resume"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "2 jobs (2 reused from the store)" in again.stdout


# ---------------------------------------------------------------- the one loop, pluggable proposals


def test_a_custom_proposal_runs_through_the_shared_loop_with_its_budget_and_reuse():
    from optimize.lr import Measure, Replicate, run_search

    def grid(ev):  # a fixed grid, then one more replication of the best, then a rate already known
        for lr in (0.01, 0.1, 1.0):
            yield Measure(lr, "grid")
        best = min(ev.points, key=lambda p: p.mean)
        grown = yield Replicate(best)
        assert len(grown.costs) == 2
        again = yield Measure(0.1, "grid")  # known: returned without a job
        return f"done at {again.lr}"

    f = Counting(bowl(0.1))
    r = run_search(f, grid, "grid", replications=2, max_points=10, first=1)
    assert f.calls == [0.01, 0.1, 1.0, 0.1] and r.jobs == 4 and r.best_lr == 0.1
    assert r.best.costs == (1.0, 1.0) and r.stop_reason == "done at 0.1"
    short = run_search(Counting(bowl(0.1)), grid, "grid", replications=2, max_points=2, first=1)
    assert short.learning_rates == (0.01, 0.1) and short.stop_reason == "max_points=2 reached"


def test_cli_bad_options_exit_2_before_any_cluster_is_used(tmp_path, capsys):
    from optimize.cli.lr import main
    from sparkdl.cli import run_cli

    state = tmp_path / "cluster"
    assert run_cli(main, ["--out", str(tmp_path / "o"), "--start", "-1", "--state-dir", str(state)]) == 2
    assert "start=-1.0 must be a positive learning rate" in capsys.readouterr().err
    assert run_cli(main, ["--out", str(tmp_path / "o"), "--replications", "0", "--master", "spark://h:1"]) == 2
    assert "replications=0 must be a whole number >= 1" in capsys.readouterr().err
    assert not state.exists()
