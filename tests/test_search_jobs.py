"""sparkdl search on any job, as ``sparkdl submit --job NAME|FILE`` runs it: the built-ins of other columns
(xgboost, mlp) and a job description of the user's, its space and --fixed checked against the job's parameters,
another fidelity than epochs (--fidelity rounds), and a real output job pruned on a real cluster."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from harness.job import JobChoice, builtin, load_job
from jobs.xgboost_mnist import EPOCH_TAG, round_ends, round_figures
from logparse.epochlines import parse_line
from optimize.errors import SearchOptionError
from optimize.harvest import harvest
from optimize.search.__main__ import build_parser, check_given, main as search, parse_job, search_config, space_params
from optimize.search.space import Factor, SearchSpace, at_largest, load_space
from optimize.search.study import SearchConfig
from optimize.session import JobConfig, settings_digest
from optimize.pareto import parse_objectives
from sparkdl.cli import run_cli
from sparkdl.errors import EXIT_INPUT

EPOCH_JOB = Path(__file__).parent / "fixtures" / "epochjob" / "job.toml"


def write(tmp_path: Path, text: str, name: str = "space.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def args_of(tmp_path: Path, *argv: str):
    return build_parser().parse_args([*argv, "--budget", "10m", "--out", str(tmp_path / "out")])


# ---------------------------------------------------------------- the job and --fixed


def test_a_lenet_style_job_keeps_its_defaults_spec_and_settings_digest():
    """The digest of a LeNet search's settings is what it was before other jobs could run: --resume still works."""
    job = parse_job("lenet", "epochs=2,batch_size=64")
    before = {"model": "lenet", "nodes": 1, "executors": 1, "executor_cores": 1, "batch_size": 64, "epochs": 2,
              "learning_rate": 0.002}  # JobConfig.__dict__ as it was
    assert job.settings() == before and settings_digest({"job": job.settings()}) == settings_digest({"job": before})
    spec = job.spec(3, 1, learning_rate=0.1)
    assert spec.as_row() == {"run": 3, "replicate": 1, "nodes": 1, "executors": 1, "executor_cores": 1, "epochs": 2,
                             "learning_rate": 0.1, "batch_size": 64, "model": "lenet"}
    assert job.choice() == JobChoice() and replace(job, epochs=3).epochs == 3 and JobConfig().model == "birnn"


def test_a_builtin_of_other_columns_runs_with_its_own_parameters():
    job = parse_job("xgboost", "rounds=20,max_depth=4,executor_cores=2")
    assert (job.model, job.executor_cores, job.params) == ("xgboost", 2, (("rounds", 20), ("max_depth", 4)))
    assert job.choice() == JobChoice(builtin("xgboost")) and not job.lenet_style
    spec = job.spec(1, 1, learning_rate=0.3)
    assert spec.as_row() == {"run": 1, "replicate": 1, "nodes": 1, "executors": 1, "executor_cores": 2, "rounds": 20,
                             "max_depth": 4, "learning_rate": 0.3, "model": "xgboost"}
    assert job.settings() == {"model": "xgboost", "nodes": 1, "executors": 1, "executor_cores": 2,
                              "params": {"rounds": 20, "max_depth": 4}}
    mlp = parse_job("mlp", "max_iter=5,step_size=0.03,block_size=128")
    assert mlp.spec(1, 1).get("step_size") == 0.03 and mlp.choice().job.name == "mlp"


def test_a_job_description_of_the_users_runs_as_submit_runs_it():
    job = parse_job(str(EPOCH_JOB), "epochs=3")
    described = load_job(EPOCH_JOB)
    assert (job.model, job.job, job.params) == ("train-epochs", described, (("epochs", 3),))
    assert job.choice() == JobChoice(described)
    assert job.spec(1, 1, delay=0.5).as_row() == {"run": 1, "replicate": 1, "nodes": 1, "executors": 1,
                                                   "executor_cores": 1, "epochs": 3, "delay": 0.5}  # no model column
    assert job.settings()["job"] == str(EPOCH_JOB.resolve())
    assert parse_job(str(EPOCH_JOB), "delay=1").delay == 1.0  # a float parameter is a float


@pytest.mark.parametrize("job, fixed, needle", [
    ("xgboost", "trees=3", "--fixed trees: not a job factor (a parameter of the job xgboost or a cluster factor); "
                           "use nodes, executors, executor_cores, rounds, max_depth, learning_rate"),
    ("xgboost", "max_depth=0", "--fixed max_depth='0' is out of range: write a whole number from 1 to 64 "
                               "(the job xgboost's [params.max_depth])"),
    ("xgboost", "rounds=2.5", "rounds='2.5' is not a whole number"),
    ("lenet", "epochz=2", "--fixed epochz: not a job factor; use batch_size, epochs, executor_cores, executors, "
                          "learning_rate, nodes"),
    ("mlp", "model=lenet", "write --job lenet and drop model= from --fixed"),
])
def test_a_fixed_name_or_value_the_job_does_not_take_is_refused_naming_it_and_the_fix(job, fixed, needle):
    with pytest.raises(SearchOptionError) as e:
        parse_job(job, fixed)
    assert needle in str(e.value) and "\n" not in str(e.value)


# ---------------------------------------------------------------- the space


def test_the_space_varies_a_jobs_own_parameters_by_their_declared_types(tmp_path):
    job = parse_job("xgboost", "rounds=10")
    space = load_space(write(tmp_path, """
        [learning_rate]
        low = 0.05
        high = 0.5
        log = true
        [max_depth]
        low = 2
        high = 8
        step = 2
        [executor_cores]
        choices = [1, 2]
        """), space_params(job))
    assert [(f.name, f.kind, f.floating) for f in space.factors] == [
        ("learning_rate", "float", True), ("max_depth", "int", False), ("executor_cores", "", False)]
    assert space.factors[1].levels() == (2, 4, 6, 8) and len(space.grid(3)) == 3 * 4 * 2
    assert load_space(write(tmp_path, "[delay]\nchoices = [0.5, 3]\n"),
                      space_params(parse_job(str(EPOCH_JOB)))).factors[0].choices == (0.5, 3.0)


@pytest.mark.parametrize("text, needle", [
    ("[batch_size]\nchoices = [32]\n", "space.toml [batch_size]: not a parameter of the job xgboost nor a cluster "
                                       "factor; use one of nodes, executors, executor_cores, rounds, max_depth, "
                                       "learning_rate"),
    ("[model]\nchoices = [\"lenet\"]\n", "space.toml [model]: not a parameter of the job xgboost"),
    ("[max_depth]\nlow = 1.5\nhigh = 4\n", "space.toml [max_depth]: max_depth is a whole number"),
    ("[learning_rate]\nlow = 0.5\nhigh = 2.0\n", "space.toml [learning_rate]: learning_rate='2.0' is out of range: "
                                                  "write a number from 1e-06 to 1"),
    ("[max_depth]\nchoices = [4, 100]\n", "max_depth='100' is out of range"),
    ("[learning_rate]\nlow = 0.1\nhigh = 0.5\nstep = 2\n", "step must be a whole number >= 1"),
])
def test_a_space_name_or_range_the_job_does_not_take_is_refused_naming_it_and_the_fix(tmp_path, text, needle):
    with pytest.raises(SearchOptionError) as e:
        load_space(write(tmp_path, text), space_params(parse_job("xgboost", "rounds=10")))
    assert needle in str(e.value), str(e.value)


def test_a_parameter_the_job_needs_that_neither_gives_is_refused_before_anything_runs(tmp_path, capsys):
    space = write(tmp_path, "[learning_rate]\nlow = 0.1\nhigh = 0.5\n")
    with pytest.raises(SearchOptionError, match=r"the job xgboost needs max_depth \(its args use \{max_depth\}\): "
                                                r"give it in --fixed \(max_depth=\.\.\.\) or vary it in space.toml "
                                                r"\(\[max_depth\]\)"):
        search_config(args_of(tmp_path, "--job", "xgboost", "--fixed", "rounds=5", "--space", str(space)))
    check_given(parse_job("xgboost", "rounds=5,max_depth=3"), load_space(space, space_params(parse_job("xgboost"))))
    # from the command line: one line, exit 2, nothing made
    argv = ["--job", str(EPOCH_JOB), "--space", str(write(tmp_path, "[epochs]\nlow = 1\nhigh = 3\n")),
            "--budget", "10m", "--out", str(tmp_path / "out")]
    assert run_cli(search, argv) == EXIT_INPUT
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "the job train-epochs needs delay" in line and not (tmp_path / "out").exists()


# ---------------------------------------------------------------- the fidelity


def test_per_epoch_with_rounds_runs_every_trial_at_the_largest_rounds(tmp_path):
    space = write(tmp_path, "[rounds]\nchoices = [5, 20, 10]\n[max_depth]\nlow = 2\nhigh = 6\n")
    config = search_config(args_of(tmp_path, "--job", "xgboost", "--fixed", "learning_rate=0.3", "--space", str(space),
                                   "--per-epoch", "--fidelity", "rounds"))
    assert (config.space.names, config.job.rounds, config.fidelity) == (("max_depth",), 20, "rounds")
    assert config.planned(config.job.spec(1, 1, max_depth=3)) == 20
    with pytest.raises(SearchOptionError, match=r"--fidelity epochs: not a parameter of the job xgboost; use the one "
                                                r"that counts its epochs or rounds, one of rounds, max_depth"):
        search_config(args_of(tmp_path, "--job", "xgboost", "--fixed", "learning_rate=0.3", "--space", str(space),
                              "--per-epoch"))
    with pytest.raises(SearchOptionError, match=r"largest rounds, which neither space.toml nor --fixed gives"):
        at_largest(SearchSpace((Factor("max_depth", 2, 6),)), "rounds", None)
    # without --per-epoch, xgboost runs without an epochs parameter: pruning does not know its last epoch
    plain = search_config(args_of(tmp_path, "--job", "xgboost", "--fixed", "learning_rate=0.3", "--space", str(space)))
    assert plain.planned(plain.job.spec(1, 1, rounds=5, max_depth=2)) == float("inf")


def xgboost_campaign(root: Path) -> list[list[dict[str, float]]]:
    """Two xgboost runs (ok at 4 rounds, pruned after round 2) whose .out hold the job's own sparkdl-epoch lines,
    made by its round_figures from XGBoost validation histories."""
    (root / "logs").mkdir(parents=True)
    histories = [{"merror": [0.4, 0.3, 0.25, 0.2], "mlogloss": [1.5, 1.2, 1.0, 0.9]},
                 {"merror": [0.6, 0.55], "mlogloss": [2.0, 1.9]}]
    runs = [round_figures(h, 99.0, [100.0 + 0.5 * r for r in range(len(h['merror']))]) for h in histories]
    rows = []
    for n, (figures, status) in enumerate(zip(runs, ("ok", "pruned")), start=1):
        lines = [EPOCH_TAG + json.dumps(f) for f in figures]
        if status == "pruned":
            lines.append("sparkdl: pruned: epoch 2 of 4: median rule")
        (root / "logs" / f"{n}-1.out").write_text("some Spark line\n" + "\n".join(lines) + "\n")
        last = figures[-1]
        rows.append({"run": n, "replicate": 1, "model": "xgboost", "nodes": 1, "executors": 1, "executor_cores": 1,
                     "rounds": 4, "max_depth": 2 + n, "learning_rate": 0.3, "status": status,
                     "wall_clock_s": last["wall_clock_s"] if status == "ok" else None, "wall_clock_of": "fit",
                     "accuracy": last["accuracy"] if status == "ok" else None, "elapsed_s": 30.0,
                     "log": f"logs/{n}-1.out"})
    pd.DataFrame(rows).to_csv(root / "results.csv", index=False)
    return runs


def test_each_validated_round_is_a_point_at_that_many_rounds(tmp_path):
    runs = xgboost_campaign(tmp_path)
    table = pd.read_csv(tmp_path / "results.csv")
    factors = ("model", "nodes", "executors", "executor_cores", "rounds", "max_depth", "learning_rate")
    got = harvest(table, tmp_path, "rounds", factors).table()
    assert list(got["point"]) == ["1-1@1", "1-1@2", "1-1@3", "1-1@4", "2-1@1", "2-1@2"]
    assert list(got["rounds"]) == [1, 2, 3, 4, 1, 2] and list(got["run_epochs"]) == [4, 4, 4, 4, 4, 4]
    assert list(got["accuracy"]) == pytest.approx([f["accuracy"] for run in runs for f in run])
    assert list(got["max_depth"]) == [3, 3, 3, 3, 4, 4] and "epochs" not in got.columns
    assert list(got["wall_clock_s"]) == pytest.approx([1.0, 1.5, 2.0, 2.5, 1.0, 1.5])  # the timed rounds, below
    # the default path is unchanged: epochs is the fidelity, LeNet's columns are carried
    assert list(harvest(table, tmp_path).table().columns[:5]) == ["run", "replicate", "point", "epoch", "model"]


def test_a_rounds_time_is_the_boosting_loops_time_to_its_end_on_the_worker():
    """As every job's epoch line counts training time (BigDL's Wall Clock, torch's rank 0): round r's time is its
    end less boosting's start, the worker's stamps; not the fit call spread evenly over the rounds."""
    history = {"merror": [0.5, 0.4, 0.3], "mlogloss": [1.2, 1.0, 0.8]}
    start, ends = round_ends({"sparkdl_t_start": "99.0", "sparkdl_t_0": "100.0", "sparkdl_t_1": "100.25",
                              "sparkdl_t_2": "101.0", "other": "x"}, 3)
    assert (start, ends) == (99.0, [100.0, 100.25, 101.0])
    figures = round_figures(history, start, ends)
    assert [f["wall_clock_s"] for f in figures] == [1.0, 1.25, 2.0]
    assert [f["accuracy"] for f in figures] == pytest.approx([0.5, 0.6, 0.7]) and figures[1]["loss"] == 1.0
    # a booster without the stamps: no round has a time, rather than an estimate in its place
    assert round_ends({"sparkdl_t_0": "100.0"}, 3) == (None, [])
    untimed = round_figures(history, None, [100.0, 100.25, 101.0])
    assert [f["wall_clock_s"] for f in untimed] == [None, None, None]
    assert [parse_line((EPOCH_TAG + json.dumps(f)).encode()) for f in untimed] == [None] * 3  # not epochs


def test_an_output_jobs_epoch_rows_are_harvested_from_its_epochs_csv(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "1-1.out").write_text("epoch 1 accuracy 0.4 time 1.5\nepoch 2 accuracy 0.6 time 3.0\n")
    (tmp_path / "runs" / "1-1").mkdir(parents=True)
    (tmp_path / "runs" / "1-1" / "epochs.csv").write_text("epoch,accuracy,wall_clock_s\n1,0.4,1.5\n2,0.6,3.0\n")
    pd.DataFrame([{"run": 1, "replicate": 1, "nodes": 1, "executors": 1, "executor_cores": 1, "epochs": 2,
                   "delay": 0.5, "status": "pruned", "log": "logs/1-1.out"}]).to_csv(tmp_path / "results.csv")
    got = harvest(pd.read_csv(tmp_path / "results.csv"), tmp_path, "epochs", ("epochs", "delay")).table()
    assert got[["epochs", "delay", "wall_clock_s", "accuracy"]].values.tolist() == [[1, 0.5, 1.5, 0.4],
                                                                                     [2, 0.5, 3.0, 0.6]]


# ---------------------------------------------------------------- a real output job, pruned


@pytest.mark.slow
@pytest.mark.cluster
def test_real_search_of_a_users_output_job_prunes_the_dominated_run_and_keeps_its_epochs(local_cluster, tmp_path):
    """The fixture script, unchanged style (one printed line per epoch), searched over its delay on a real
    cluster: the grid's first point (delay 0.2) runs its 3 epochs; the second (delay 6, slower and less accurate at
    epoch 1) is stopped by the median rule after its first epoch (--min-runs 1) and recorded pruned, its epoch kept."""
    space = write(tmp_path, "[delay]\nchoices = [0.2, 6.0]\n")
    out = tmp_path / "search"
    argv = [sys.executable, "-m", "optimize.search", "--job", str(EPOCH_JOB), "--fixed", "epochs=3",
            "--space", str(space), "--sampler", "grid", "--pruner", "median", "--min-runs", "1", "--budget", "30m",
            "--out", str(out), "--state-dir", str(local_cluster.state_dir), "--port", str(local_cluster.port),
            "--webui-port", str(local_cluster.webui_port), "--executor-memory", "600m"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert [(float(r["delay"]), r["status"]) for r in rows] == [(0.2, "ok"), (6.0, "pruned")], rows
    assert rows[1]["reason"].startswith("pruned: epoch 1: 1 of 1 earlier runs were faster and more accurate")
    text = (out / rows[1]["log"]).read_text()
    assert text.count("epoch 1 accuracy") == 1 and "epoch 2 accuracy" not in text  # stopped before epoch 2
    kept = list(csv.DictReader(open(out / "runs" / "2-1" / "epochs.csv")))
    assert [(r["epoch"], r["accuracy"]) for r in kept] == [("1", f"{0.5 / 7:.4f}")]
    assert len(list(csv.DictReader(open(out / "runs" / "1-1" / "epochs.csv")))) == 3
    assert "run 2-1: train-epochs epochs=3 delay=6.0 cores=1" in proc.stdout
    assert "2 trials this session (1 ok, 1 pruned" in proc.stdout


# ---------------------------------------------------------------- bench/surface.py on any job


def test_a_surface_of_another_job_takes_its_space_fixed_and_fidelity(tmp_path):
    """bench/surface.py --job xgboost --space ... --fidelity rounds: the grid's runs are xgboost's, checked as the
    search checks them; a job other than LeNet's needs --space (the default space is LeNet's)."""
    from tests.test_replay import load_bench

    surface = load_bench("surface")
    space = write(tmp_path, "[rounds]\nchoices = [5, 10]\n[max_depth]\nchoices = [2, 4]\n")
    job = parse_job("xgboost", "learning_rate=0.3")
    specs = surface.grid_specs(load_space(space, space_params(job)), job, 2, 3, 0)
    assert len(specs) == 8 and {s.as_row()["model"] for s in specs} == {"xgboost"}
    assert sorted({(s.rounds, s.max_depth) for s in specs}) == [(5, 2), (5, 4), (10, 2), (10, 4)]
    assert surface.job_columns(job) == ("model", "nodes", "executors", "executor_cores", "rounds", "max_depth",
                                        "learning_rate")
    for argv, needle in ((["--job", "xgboost", "--fixed", "learning_rate=0.3"], "--space is required for the job "
                                                                                  "xgboost"),
                         (["--job", "xgboost", "--space", str(space)], "the job xgboost needs learning_rate"),
                         (["--job", "xgboost", "--space", str(space), "--fixed", "learning_rate=0.3", "--fidelity",
                           "trees"], "--fidelity trees: not a parameter of the job xgboost")):
        with pytest.raises(SearchOptionError, match=needle):
            surface.main([*argv, "--out", str(tmp_path / "rec")])
    assert not (tmp_path / "rec").exists()


@pytest.mark.slow
@pytest.mark.cluster
def test_real_xgboost_search_per_round_puts_every_validated_round_on_the_front(spark4_cluster, tmp_path):
    """--job xgboost --per-epoch --fidelity rounds on a real Spark 4 cluster: both grid points (max depth 2 and 4)
    run at the space's largest rounds (3), and each run's 3 validated rounds are points with rounds = 1, 2, 3."""
    space = write(tmp_path, "[rounds]\nchoices = [1, 3]\n[max_depth]\nchoices = [2, 4]\n")
    out = tmp_path / "xgb"
    argv = [sys.executable, "-m", "optimize.search", "--job", "xgboost", "--fixed", "learning_rate=0.3",
            "--space", str(space), "--sampler", "grid", "--per-epoch", "--fidelity", "rounds", "--pruner", "none",
            "--budget", "60m", "--out", str(out), "--train-samples", "512", "--test-samples", "128",
            "--timeout", "900", "--state-dir", str(spark4_cluster.state_dir), "--port", str(spark4_cluster.port),
            "--webui-port", str(spark4_cluster.webui_port)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert [(r["status"], r["rounds"], r["max_depth"]) for r in rows] == [("ok", "3", "2"), ("ok", "3", "4")], rows
    front = json.loads((out / "search.json").read_text())["front"]
    assert front["per_epoch"] and front["ok_runs"] == 6  # 2 runs x 3 validated rounds
    points = harvest(pd.read_csv(out / "results.csv"), out, "rounds",
                     ("model", "nodes", "executors", "executor_cores", "rounds", "max_depth", "learning_rate")).table()
    assert list(points["rounds"]) == [1, 2, 3, 1, 2, 3] and list(points["run_epochs"]) == [3] * 6
    assert "run 1-1: xgboost rounds=3 max_depth=2 learning_rate=0.3 cores=1" in proc.stdout
    assert [p["max_depth"] for p in front["front"]] and "max_depth" in json.loads((out / "manifest.json").read_text())[
        "factors"]  # the searched parameter is a factor of the campaign, shown beside each point
