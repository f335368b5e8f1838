"""optimize.fronts: the front of design points on replicated data.

Checks: a known true front with seeded replicates drawn around it is recovered; the vectorised bootstrap
equals a loop over the same draws using optimize.pareto's own dominance and hypervolume; the probability of
being dominated matches its closed form under normal means; the hypervolume interval covers the true
front's hypervolume; unreplicated data falls back to the per-run front; the CLI, the report and the
search's final front show configurations.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from optimize.errors import SearchOptionError
from optimize.fronts import (bootstrap_means, configuration_front, format_csv, format_text, hypervolumes,
                             non_dominated_share)
from optimize.cli.pareto import main
from optimize.pareto import hypervolume, non_dominated, parse_objectives
from sparkdl.cli import run_cli

OBJECTIVES = parse_objectives("wall_clock_s:min,accuracy:max")
#: The true (time, accuracy) of six configurations: three on the true front, three dominated.
TRUE_FRONT = {1: (10.0, 0.80), 2: (20.0, 0.90), 3: (30.0, 0.95)}
DOMINATED = {4: (22.0, 0.88),   # just behind 2: 10 % slower and 0.02 less accurate
             5: (33.0, 0.94),   # just behind 3
             6: (60.0, 0.70)}   # far behind everything
TRUTH = {**TRUE_FRONT, **DOMINATED}


def replicated(seed: int, replicates: int = 6, cv: float = 0.03, sd: float = 0.01,
               truth: dict[int, tuple[float, float]] = TRUTH) -> pd.DataFrame:
    """Replicates drawn around the true values: time log-normal with ``cv``, accuracy normal with ``sd``."""
    rng = np.random.default_rng(seed)
    rows = []
    for run, (t, a) in truth.items():
        for rep in range(1, replicates + 1):
            rows.append({"run": run, "replicate": rep, "batch_size": 32 * run, "status": "ok",
                         "wall_clock_s": t * math.exp(rng.normal(0, cv)), "accuracy": a + rng.normal(0, sd)})
    return pd.DataFrame(rows)


def by_run(front) -> dict[int, object]:
    return {dict(p.settings)["run"]: p for p in front.points}


@pytest.mark.parametrize("seed", range(5))
def test_a_known_true_front_is_recovered_from_replicates_drawn_around_it(seed):
    front = configuration_front(replicated(seed), OBJECTIVES, seed=seed)
    points = by_run(front)
    assert {r for r, p in points.items() if p.on_front} == set(TRUE_FRONT)
    for run in TRUE_FRONT:
        assert points[run].probability > 0.5
    for run in DOMINATED:
        assert points[run].probability < 0.5
    assert points[6].probability == 0.0  # clearly dominated: no resample rescues it
    assert [dict(p.settings)["run"] for p in front.front] == [1, 2, 3]  # fastest first
    assert front.key_columns == ("run",) and dict(points[2].settings)["batch_size"] == 64


def test_means_and_t_intervals_equal_scipys():
    table = replicated(1, replicates=4)
    front = configuration_front(table, OBJECTIVES, level=0.9)
    for run, p in by_run(front).items():
        rows = table[table["run"] == run]
        for j, column in enumerate(["wall_clock_s", "accuracy"]):
            x = rows[column].to_numpy()
            low, high = stats.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
            assert (p.mean[j], p.low[j], p.high[j]) == pytest.approx((x.mean(), low, high), rel=1e-12)
        assert p.runs == tuple(f"{run}-{r}" for r in range(1, 5))


def loop_bootstrap(groups, resamples, seed, ref):
    """The same draws as bootstrap_means, one resample at a time, through optimize.pareto's functions."""
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(g), size=(resamples, len(g))) for g in groups]
    wins = np.zeros(len(groups))
    volumes = []
    for b in range(resamples):
        means = np.array([g[d[b]].mean(axis=0) for g, d in zip(groups, draws)])
        wins += non_dominated(means)
        volumes.append(hypervolume(means, ref))
    return wins / resamples, np.array(volumes)


@pytest.mark.parametrize("k", [2, 3])
def test_the_vectorised_bootstrap_equals_a_loop_over_the_same_draws(k, monkeypatch):
    rng = np.random.default_rng(11)
    groups = [rng.normal(loc, 0.3, size=(n, k)) for loc, n in zip(rng.random((9, k)), [1, 2, 3, 4, 5, 6, 7, 3, 2])]
    ref = np.full(k, 2.0)
    monkeypatch.setattr("optimize.fronts.compute.CHUNK_CELLS", 500)  # several chunks, one partial
    boot = bootstrap_means(groups, 300, np.random.default_rng(5))
    probability, volumes = loop_bootstrap(groups, 300, 5, ref)
    assert non_dominated_share(boot).mean(axis=0) == pytest.approx(probability, abs=0)
    assert hypervolumes(boot, ref) == pytest.approx(volumes, rel=1e-12)
    assert np.all(boot[:, 0, :] == groups[0][0])  # one run: never moves


def test_the_probability_of_being_dominated_matches_its_normal_closed_form():
    """Two points, independent objectives, many replicates: the bootstrap means are nearly normal, so
    P(j dominates i) = prod_d Phi(-(mu_j,d - mu_i,d) / sqrt(v_i,d + v_j,d)), with the bootstrap's variance
    of a mean v = s^2 (n-1) / n^2."""
    rng = np.random.default_rng(3)
    n = 300
    noise = lambda: rng.normal(0, 1, (n, 2)) * [1.0, 0.02]  # noqa: E731
    centred = lambda x: x - x.mean(axis=0)  # noqa: E731  (so the means are exactly those chosen)
    i = [10.0, -0.90] + centred(noise())  # minimised: -accuracy
    j = [9.96, -0.9005] + centred(noise())  # a little better on both, by about half a standard error
    v = lambda x: x.var(axis=0, ddof=1) * (n - 1) / n ** 2  # noqa: E731
    z = (j.mean(axis=0) - i.mean(axis=0)) / np.sqrt(v(i) + v(j))
    expected = 1 - np.prod(stats.norm.cdf(-z))  # P(i is not dominated)
    assert 0.2 < expected < 0.9  # a case where the answer is not trivially 0 or 1
    boot = bootstrap_means([i, j], 10_000, np.random.default_rng(8))
    got = non_dominated_share(boot).mean(axis=0)[0]
    assert abs(got - expected) < 4 * math.sqrt(expected * (1 - expected) / 10_000) + 0.01


def test_the_hypervolume_interval_covers_the_true_fronts_hypervolume():
    """Over 60 seeded campaigns drawn around a true front of three points, the 95 % percentile interval holds the
    true front's hypervolume about 93 % of the time (measured over 200: 0.935; 8 replicates make the bootstrap a
    little narrow)."""
    true_min = np.array([(t, -a) for t, a in TRUE_FRONT.values()])
    exact = hypervolume(true_min, [40.0, -0.7])
    assert exact == pytest.approx(3.0 + 2.0 + 0.5)  # strips (40-10)(0.8-0.7) + (40-20)(0.9-0.8) + (40-30)(0.95-0.9)
    covered = 0
    for seed in range(60):
        front = configuration_front(replicated(seed, replicates=8, truth=TRUE_FRONT), OBJECTIVES, seed=seed,
                                    resamples=1000, reference=[40.0, 0.7])
        lo, hi = front.hypervolume_interval
        assert lo < front.hypervolume < hi
        covered += lo <= exact <= hi
    assert 51 <= covered < 60  # 85 % to 98 %: neither too narrow nor so wide it always covers


def test_seeds_make_it_reproducible_and_change_the_draws():
    table = replicated(2, replicates=3, cv=0.08, sd=0.03)
    a = configuration_front(table, OBJECTIVES, seed=7).to_dict()
    assert configuration_front(table, OBJECTIVES, seed=7).to_dict() == a
    b = configuration_front(table, OBJECTIVES, seed=8).to_dict()
    assert a["hypervolume_interval"] != b["hypervolume_interval"]
    assert a["hypervolume"] == b["hypervolume"]  # the observed means do not depend on the seed


def test_a_point_with_one_run_is_noted_and_options_are_checked():
    table = replicated(4)
    table = table[~((table["run"] == 6) & (table["replicate"] > 1))]
    front = configuration_front(table, OBJECTIVES)
    p = by_run(front)[6]
    assert p.n == 1 and math.isnan(p.low[0]) and "1 of 6 design points have one ok run" in front.notes[0]
    assert "[-]" in format_text(front) or p.probability < 0.01
    for kwargs, needle in [({"threshold": 1.0}, "--front-threshold"), ({"resamples": 0}, "--resamples"),
                           ({"level": 95}, "--level")]:
        with pytest.raises(SearchOptionError, match=needle):
            configuration_front(table, OBJECTIVES, **kwargs)


def test_design_points_are_the_manifests_factors_when_given():
    table = replicated(5)
    table["run"] = np.arange(1, len(table) + 1)  # a search numbers every trial: replicates share settings only
    front = configuration_front(table, OBJECTIVES, factors=("batch_size",))
    assert front.key_columns == ("batch_size",) and len(front.points) == 6 and all(p.n == 6 for p in front.points)
    assert {dict(p.settings)["batch_size"] for p in front.front} == {32, 64, 96}


def test_csv_and_json_list_every_point():
    front = configuration_front(replicated(6), OBJECTIVES)
    rows = list(csv.DictReader(io.StringIO(format_csv(front))))
    assert len(rows) == 6 and rows[0]["run"] == "1" and rows[-1]["probability"] == "0.0"
    assert float(rows[0]["wall_clock_s_mean"]) == by_run(front)[1].mean[0]
    data = json.loads(json.dumps(front.to_dict()))
    assert data["per"] == "design point" and data["front_size"] == 3 and len(data["points"]) == 6
    assert data["front"][0]["objectives"]["accuracy"]["low"] == pytest.approx(by_run(front)[1].low[1])


# ---------------------------------------------------------------- the command


def test_the_cli_lists_configurations_on_replicated_data_and_runs_with_per_run(tmp_path, capsys):
    table = replicated(0)
    table.to_csv(tmp_path / "results.csv", index=False)
    assert run_cli(main, [str(tmp_path), "--no-plot"]) == 0
    text = capsys.readouterr().out
    assert "3 of 6 design points on the front (probability of being non-dominated > 0.5)" in text
    assert "36 ok runs" in text and "2,000 bootstrap resamples" in text and "(seed 0)" in text
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["run", "batch_size", "n"] and "P(front)" in lines[0]
    assert lines[2].split()[0] == "1" and lines[2].rstrip().endswith("yes")
    assert run_cli(main, [str(tmp_path), "--format", "json", "--plot", str(tmp_path / "f.png")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["settings"]["run"] for p in data["front"]] == [1, 2, 3]
    assert (tmp_path / "f.png").stat().st_size > 5000
    assert run_cli(main, [str(tmp_path), "--format", "csv", "--no-plot", "--front-threshold", "0.99"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 6 and all(float(r["probability"]) > 0.99 for r in rows if r["on_front"] == "1")
    assert run_cli(main, [str(tmp_path), "--per-run", "--format", "json", "--no-plot"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert runs["per"] == "run" and runs["ok_runs"] == 36
    assert len({r["run"] for r in runs["front"]}) < len(runs["front"])  # replicates of one point, side by side
    assert run_cli(main, [str(tmp_path), "--front-threshold", "2", "--no-plot"]) == 2
    err = capsys.readouterr().err
    assert "--front-threshold 2 must be a probability" in err and len(err.strip().splitlines()) == 1
    assert run_cli(main, [str(tmp_path), "--per-run", "--per-epoch"]) == 2


def test_unreplicated_data_falls_back_to_the_front_of_runs_with_a_note(tmp_path, capsys):
    replicated(0, replicates=1).to_csv(tmp_path / "results.csv", index=False)
    assert run_cli(main, [str(tmp_path), "--no-plot"]) == 0
    text = capsys.readouterr().out
    assert "3 of 6 ok runs on the front" in text and "note: no design point has more than one ok run" in text
    assert run_cli(main, [str(tmp_path), "--no-plot", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["per"] == "run" and "no design point" in data["notes"][0]
    assert [r["run"] for r in data["front"]] == [1, 2, 3]


# ---------------------------------------------------------------- a real replicated campaign: an ingested study


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """bench/studylogs.py's study (real BigDL logs, scaled; 9 configurations x 5 replicates, a tenth failed)
    ingested by harness.ingest into a campaign folder; each log's truth is known from how it was written."""
    from bench.studylogs import FIELDS, make_study
    from harness.cli import ingest as ingest_mod

    root = tmp_path_factory.mktemp("study")
    logs = make_study(root / "study", points=9, replicates=5, min_mb=0.03, max_mb=0.06, seed=25)
    assert run_cli(ingest_mod.main, [str(root / "study"), "--fields", FIELDS, "--out", str(root / "runs")]) == 3
    return root / "runs", logs


def test_an_ingested_study_gives_a_front_of_configurations_not_of_lucky_replicates(ingested, capsys):
    folder, logs = ingested
    capsys.readouterr()
    truth: dict[tuple[str, ...], list[tuple[float, float]]] = {}
    for x in logs:
        if x.status == "ok":
            key = tuple(x.settings[k] for k in ("learning_rate", "batch_size", "epochs", "nodes", "regularisation"))
            truth.setdefault(key, []).append((x.wall_clock_s, x.accuracy))
    assert run_cli(main, [str(folder), "--format", "json", "--no-plot"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["per"] == "design point" and data["key_columns"] == ["learning_rate", "batch_size", "epochs", "nodes",
                                                                      "regularisation"]
    assert data["design_points"] == len(truth) and data["ok_runs"] == sum(map(len, truth.values()))
    for p in data["points"]:  # each point's mean is the mean of the true figures the logs were written with
        s = p["settings"]
        values = np.array(truth[(f"{s['learning_rate']:g}", str(s["batch_size"]), str(s["epochs"]), str(s["nodes"]),
                                 f"{s['regularisation']:g}")])
        assert p["n"] == len(values)
        assert p["objectives"]["wall_clock_s"]["mean"] == pytest.approx(values[:, 0].mean(), rel=1e-9)
        assert p["objectives"]["accuracy"]["mean"] == pytest.approx(values[:, 1].mean(), rel=1e-9)
    front = [tuple(p["settings"].values()) for p in data["front"]]
    assert front and len(set(front)) == len(front)  # configurations, each once
    assert run_cli(main, [str(folder), "--format", "json", "--no-plot", "--per-run"]) == 0
    runs = json.loads(capsys.readouterr().out)["front"]
    # the front of runs puts several replicates of one configuration side by side (3 of the 4 are one point's)
    assert len({r["run"] for r in runs}) < len(runs)


def test_the_report_of_an_ingested_study_tables_the_design_points(ingested):
    from report import build_report

    folder, _ = ingested
    report = build_report(folder, plots=False, generated="2026-01-01T00:00:00+00:00")
    body = report.html[report.html.index('id="front"'):]
    body = body[:body.index("</section>")]
    expected = configuration_front(pd.read_csv(folder / "results.csv"), OBJECTIVES,
                                   ("learning_rate", "batch_size", "epochs", "nodes", "regularisation"))
    assert f"Design points: {len(expected.front)} of {len(expected.points)} configurations are on the front" in body
    table = body[body.index('id="design-point-front"'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") - 1 == sum(p.on_front or p.probability >= 0.01 for p in expected.points)
    assert "ok runs are on the front of training time" in body  # the runs' own front follows


def test_a_search_that_repeats_configurations_ends_with_their_front(tmp_path, capsys):
    from optimize.search.__main__ import report
    from optimize.search.space import load_space
    from tests.test_optimize_fakes import WatchingFakeRunner
    from tests.test_optimize_search import curve, run_fake_search, write

    space = load_space(write(tmp_path, "[learning_rate]\nchoices = [0.01, 0.1]\n\n[batch_size]\nchoices = [32, 64]\n"))
    outcome, _, search = run_fake_search(tmp_path / "s", space, WatchingFakeRunner(curve), budget=math.inf,
                                         pruner="none", sampler="random", max_trials=10, repeat=True)
    rows = pd.read_csv(tmp_path / "s" / "results.csv")
    assert (rows["status"] == "ok").all() and rows.groupby(["learning_rate", "batch_size"]).size().max() > 1
    summary = report(tmp_path / "s", search.config, outcome)
    front = summary["front"]
    assert front["per"] == "design point" and front["seed"] == search.config.seed
    counts = rows.groupby(["learning_rate", "batch_size"]).size()
    assert front["design_points"] == len(counts)
    for p in front["points"]:
        s = p["settings"]
        assert p["n"] == counts[(s["learning_rate"], s["batch_size"])]
    # the fake jobs are deterministic: replicates agree, so the front is that of the configurations' own figures
    means = rows.groupby(["learning_rate", "batch_size"])[["wall_clock_s", "accuracy"]].mean()
    on = non_dominated(np.column_stack([means["wall_clock_s"], -means["accuracy"]]))
    assert {(p["settings"]["learning_rate"], p["settings"]["batch_size"]) for p in front["front"]} == \
        set(means.index[on])
    assert "design points on the front" in capsys.readouterr().out and (tmp_path / "s" / "pareto.png").exists()


def test_the_report_section_of_unreplicated_runs_has_no_design_point_table():
    from report.front import render

    once, twice = replicated(3, replicates=1), replicated(3, replicates=2)
    assert 'id="design-point-front"' not in render(once, plots=False)
    html = render(twice, plots=False)
    expected = configuration_front(twice, OBJECTIVES)
    table = html[html.index('id="design-point-front"'):html.index("</table>")]
    assert table.count(">yes<") == len(expected.front) == 3
