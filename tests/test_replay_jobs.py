"""Replaying a surface of any job: a small XGBoost surface cut from a real recording (tests/fixtures/
surface-xgboost-small, its README says which runs), replayed at the fidelity it was recorded with (rounds), through
the trial loop a real search runs; and the shipped LeNet surface, replayed exactly as before."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import pytest

from optimize.harvest import harvest
from optimize.pareto import read_campaign
from optimize.search.arms import (Arm, Truth, default_arms, paper_problem, replay_options, run_arm, search_config,
                                  shapes, surface_job)
from optimize.search.pruning import make_rules
from optimize.search.replay import (LENET_KEY, POINT_FACTORS, Recording, ReplayCluster, ReplayError, Surface,
                                    recorded_flags)
from optimize.search.space import Factor, SearchSpace
from optimize.search.study import MultiObjectiveSearch, open_study
from optimize.errors import SearchOptionError
from optimize.session import ClusterOptions, open_session
from tests.test_replay import SHIPPED, load_bench

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "surface-xgboost-small"
ROUNDS, DEPTHS, RATES = (10, 40), (2, 4), (0.1, 0.6)


def recorded_rows() -> dict[str, dict[str, str]]:
    """The fixture's results.csv as written, by run key (read without the code under test)."""
    return {f"{r['run']}-{r['replicate']}": r for r in csv.DictReader(open(FIXTURE / "results.csv"))}


def logged_rounds(key: str) -> list[dict[str, float]]:
    """The job's own sparkdl-epoch lines of a recorded run's .out (read without the code under test)."""
    text = (FIXTURE / "logs" / f"{key}.out").read_text()
    return [json.loads(line.partition(" ")[2]) for line in text.splitlines() if line.startswith("sparkdl-epoch ")]


@pytest.fixture(scope="module")
def surface() -> Surface:
    return Surface.load(FIXTURE)


# ---------------------------------------------------------------- the surface and its key


def test_the_fixture_is_a_small_real_recording():
    size = sum(f.stat().st_size for f in FIXTURE.rglob("*") if f.is_file())
    rows = recorded_rows()
    assert size < 300_000 and (FIXTURE / "README.md").is_file()
    assert {(int(r["rounds"]), int(r["max_depth"]), float(r["learning_rate"])) for r in rows.values()} == {
        (n, d, lr) for n in ROUNDS for d in DEPTHS for lr in RATES}
    assert {r["status"] for r in rows.values()} == {"ok"} and {r["model"] for r in rows.values()} == {"xgboost"}
    for key, row in rows.items():  # every run validated each of its rounds, its last one its recorded accuracy
        lines = logged_rounds(key)
        assert [x["epoch"] for x in lines] == list(range(1, int(row["rounds"]) + 1))
        assert lines[-1]["accuracy"] == pytest.approx(float(row["accuracy"]))


def test_a_surface_takes_its_factors_job_and_fidelity_from_the_recording(surface):
    assert surface.key.columns == ("model", "nodes", "executors", "executor_cores", "rounds", "max_depth",
                                   "learning_rate")
    assert (surface.fidelity, surface.job.model, surface.factors) == ("rounds", "xgboost",
                                                                       ("rounds", "max_depth", "learning_rate"))
    assert len(surface.points) == 8 and sum(map(len, surface.points.values())) == len(recorded_rows())
    assert surface.levels()["max_depth"] == DEPTHS and surface.levels()["learning_rate"] == RATES
    # a spec's values and a recorded row's key alike: 4.0 is the int level 4, 0.6000000000001 the float 0.6
    spec = surface.job_config().spec(1, 1, rounds=40.0, max_depth=4.0, learning_rate=0.6000000000001)
    assert surface.point_of(spec.as_row()) in surface.points
    assert dict(surface.point_of(spec.as_row())) == {"model": "xgboost", "nodes": 1, "executors": 1,
                                                     "executor_cores": 1, "rounds": 40, "max_depth": 4,
                                                     "learning_rate": 0.6}
    assert [type(v) for _, v in surface.point_of(spec.as_row())] == [str, int, int, int, int, int, float]
    job = surface_job(surface)
    assert (job.model, job.params, job.described().name) == ("xgboost", (), "xgboost")


def test_the_job_and_fidelity_are_read_from_provenance_then_the_command_then_the_runs(tmp_path):
    # the fixture's provenance.json is the recording's: its command names them (no keys of their own)
    assert "fidelity" not in json.loads((FIXTURE / "provenance.json").read_text())
    assert Recording.read(FIXTURE) == Recording("xgboost", "rounds")
    assert recorded_flags("python bench/surface.py --out 'a b' --job=my.toml --fidelity rounds") == {
        "job": "my.toml", "fidelity": "rounds"}
    copy = tmp_path / "s"
    shutil.copytree(FIXTURE, copy)
    (copy / "provenance.json").write_text(json.dumps({"job": "xgboost", "fidelity": "max_depth", "sessions": []}))
    assert Recording.read(copy) == Recording("xgboost", "max_depth")  # its own keys come first
    (copy / "provenance.json").unlink()
    assert Recording.read(copy, "xgboost") == Recording("xgboost", "epochs")
    with pytest.raises(ReplayError) as e:  # no word of the fidelity: epochs, which xgboost's runs have not
        Surface.load(copy)
    assert "its fidelity 'epochs' is not a factor of its xgboost runs" in str(e.value)
    assert '"fidelity" in provenance.json' in str(e.value) and "\n" not in str(e.value)
    assert Recording.read(SHIPPED) == Recording("lenet", "epochs")  # the LeNet recording names neither


def test_the_lenet_surface_replays_exactly_as_before():
    """Its points, grid time, truth and one arm's seeded replay: the figures this surface gave before surfaces of
    other jobs could be replayed."""
    surface = Surface.load(SHIPPED)
    assert surface.key.columns == POINT_FACTORS and surface.point_of({"learning_rate": 0.1, "batch_size": 32.0}) == \
        LENET_KEY.of({"learning_rate": 0.1, "batch_size": 32.0}) == (("learning_rate", 0.1), ("batch_size", 32))
    assert (surface.fidelity, surface.job.model, surface.factors) == ("epochs", "lenet",
                                                                       ("epochs", "learning_rate", "batch_size"))
    assert len(surface.points) == 27 and surface.grid_time_s() == pytest.approx(260.316, abs=1e-9)
    assert min(surface.points) == (("model", "lenet"), ("nodes", 1), ("executors", 1), ("executor_cores", 1),
                                   ("epochs", 1), ("learning_rate", 0.01), ("batch_size", 32))
    truth = Truth.of(surface)
    assert truth.volume == pytest.approx(5.47955306516302, rel=1e-12)
    assert list(truth.reference) == pytest.approx([8.380465292466667, -0.048437499999999994], rel=1e-12)


def test_a_lenet_arm_draws_prunes_and_scores_as_before(tmp_path):
    surface = Surface.load(SHIPPED)
    arms = default_arms(startup_trials=5, repeat=True, pruner="median")  # as first replayed
    run = run_arm(next(a for a in arms if a.name == "default"), surface, 1, surface.grid_time_s(), tmp_path)
    assert len(run.ended_s) == 25 and run.ended_s[-1] == pytest.approx(257.05900487199995, rel=1e-12)
    assert [i for i, p in enumerate(run.pruned) if p] == [11, 13, 20]
    from optimize.search.arms import fractions

    assert fractions(run, Truth.of(surface), (0.1, 0.25, 0.5, 1.0)) == pytest.approx(
        [0.5867104379128047, 0.9271783654610478, 1.0, 1.0], rel=1e-12)


# ---------------------------------------------------------------- a replayed run


def one_run(tmp_path: Path, surface: Surface, point: dict[str, object], watch=None):
    """One spec at ``point`` through a campaign whose backend and runner are the replay: its record and what the
    replay did."""
    cluster = ReplayCluster(surface, seed=3, watch=watch)
    job = surface.job_config()
    with open_session(tmp_path, {"test": "one run"}, replay_options(cluster, job), ClusterOptions(),
                      shapes(job, surface.space()), False, backend=cluster) as session:
        record = session.run(job.spec(1, 1, **point))
    return record, cluster.log[-1]


def test_a_replayed_run_returns_its_recorded_figures_and_charged_time(tmp_path, surface):
    record, done = one_run(tmp_path / "ok", surface, {"rounds": 40, "max_depth": 4, "learning_rate": 0.6})
    recorded = recorded_rows()[done.replicate]
    assert done.replicate == "24-1" and (recorded["rounds"], recorded["max_depth"], recorded["learning_rate"]) == (
        "40", "4", "0.6")
    assert record.status == "ok" and done.stopped_at is None
    assert record.elapsed_s == pytest.approx(float(recorded["elapsed_s"]))
    row = record.row()
    for column in ("wall_clock_s", "accuracy", "loss", "rounds_trained", "epochs_completed"):
        assert float(row[column]) == pytest.approx(float(recorded[column])), column
    assert (tmp_path / "ok" / record.execution.log).read_bytes() == (FIXTURE / recorded["log"]).read_bytes()


def test_a_replayed_run_stopped_at_a_round_is_charged_its_start_up_and_that_rounds_wall_clock(tmp_path, surface):
    def stop_at_round_3(out: Path) -> str | None:
        return "test: stopped at round 3" if out.read_text().count("sparkdl-epoch ") == 3 else None

    record, done = one_run(tmp_path / "p", surface, {"rounds": 10, "max_depth": 2, "learning_rate": 0.1},
                           stop_at_round_3)
    recorded = recorded_rows()[done.replicate]
    rounds = logged_rounds(done.replicate)
    assert record.status == "pruned" and done.stopped_at == 3 and "stopped at round 3" in record.reason
    startup = float(recorded["elapsed_s"]) - rounds[-1]["wall_clock_s"]
    assert record.elapsed_s == pytest.approx(startup + rounds[2]["wall_clock_s"], abs=1e-3)
    text = (tmp_path / "p" / record.execution.log).read_text()
    assert text.count("sparkdl-epoch ") == 3 and '"epoch": 4' not in text


def test_a_point_off_the_grid_is_refused_with_the_recorded_levels(tmp_path, surface):
    with pytest.raises(ReplayError, match=r"is off the recorded grid of .*: max_depth=3 \(recorded: 2, 4\); a replay "
                                          r"runs only recorded points"):
        ReplayCluster(surface).prepare(surface.job_config().spec(1, 1, rounds=10, max_depth=3, learning_rate=0.1))
    with pytest.raises(ReplayError, match=r"learning_rate=0.3 \(recorded: 0.1, 0.6\)"):
        surface.check(SearchSpace((Factor("learning_rate", choices=(0.1, 0.3)),)),
                      surface.job_config().spec(1, 1, rounds=10, max_depth=2).as_row())
    with pytest.raises(ReplayError, match=r"\[learning_rate\]: a replay has only the recorded levels; write choices "
                                          r"= \[0.1, 0.6\]"):
        surface.check(SearchSpace((Factor("learning_rate", 0.1, 0.6, kind="float"),)), {})
    assert not (tmp_path / "results.csv").exists()


# ---------------------------------------------------------------- searches on the surface


def test_a_search_runs_at_the_largest_rounds_prunes_and_harvests_every_validated_round(tmp_path, surface):
    arm = Arm("default", min_runs=1)
    config = search_config(arm, surface, seed=1)
    assert (config.fidelity, config.job.rounds, config.space.names) == ("rounds", 40, ("max_depth", "learning_rate"))
    cluster = ReplayCluster(surface, 1)
    out = tmp_path / "search"
    with open_session(out, {"test": "search"}, replay_options(cluster, config.job), ClusterOptions(),
                      shapes(config.job, config.space), False, backend=cluster) as session:
        outcome = MultiObjectiveSearch(session, open_study(out, config, in_memory=True), config,
                                       make_rules("median", None, min_runs=1)).run(surface.grid_time_s())
    table = read_campaign(out)
    assert set(table["rounds"]) == {40} and set(table["status"]) == {"ok", "pruned"}
    points = harvest(table, out, "rounds", surface.key.columns).table()
    for row, done in zip(table.to_dict("records"), cluster.log):
        mine = points[(points["run"] == row["run"]) & (points["replicate"] == row["replicate"])]
        last = 40 if row["status"] == "ok" else done.stopped_at
        assert list(mine["rounds"]) == list(range(1, last + 1)) and set(mine["run_epochs"]) == {40}
        recorded = logged_rounds(done.replicate)[:last]
        assert list(mine["accuracy"]) == pytest.approx([x["accuracy"] for x in recorded])
        assert row["reason"].startswith(f"pruned: epoch {last}:") if row["status"] == "pruned" else True
    assert sum(table["elapsed_s"]) == pytest.approx(outcome.cluster_time_s)
    truth = Truth.of(surface)
    assert len(truth.values) == 4 * 40  # each (depth, rate) at rounds 1..40 (a run of 10 rounds measures 1..10)
    assert {dict(p)["rounds"] for p in truth.values} == set(range(1, 41))


def test_optunas_pruners_take_the_surfaces_largest_rounds_as_their_resource(tmp_path, surface):
    run = run_arm(Arm("halving", sampler="random", pruner="none", optuna_pruner="halving"), surface, 2,
                  surface.grid_time_s(), tmp_path)
    assert any(run.pruned) and not all(run.pruned)
    # successive halving's rungs are rounds 1, 3, 9, 27: a run of 40 rounds is stopped at one of them, or runs all 40
    assert all(len(m) in (1, 3, 9, 27) if p else len(m) == 40 for m, p in zip(run.measured, run.pruned))
    assert {dict(p)["rounds"] for m in run.measured for p in m} <= set(range(1, 41))


def test_the_paper_rule_climbs_the_rates_with_every_other_factor_at_its_lowest_level(tmp_path, surface):
    assert paper_problem(surface) is None
    run = run_arm(Arm("paper", kind="paper"), surface, 0, math.inf, tmp_path)
    lasts = [dict(max(m, key=lambda p: dict(p)["rounds"])) for m in run.measured]
    assert [(p["rounds"], p["max_depth"], p["learning_rate"]) for p in lasts] == [(10, 2, 0.1), (10, 2, 0.6)]
    assert all(len(m) == 10 for m in run.measured)  # each run's rounds 1..10 measured
    # from 0.1 up to 0.6, the grid's top: whether the cost T/A^2 of the replicates drawn fell there or rose
    assert run.stop in ("the grid's highest rate", "the cost rose at 0.6")


def fixed_rate_surface(tmp_path: Path) -> Path:
    """The fixture at learning rate 0.6 only, recorded by a job file that fixes the rate in its args (no
    learning_rate parameter): a surface without a learning_rate factor."""
    job = tmp_path / "xgb-fixed-rate.toml"
    app = Path(__file__).resolve().parent.parent / "jobs" / "xgboost_mnist.py"
    job.write_text(f"""[job]
name = "xgb-fixed-rate"
app = "{app}"
args = ["--rounds", "{{rounds}}", "--max-depth", "{{max_depth}}", "--learning-rate", "0.6", "--seed", "{{seed}}",
        "--num-workers", "{{total_cores}}", ["--train-samples", "{{train_samples}}"],
        ["--test-samples", "{{test_samples}}"]]
results = "json"
runtime = "spark4"

[params.rounds]
type = "int"

[params.max_depth]
type = "int"
""")
    folder = tmp_path / "fixed"
    shutil.copytree(FIXTURE, folder)
    import pandas as pd

    table = pd.read_csv(folder / "results.csv")
    table[table["learning_rate"] == 0.6].drop(columns=["learning_rate", "model"]).to_csv(folder / "results.csv",
                                                                                         index=False)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["factors"] = [f for f in manifest["factors"] if f not in ("learning_rate", "model")]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "provenance.json").write_text(json.dumps({"job": str(job), "fidelity": "rounds", "sessions": []}))
    return folder


def test_a_surface_without_a_learning_rate_leaves_the_paper_arm_out_saying_why(tmp_path, capsys):
    surface = Surface.load(fixed_rate_surface(tmp_path))
    assert surface.key.columns == ("nodes", "executors", "executor_cores", "rounds", "max_depth")
    assert surface.job.model == "xgb-fixed-rate" and len(surface.points) == 4
    why = paper_problem(surface)
    assert why is not None and "has no learning_rate factor" in why and "xgb-fixed-rate" in why
    with pytest.raises(ReplayError, match="has no learning_rate factor"):
        run_arm(Arm("paper", kind="paper"), surface, 0, math.inf, tmp_path)
    bench = load_bench("search")
    assert bench.main(["--replay", str(surface.folder), "--seeds", "1", "--arms", "grid,paper",
                       "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert [r["arm"] for r in json.loads(out)] == ["grid"] * 4 and json.loads(out)[-1]["hv_median"] == 1.0
    assert err.strip().splitlines() == [f"left out the arm(s) paper: {why}"]
    with pytest.raises(SearchOptionError, match="--arms paper: the paper arm climbs a learning-rate ladder"):
        bench.main(["--replay", str(surface.folder), "--seeds", "1", "--arms", "paper"])


# ---------------------------------------------------------------- the bench and the command line


def test_the_bench_replays_every_arm_on_the_xgboost_surface(capsys):
    bench = load_bench("search")
    assert bench.main(["--replay", str(FIXTURE), "--seeds", "2", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = [a.name for a in default_arms()]
    assert [(r["arm"], r["budget"]) for r in rows] == [(a, b) for a in names for b in (0.1, 0.25, 0.5, 1.0)]
    assert all(0.0 <= r["hv_p10"] <= r["hv_median"] <= r["hv_p90"] <= 1.0 + 1e-9 and r["seeds"] == 2 for r in rows)
    grid = [r["hv_median"] for r in rows if r["arm"] == "grid"]
    assert grid[-1] == pytest.approx(1.0) and grid[0] < grid[-1]  # every point once: the whole true front
    assert bench.main(["--replay", str(FIXTURE), "--seeds", "2", "--arms", "default,paper,grid"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"surface {FIXTURE}: rounds 10/40 x max_depth 2/4 x learning_rate 0.1/0.6 (8 points, ")
    assert [line.split()[0] for line in text.splitlines() if line.split()[:1] and line.split()[0] in names
            and "|" in line] == ["default", "paper", "grid"]


def test_the_search_command_replays_the_surface_and_refuses_another_job_or_fidelity(tmp_path):
    from optimize.search.__main__ import main

    assert main(["--replay", str(FIXTURE), "--job", "xgboost", "--per-epoch", "--fidelity", "rounds", "--budget",
                 "200s", "--out", str(tmp_path / "cli"), "--seed", "1"]) == 0
    rows = read_campaign(tmp_path / "cli")
    assert len(rows) >= 3 and set(rows["rounds"]) == {40} and set(rows["max_depth"]) <= set(DEPTHS)
    with pytest.raises(ReplayError, match="--job lenet: the surface .* recorded the job xgboost; give --job xgboost"):
        main(["--replay", str(FIXTURE), "--job", "lenet", "--budget", "200s", "--out", str(tmp_path / "a")])
    with pytest.raises(SearchOptionError, match="--fidelity max_depth: the surface .* counts its validated epochs as "
                                                "rounds; give --fidelity rounds"):
        main(["--replay", str(FIXTURE), "--job", "xgboost", "--per-epoch", "--fidelity", "max_depth",
              "--budget", "200s", "--out", str(tmp_path / "b")])


# ---------------------------------------------------------------- recording and packing any job's surface


def test_the_recording_names_its_job_and_fidelity_for_the_replay(tmp_path):
    from optimize.search.__main__ import parse_job

    surface = load_bench("surface")
    surface.write_provenance(tmp_path, ["--job", "xgboost", "--fidelity", "rounds"], "2026-11-29T10:00:00+00:00",
                             (0.5, 0.5, 0.5), parse_job("xgboost"), "rounds")
    facts = json.loads((tmp_path / "provenance.json").read_text())
    assert (facts["job"], facts["fidelity"]) == ("xgboost", "rounds") and len(facts["sessions"]) == 1
    assert Recording.read(tmp_path) == Recording("xgboost", "rounds")
    epochjob = Path(__file__).resolve().parent / "fixtures" / "epochjob" / "job.toml"
    surface.write_provenance(tmp_path, [], "2026-11-29T11:00:00+00:00", (0.5,) * 3, parse_job(str(epochjob)))
    facts = json.loads((tmp_path / "provenance.json").read_text())  # a resumed recording: one more session
    assert (facts["job"], facts["fidelity"], len(facts["sessions"])) == (str(epochjob), "epochs", 2)


def test_packing_keeps_what_a_json_jobs_replay_reads(tmp_path, surface):
    bench = load_bench("surface")
    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src)
    err = src / "logs" / "1-1.err"
    spark_info = (b"26/11/29 10:13:33 INFO SparkContext: Running Spark version 4.3.0\n"
                  b"26/11/29 10:13:51 INFO DAGScheduler: Submitting job\n+- Exchange SinglePartition\n")
    err.write_bytes(err.read_bytes() + spark_info + b"26/11/29 10:14:00 WARN TaskSetManager: big task\n+- plan\n")
    short, whole = bench.pack(src, tmp_path / "dest")
    assert (short, whole) == (len(recorded_rows()), 0)
    assert (tmp_path / "dest" / "logs" / "1-1.err").read_bytes() == (FIXTURE / "logs" / "1-1.err").read_bytes() + \
        b"26/11/29 10:14:00 WARN TaskSetManager: big task\n+- plan\n"  # Spark's INFO records gone, its warning kept
    for key in recorded_rows():
        assert (tmp_path / "dest" / "runs" / key / "metrics.json").read_bytes() == \
            (FIXTURE / "runs" / key / "metrics.json").read_bytes()
    packed = Surface.load(tmp_path / "dest")
    assert {k: [r.epochs for r in v] for k, v in packed.points.items()} == \
        {k: [r.epochs for r in v] for k, v in surface.points.items()}
