"""Replicate until sure (harness.until, Campaign.run_until): the rule's grammar, the t interval, which point gets the
next replicate, when to stop, whole plots, the budget, and a resume that loses nothing.

The campaigns are the scripted ones of test_campaign.py: a real BigDL log (a fixture from a real job) is written
for each run, with the wall clock of its last validation set to the value the test scripts for that run; the
harness parses it as it parses any log. The real path: test_submit_cluster.py.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import DescrStatsW

from cluster.runtime import discover
from harness import until
from harness.campaign import Campaign, CampaignSettings
from harness.command import SubmitOptions
from harness.runner import Completed
from sparkdl.runspec import RunSpec
from sparkdl.campaign import CampaignDir, Manifest
from harness.store import ResultStore
from harness.until import Observation, UntilError, UntilRule, judge, next_point, parse_until, t_interval
from harness.submit import main as submit_main
from sparkdl.errors import CampaignError
from sparkdl.cli import run_cli
from tests.test_campaign import FIXTURES, RecordingBackend, spec

LOG = gzip.decompress((FIXTURES / "lenet-4000-2ep.out.gz").read_bytes())
ERR = (FIXTURES / "lenet-4000-2ep.err").read_bytes()
FAILED = gzip.decompress((FIXTURES / "birnn-batch65.out.gz").read_bytes())


# ---------------------------------------------------------------- the rule's grammar


@pytest.mark.parametrize("text, parsed", [
    ("ci(wall_clock_s) < 5%", ("wall_clock_s", 5.0, True)),
    ("  ci( accuracy )<0.01 ", ("accuracy", 0.01, False)),
    ("ci(spark_gc_share) < 2.5", ("spark_gc_share", 2.5, False)),
    ("ci(wall_clock_s) < .5 %", ("wall_clock_s", 0.5, True)),
    ("ci(x) < 1e-3", ("x", 0.001, False)),
])
def test_the_rule_is_read(text, parsed):
    assert parse_until(text) == parsed


@pytest.mark.parametrize("text, says", [
    ("wall_clock_s < 5%", "is not a stopping rule: write ci(RESPONSE) < W%"),
    ("ci(wall_clock_s) > 5%", "is not a stopping rule"),
    ("ci(wall_clock_s) <= 5%", "is not a stopping rule"),
    ("ci(wall clock) < 5%", "is not a stopping rule"),
    ("ci(wall_clock_s) < -5%", "is not a stopping rule"),
    ("ci(wall_clock_s) < 5%%", "is not a stopping rule"),
    ("ci(wall_clock_s) < 0%", "the width must be a number above 0"),
    ("ci(wall_clock_s) < 1e999", "the width must be a number above 0"),
    ("ci(" + "a" * 400 + ") < 5%", "is not a stopping rule"),
])
def test_a_bad_rule_is_one_line_naming_the_form(text, says):
    with pytest.raises(UntilError) as e:
        parse_until(text)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_bad_options_of_the_rule_are_refused():
    with pytest.raises(UntilError, match="give 2 <= min <= max"):
        UntilRule("wall_clock_s", 5, True, min_replications=4, max_replications=3)
    with pytest.raises(UntilError, match="at least, so that a point has an interval"):
        UntilRule("wall_clock_s", 5, True, min_replications=1)


@pytest.mark.parametrize("argv, says", [
    (["--until", "ci(wall_clock_s) > 5%"], "error: --until 'ci(wall_clock_s) > 5%' is not a stopping rule"),
    (["--max-replications", "5"], "error: --max-replications needs --until"),
    (["--budget=1h"], "error: --budget needs --until"),
    (["--until", "ci(wall_clock_s) < 5%", "--reference-every", "3"], "error: --until with --reference-every"),
])
def test_the_command_refuses_a_bad_rule_in_one_line_with_exit_2(tmp_path, capsys, argv, says):
    design = tmp_path / "d.csv"
    design.write_text("run,nodes,executors,executor_cores,epochs,learning_rate,batch_size,model\n1,1,1,1,2,0.1,64,lenet\n")
    code = run_cli(submit_main, [str(design), "--dry-run", *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(says) and err.count("\n") == 1


def test_min_replications_below_2_is_refused_by_the_parser(tmp_path, capsys):
    design = tmp_path / "d.csv"
    design.write_text("run,nodes,executors,executor_cores,epochs,learning_rate,batch_size,model\n1,1,1,1,2,0.1,64,lenet\n")
    with pytest.raises(SystemExit) as e:
        submit_main([str(design), "--dry-run", "--until", "ci(wall_clock_s) < 5%", "--min-replications", "1"])
    assert e.value.code == 2 and "give a number of replicates from 2 to 1000" in capsys.readouterr().err


def test_a_dry_run_shows_the_first_pass(tmp_path, capsys):
    design = tmp_path / "d.csv"
    design.write_text("run,nodes,executors,executor_cores,epochs,learning_rate,batch_size,model\n"
                      "1,1,1,1,2,0.1,64,lenet\n2,1,1,1,2,0.05,64,lenet\n")
    assert submit_main([str(design), "--dry-run", "--until", "ci(wall_clock_s) < 5%", "--min-replications", "3"]) == 0
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("# run ")] == [
        "# run 1-1", "# run 2-1", "# run 1-2", "# run 2-2", "# run 1-3", "# run 2-3"]
    assert "then replicates, one at a time, where ci(wall_clock_s) < 5% is not met yet (at most 10 a point)" in out


# ---------------------------------------------------------------- the interval and the choice


@pytest.mark.parametrize("values, confidence", [([10.0, 12.0], 0.95), ([3.1, 2.9, 3.4, 3.0, 2.7], 0.95),
                                                ([100.0, 90.0, 95.0], 0.9)])
def test_the_interval_is_statsmodels_t_interval(values, confidence):
    lo, hi = DescrStatsW(np.array(values)).tconfint_mean(alpha=1 - confidence)
    i = t_interval(values, confidence)
    assert (i.lower, i.upper) == pytest.approx((lo, hi), rel=1e-12)
    assert i.relative_half_width == pytest.approx((hi - lo) / 2 / abs(np.mean(values)), rel=1e-12)


def test_fewer_than_two_values_have_no_interval():
    assert math.isinf(t_interval([5.0], 0.95).half_width) and math.isinf(t_interval([], 0.95).half_width)
    assert t_interval([4.0, 4.0], 0.95).relative_half_width == 0.0


def obs(*values: float | None) -> list[Observation]:
    return [Observation(i, v) for i, v in enumerate(values, start=1)]


RULE = UntilRule("wall_clock_s", 5.0, True, min_replications=2, max_replications=4)


def test_a_point_stops_when_met_at_max_or_failing_and_failed_runs_are_not_replicates():
    assert judge(1, obs(100.0, 100.2), RULE).reason == "met"       # half-width 12.7 x 0.1414 = 1.8 % of 100
    assert judge(1, obs(100.0, None, 100.2), RULE).interval.n == 2
    assert judge(1, obs(100.0, 120.0), RULE).reason is None
    assert judge(1, obs(100.0, 120.0, 80.0, 110.0), RULE).reason == "max"
    state = judge(1, obs(100.0, None, None, None, None), RULE)
    assert (state.reason, state.unusable, state.last_replicate) == ("failing", 4, 5)
    absolute = UntilRule("accuracy", 0.01, False)
    assert judge(1, obs(0.90, 0.905), absolute).reason is None   # 12.71 x 0.0025 = 0.032 > 0.01
    assert judge(1, obs(0.90, 0.9002), absolute).reason == "met"


def test_a_met_point_needs_the_first_pass_first():
    rule = UntilRule("wall_clock_s", 50.0, True, min_replications=3, max_replications=5)
    assert judge(1, obs(100.0, 100.0), rule).reason is None and judge(1, obs(100.0, 100.0, 100.0), rule).reason == "met"


def test_the_next_replicate_goes_to_the_widest_interval_against_the_target():
    states = [judge(1, obs(100.0, 110.0), RULE), judge(2, obs(10.0, 13.0), RULE), judge(3, obs(100.0, 100.1), RULE)]
    # relative half-widths: point 1 12.706 x 5/sqrt2 / 105 = 42.8 %; point 2 12.706 x 1.5/sqrt2 / 11.5 = 117 %
    assert [s.reason for s in states] == [None, None, "met"] and next_point(states, RULE).run == 2
    states.append(judge(4, obs(50.0, None), RULE))  # no interval yet: first
    assert next_point(states, RULE).run == 4
    assert next_point([judge(1, obs(100.0, 100.1), RULE)], RULE) is None


def test_the_budget_lets_a_run_start_while_one_of_the_mean_length_fits():
    assert until.budget_allows(0.0, 0, 10.0) and until.budget_allows(500.0, 5, None)
    assert until.budget_allows(40.0, 4, 50.0) and not until.budget_allows(41.0, 4, 50.0)
    assert not until.budget_allows(50.0, 1, 50.0)


# ---------------------------------------------------------------- the first pass and whole plots


def test_the_first_pass_adds_the_missing_replicates_in_new_whole_plots():
    design = [spec(1, whole_plot=1), spec(2, whole_plot=1), spec(3, nodes=2, whole_plot=2),
              spec(3, replicate=2, nodes=2, whole_plot=3)]
    first = until.first_pass(design, 2)
    added = first[4:]
    assert [(s.run, s.replicate, s.get("whole_plot")) for s in added] == [(1, 2, 4), (2, 2, 4)]
    assert first[:4] == design
    assert until.first_pass([spec(1)], 3)[1:] == [spec(1, replicate=2), spec(1, replicate=3)]


# ---------------------------------------------------------------- campaigns


@dataclass
class ValueRunner:
    """Writes the real lenet log for each run with its wall clock set to ``value(key, attempt)`` (None: a job error)."""

    value: Callable[[str], float | None]
    calls: list[str] = field(default_factory=list)
    stop_after: int | None = None  # raise KeyboardInterrupt when this call starts (a killed harness)

    def run(self, argv, env, out: Path, err: Path, timeout, on_start=None) -> Completed:
        key = out.stem
        if on_start:
            on_start(999_999_999)
        if self.stop_after is not None and len(self.calls) == self.stop_after:
            out.write_bytes(b"half a log")
            raise KeyboardInterrupt
        self.calls.append(key)
        v = self.value(key)
        if v is None:
            out.write_bytes(FAILED)
            err.write_bytes(b"")
            return Completed(tuple(argv), 1, 12.5)
        out.write_bytes(LOG.replace(b"Wall Clock 17.346180029s", f"Wall Clock {v!r}s".encode()))
        err.write_bytes(ERR)
        return Completed(tuple(argv), 0, 12.5)


@dataclass
class ResettingBackend(RecordingBackend):
    resets: list[tuple[int, int]] = field(default_factory=list)

    def reset(self, spec, runtime):
        self.resets.append((spec.run, spec.replicate))


def until_campaign(tmp_path: Path, runner: ValueRunner, backend=None, design=None) -> Campaign:
    backend = backend or RecordingBackend()
    folder = CampaignDir(tmp_path)
    folder.create()
    if design is not None:
        folder.write_manifest(Manifest.for_design(design, job="lenet"))
    settings = CampaignSettings(options=SubmitOptions(master_url="x"), observe=False, data_cache=False)
    return Campaign(folder, settings, backend, discover(), runner, ResultStore(folder))


def scripted(values: dict[int, list[float | None]]) -> Callable[[str], float | None]:
    """Point ``run``'s replicate r gets ``values[run][r - 1]``."""
    def value(key: str) -> float | None:
        run, replicate = map(int, key.split("-"))
        return values[run][replicate - 1]
    return value


TWO_POINTS = [spec(1), spec(2, executor_cores=2)]  # the log fixes epochs, rate and batch: points differ in cores


def test_replicates_go_where_the_interval_is_wide_and_stop_where_it_is_met(tmp_path):
    # point 1 is steady (met after the first pass), point 2 noisy at first, then steady
    values = {1: [20.0, 20.1], 2: [20.0, 26.0, 23.0, 23.1, 23.0, 22.9, 23.0, 23.1, 23.0, 23.0]}
    rule = UntilRule("wall_clock_s", 5.0, True, min_replications=2, max_replications=10)
    runner = ValueRunner(scripted(values))
    c = until_campaign(tmp_path, runner, design=TWO_POINTS)
    summary, result = c.run_until(TWO_POINTS, rule)
    # an independent check: the first n of point 2's values whose 95 % t half-width is under 5 % of their mean
    needed = next(n for n in range(2, 11) if stats.t.ppf(0.975, n - 1) * np.std(values[2][:n], ddof=1) / math.sqrt(n)
                  < 0.05 * np.mean(values[2][:n]))
    assert runner.calls == ["1-1", "2-1", "1-2", "2-2", *[f"2-{r}" for r in range(3, needed + 1)]]
    p1, p2 = result.points
    assert (p1.reason, p1.interval.n, p2.reason, p2.interval.n) == ("met", 2, "met", needed)
    assert p2.interval.mean == pytest.approx(np.mean(values[2][:needed]))
    manifest = CampaignDir(tmp_path).read_manifest()
    assert manifest.until == result.to_dict()
    assert manifest.until["rule"] == "ci(wall_clock_s) < 5%" and manifest.until["points"][1]["replicates"] == needed
    assert len(summary.records) == 2 + needed
    assert f"2 point(s): 2 met; {2 + needed} run(s)" in result.summary_line()


def test_max_replications_stop_a_point_that_never_settles(tmp_path):
    values = {1: [20.0, 20.05], 2: [10.0, 30.0, 10.0, 30.0, 10.0, 30.0]}
    rule = UntilRule("wall_clock_s", 5.0, True, min_replications=2, max_replications=4)
    runner = ValueRunner(scripted(values))
    _, result = until_campaign(tmp_path, runner).run_until(TWO_POINTS, rule)
    assert [(p.reason, p.interval.n) for p in result.points] == [("met", 2), ("max", 4)]
    assert runner.calls[-2:] == ["2-3", "2-4"]


def test_failed_runs_are_not_replicates_and_a_point_that_always_fails_is_given_up(tmp_path):
    values = {1: [20.0, None, 20.05], 2: [None, None, None, None]}
    rule = UntilRule("wall_clock_s", 5.0, True, min_replications=2, max_replications=3)
    runner = ValueRunner(scripted(values))
    summary, result = until_campaign(tmp_path, runner).run_until(TWO_POINTS, rule)
    p1, p2 = result.points
    assert (p1.reason, p1.interval.n, p1.unusable) == ("met", 2, 1)
    assert (p2.reason, p2.interval.n, p2.unusable) == ("failing", 0, 3)
    assert sorted(runner.calls) == ["1-1", "1-2", "1-3", "2-1", "2-2", "2-3"]
    assert summary.counts == {"ok": 2, "failed": 4}


def test_the_budget_stops_the_campaign_and_the_open_points_say_so(tmp_path):
    values = {1: [10.0, 30.0] * 5, 2: [10.0, 30.0] * 5}
    rule = UntilRule("wall_clock_s", 5.0, True, min_replications=2, max_replications=10, budget_s=60.0)
    runner = ValueRunner(scripted(values))  # every run takes 12.5 s: 4 fit (62.5 > 60)
    summary, result = until_campaign(tmp_path, runner).run_until(TWO_POINTS, rule)
    assert len(runner.calls) == 4 and [p.reason for p in result.points] == ["budget", "budget"]
    assert result.cluster_time_s == 50.0 and "budget" in result.stopped


def test_a_replicate_added_to_a_split_plot_design_runs_in_a_whole_plot_of_its_own(tmp_path):
    # nodes is hard to change: each replicate of each level is a whole plot (as harness.design makes them)
    design = [spec(1, nodes=1, whole_plot=1), spec(2, nodes=2, whole_plot=2),
              spec(1, replicate=2, nodes=1, whole_plot=3), spec(2, replicate=2, nodes=2, whole_plot=4)]
    values = {1: [20.0, 20.05], 2: [20.0, 21.0, 20.5, 20.5]}  # point 2 met at 4
    backend = ResettingBackend()
    runner = ValueRunner(scripted(values))
    c = until_campaign(tmp_path, runner, backend, design)
    summary, result = c.run_until(design, UntilRule("wall_clock_s", 5.0, True))
    plots = {r.key: r.spec.get("whole_plot") for r in summary.records}
    assert plots == {"1-1": 1, "2-1": 2, "1-2": 3, "2-2": 4, "2-3": 5, "2-4": 6}
    assert backend.resets == [(2, 1), (1, 2), (2, 2), (2, 3), (2, 4)]  # before every new whole plot
    assert [p.reason for p in result.points] == ["met", "met"]
    manifest = CampaignDir(tmp_path).read_manifest()
    assert (manifest.whole_plot_factors, manifest.whole_plots) == (("nodes",), 6)


def test_a_design_of_two_jvms_keeps_the_harness_whole_plots_for_added_replicates(tmp_path):
    design = [spec(1, jvm="tuned"), spec(2, jvm="stock")]  # two JVM settings: the harness makes whole plots
    values = {1: [20.0, 20.05], 2: [20.0, 21.0, 20.5, 20.5]}  # point 2 met at 4
    backend = ResettingBackend()
    runner = ValueRunner(scripted(values))
    c = until_campaign(tmp_path, runner, backend)
    summary, _ = c.run_until(design, UntilRule("wall_clock_s", 5.0, True))
    plots = {r.key: r.metrics.get("whole_plot") for r in summary.records}
    assert plots == {"1-1": 1, "2-1": 2, "1-2": 3, "2-2": 4, "2-3": 5, "2-4": 6}
    assert backend.resets == [(2, 1), (1, 2), (2, 2), (2, 3), (2, 4)]


def test_a_killed_until_campaign_resumes_from_the_store_and_loses_nothing(tmp_path):
    values = {1: [20.0, 24.0, 21.0, 21.5, 21.4, 21.3], 2: [20.0, 26.0, 23.0, 23.1, 23.0, 22.9, 23.0]}
    rule = UntilRule("wall_clock_s", 5.0, True, max_replications=6)
    whole = ValueRunner(scripted(values))
    _, expected = until_campaign(tmp_path / "whole", whole).run_until(TWO_POINTS, rule)
    assert len(whole.calls) > 6  # the kill below falls in the sequential phase

    killed = ValueRunner(scripted(values), stop_after=6)
    with pytest.raises(KeyboardInterrupt):
        until_campaign(tmp_path / "killed", killed).run_until(TWO_POINTS, rule)
    manifest_dir = tmp_path / "killed"
    again = ValueRunner(scripted(values))
    c = until_campaign(manifest_dir, again)
    c.recover_interrupted()  # open_campaign does this with the folder's lock held
    summary, result = c.run_until(TWO_POINTS, rule)
    assert killed.calls + again.calls == whole.calls  # the run in flight ran again; none twice, none lost
    assert result.to_dict()["points"] == expected.to_dict()["points"]
    states = list(c.store.db.execute("SELECT status FROM attempts WHERE status = 'interrupted'"))
    assert len(states) == 1


def test_a_response_no_run_measured_is_refused_naming_the_ones_they_did(tmp_path):
    runner = ValueRunner(scripted({1: [20.0, 20.1], 2: [20.0, 20.1]}))
    with pytest.raises(UntilError, match=r"have no value of wall_clok_s; pick a response they measure \(.*accuracy"):
        until_campaign(tmp_path, runner).run_until(TWO_POINTS, UntilRule("wall_clok_s", 5.0, True))
    assert len(runner.calls) == 4  # the first pass is kept in the store


# ---------------------------------------------------------------- why a width rule keeps the intervals honest


def stopped_intervals(draws: np.ndarray, rule: UntilRule) -> list[until.Interval]:
    """Each row of ``draws`` a simulated point: its replicates taken in order until the rule stops it."""
    out = []
    for row in draws:
        seen: list[Observation] = []
        for value in row:
            seen.append(Observation(len(seen) + 1, float(value)))
            state = judge(1, seen, rule)
            if state.reason is not None:
                out.append(state.interval)
                break
    return out


def direct_stop(row: np.ndarray, first: int, last: int, width: float) -> tuple[int, float, float]:
    """The same rule written out with numpy alone: (n, mean, half-width) where it stops."""
    for n in range(first, last + 1):
        x = row[:n]
        half = stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / math.sqrt(n)
        if half < width / 100 * abs(x.mean()) or n == last:
            return n, float(x.mean()), float(half)
    raise AssertionError


@pytest.mark.parametrize("first, low, high", [(2, 0.87, 0.92), (5, 0.925, 0.965)])
def test_stopping_on_the_width_keeps_the_coverage_near_nominal(first, low, high):
    # 2,000 simulated points, normal noise of CV 6 % around a true mean of 100, the rule ci < 5 %, at most 10
    mean, sd, points = 100.0, 6.0, 2_000
    draws = np.random.default_rng(20261128).normal(mean, sd, (points, 10))
    rule = UntilRule("wall_clock_s", 5.0, True, min_replications=first, max_replications=10)
    intervals = stopped_intervals(draws, rule)
    direct = [direct_stop(row, first, 10, 5.0) for row in draws]
    assert np.allclose([(i.n, i.mean, i.half_width) for i in intervals], direct, rtol=1e-9, atol=0)
    covered = sum(i.lower <= mean <= i.upper for i in intervals) / points
    ns = np.array([i.n for i in intervals])
    print(f"min {first}: coverage {covered:.3f} of {points} points (nominal 0.95), "
          f"replicates mean {ns.mean():.2f}, range {ns.min()}..{ns.max()}")
    assert low <= covered <= high  # measured 0.886 and 0.931; a binomial sd of about 0.006 at 2,000 points


def test_stopping_on_a_p_value_inflates_false_positives():
    # the contrast: adding replicates until the mean "differs from the truth" (p < 0.05) stops on a false
    # positive far more often than 5 % (optional stopping); the width rule never looks at the effect
    mean, sd, points = 100.0, 6.0, 2_000
    draws = np.random.default_rng(20261129).normal(mean, sd, (points, 10))
    rejected = sum(any(stats.ttest_1samp(row[:n], mean).pvalue < 0.05 for n in range(2, 11)) for row in draws)
    print(f"p-value rule: false positives {rejected / points:.3f} of {points} (nominal 0.05)")
    assert rejected / points > 0.12


# ---------------------------------------------------------------- the record: manifest and report


def test_the_manifest_keeps_the_rule_and_refuses_a_damaged_record(tmp_path):
    values = {1: [20.0, 20.05], 2: [20.0, 21.0, 20.5, 20.5]}
    c = until_campaign(tmp_path, ValueRunner(scripted(values)), design=TWO_POINTS)
    _, result = c.run_until(TWO_POINTS, UntilRule("wall_clock_s", 5.0, True, budget_s=3600.0))
    folder = CampaignDir(tmp_path)
    read = folder.read_manifest()
    assert read.until["points"][1] == {"run": 2, "levels": until.design_levels(TWO_POINTS[1]), "replicates": 4,
                                       "failed_or_missing": 0, "mean": pytest.approx(20.5),
                                       "half_width": pytest.approx(stats.t.ppf(0.975, 3) * np.std([20, 21, 20.5, 20.5], ddof=1) / 2),
                                       "lower": pytest.approx(result.points[1].interval.lower),
                                       "upper": pytest.approx(result.points[1].interval.upper),
                                       "width": pytest.approx(100 * result.points[1].interval.relative_half_width),
                                       "met": True, "reason": "met"}
    assert until.UntilResult.from_dict(read.until).to_dict() == result.to_dict()
    text = folder.manifest_path.read_text().replace('"reason": "met"', '"reason": "maybe"', 1)
    folder.manifest_path.write_text(text)
    with pytest.raises(CampaignError) as e:
        folder.read_manifest()
    assert "is not a campaign manifest" in str(e.value) and "until" in str(e.value)


def test_the_report_shows_the_rule_and_each_point(tmp_path):
    from report.build import build_report

    values = {1: [20.0, 20.05], 2: [20.0, 30.0, 10.0, 30.0]}
    c = until_campaign(tmp_path, ValueRunner(scripted(values)), design=TWO_POINTS)
    c.run_until(TWO_POINTS, UntilRule("wall_clock_s", 5.0, True, max_replications=4))
    report = build_report(tmp_path, response="wall_clock_s", plots=False, generated="2026-11-28T00:00:00+00:00")
    assert "until" in report.sections
    html = report.html
    section = html[html.index('id="until-points"'):]
    assert "ci(wall_clock_s) &lt; 5%" in html and "after a first pass of 2 replicates" in html
    rows = section[:section.index("</table>")].split("<tr>")[2:]
    assert len(rows) == 2 and ">met<" in rows[0] and ">max<" in rows[1] and ">4<" in rows[1]
    assert "max: it reached --max-replications" in html
