"""optimize.batch (Courier) and optimize.concurrent: choices on known tables, concurrency through the harness."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pandas as pd
import pytest

from harness.command import SubmitOptions
from optimize.batch import Courier, choose, evaluate
from optimize.cli.batch import main
from sparkdl.cli import run_cli
from optimize.concurrent import GROUPS_CSV, courier_table, run_group
from optimize.errors import CampaignDataError, SearchOptionError
from optimize.session import ClusterOptions, JobConfig, open_session
from tests.test_optimize_fakes import FakeBackend, FakeRunner, fake_env

FAST = dict(cv_folds=3, n_estimators=40, grid={"max_depth": [None], "max_features": [1.0]})
TIME_1x1 = {64: 283.0, 128: 200.0, 256: 141.0, 512: 100.0}
ACCURACY = {64: 0.95, 128: 0.93, 256: 0.90, 512: 0.85}


def known_table(reps: int = 3) -> pd.DataFrame:
    """time = TIME_1x1[batch] * njobs / cpus; accuracy by batch alone; no noise."""
    rows = [dict(batch=b, cpus=c, njobs=j, network="lenet", time=TIME_1x1[b] * j / c, accuracy=ACCURACY[b])
            for b, c, j, _ in itertools.product(TIME_1x1, (1, 2), (1, 2), range(reps))]
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- the rule


def test_choose_highest_accuracy_within_the_slo():
    c = choose([64, 128, 256, 512], [283, 200, 141, 100], [0.95, 0.93, 0.90, 0.85], slo=250)
    assert c.batch == 128 and c.meets_slo
    assert [x.meets_slo for x in c.candidates] == [False, True, True, True]


def test_choose_none_meets_returns_the_fastest_flagged():
    c = choose([64, 128, 256, 512], [283, 200, 141, 100], [0.95, 0.93, 0.90, 0.85], slo=50)
    assert c.batch == 512 and not c.meets_slo and c.chosen.time == 100


def test_choose_time_equal_to_the_slo_meets_it_and_ties_prefer_faster():
    c = choose([64, 128], [100.0, 90.0], [0.9, 0.9], slo=100.0)
    assert c.batch == 128 and c.meets_slo  # equal accuracy: the faster one
    assert choose([64], [100.0], [0.5], slo=100.0).meets_slo


@pytest.mark.parametrize("slo", [0, -5])
def test_choose_refuses_a_non_positive_slo(slo):
    with pytest.raises(SearchOptionError, match="slo"):
        choose([64], [1.0], [0.5], slo=slo)


# ---------------------------------------------------------------- forests on a known table


@pytest.fixture(scope="module")
def courier():
    return Courier(seed=0, **FAST).fit(known_table())


@pytest.mark.parametrize("job, slo, batch, met", [
    ({"cpus": 1, "njobs": 1}, 250, 128, True),     # 128 (200 s) is the most accurate within 250 s
    ({"cpus": 1, "njobs": 1}, 120, 512, True),     # only 512 (100 s)
    ({"cpus": 1, "njobs": 2}, 350, 256, True),     # times doubled: 566, 400, 282, 200
    ({"cpus": 2, "njobs": 1}, 130, 128, True),     # times halved: 141.5, 100, 70.5, 50
    ({"cpus": 2, "njobs": 1}, 200, 64, True),
    ({"cpus": 1, "njobs": 2}, 100, 512, False),    # nothing meets 100 s: the fastest, flagged
])
def test_courier_choice_on_a_known_campaign(courier, job, slo, batch, met):
    choice = courier.choose({**job, "network": "lenet"}, slo)
    assert (choice.batch, choice.meets_slo) == (batch, met)
    chosen = choice.chosen
    truth = TIME_1x1[batch] * job["njobs"] / job["cpus"]
    assert chosen.time == pytest.approx(truth, rel=0.15) and chosen.accuracy == pytest.approx(ACCURACY[batch], abs=0.02)


def test_courier_needs_the_courier_columns():
    with pytest.raises(CampaignDataError, match="lacks column"):
        Courier(**FAST).fit(known_table().drop(columns=["njobs"]))


def synthetic_campaign(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for b, c, j, net, _ in itertools.product((64, 128, 256, 512), (1, 2, 4, 8), (1, 3, 5), ("lenet", "birnn"),
                                             range(2)):
        t = (120 if net == "lenet" else 240) * (1 + 0.1 * c * j) / c**0.5 * (1 + 128 / b)
        a = 0.96 - 0.02 * np.log2(b / 64) - (0.03 if net == "birnn" else 0)
        rows.append(dict(batch=b, cpus=c, njobs=j, network=net, time=t * rng.lognormal(0, 0.03),
                         accuracy=a + rng.normal(0, 0.002)))
    return pd.DataFrame(rows)


def test_evaluation_against_a_uniformly_random_batch():
    table = synthetic_campaign()
    ev = evaluate(table, trials=60, seed=3, courier=Courier(seed=0, **FAST))
    # figures recomputed from the rows, independently of the properties
    met_c = sum(r.courier_time <= r.slo for r in ev.rows) / len(ev.rows)
    met_r = sum(r.random_time <= r.slo for r in ev.rows) / len(ev.rows)
    assert ev.courier_fulfilment == met_c and ev.random_fulfilment == met_r
    assert ev.courier_fulfilment > ev.random_fulfilment
    # each trial's measured figures are the campaign's means for that configuration and batch
    r = ev.rows[0]
    sel = table[(table.cpus == r.job["cpus"]) & (table.njobs == r.job["njobs"]) & (table.network == r.job["network"])]
    assert r.courier_time == pytest.approx(sel[sel.batch == r.courier_batch].time.mean())
    assert r.random_accuracy == pytest.approx(sel[sel.batch == r.random_batch].accuracy.mean())
    # random choices are uniform over the candidates
    assert {x.random_batch for x in ev.rows} == {64, 128, 256, 512}


def test_evaluation_needs_complete_configurations():
    table = known_table()
    with pytest.raises(CampaignDataError, match="at every candidate batch"):
        evaluate(table[table.batch != 512], trials=5, courier=Courier(**FAST))


def test_cli_chooses_and_reports(tmp_path, capsys):
    path = tmp_path / "courier.csv"
    known_table().to_csv(path, index=False)
    assert run_cli(main, [str(path), "--slo", "120", "--cpus", "1", "--njobs", "1", "--job", "lenet",
                 "--cv-folds", "3", "--trees", "30"]) == 0
    out = capsys.readouterr().out
    assert "<- chosen" in out and "batch 512: highest predicted accuracy within the SLO" in out
    assert run_cli(main, [str(path), "--slo", "10", "--cpus", "1", "--njobs", "1", "--job", "lenet",
                 "--cv-folds", "3", "--trees", "30"]) == 0
    assert "no batch size meets the SLO of 10 s: batch 512 is the fastest" in capsys.readouterr().out
    assert run_cli(main, [str(path), "--slo", "10"]) == 2
    assert "error: give --slo, --cpus" in capsys.readouterr().err
    # the former spellings are refused with the current ones
    assert run_cli(main, ["--campaign", str(path), "--slo", "10"]) == 2
    assert f"--campaign {path} is now the positional CAMPAIGN: write {path} without --campaign" in capsys.readouterr().err
    assert run_cli(main, [str(path), "--network", "lenet"]) == 2
    assert "--network lenet is now --job lenet" in capsys.readouterr().err


# ---------------------------------------------------------------- concurrency


class TogetherRunner(FakeRunner):
    """Every job waits at a barrier for the others: a sequential run would break it."""

    def __init__(self, parties: int, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.barrier = threading.Barrier(parties, timeout=10)
        self.lock = threading.Lock()

    def run(self, argv, env, out, err, timeout, on_start=None):
        self.barrier.wait()
        with self.lock:
            return super().run(argv, env, out, err, timeout, on_start)


def test_njobs_copies_run_at_once_each_with_its_own_cell_and_log(tmp_path):
    runner = TogetherRunner(3, lambda lr, b, e, s: (30.0 + b / 64, 0.9))
    config = JobConfig(model="lenet", batch_size=64, learning_rate=0.05)
    backend = FakeBackend()
    with open_session(tmp_path, {"t": 1}, SubmitOptions("x"), ClusterOptions(), [config.spec(1, 1)], False,
                      backend=backend, runner=runner, env=fake_env()) as session:
        group = run_group(session, 1, [config.spec(i, 1) for i in (1, 2, 3)])
        assert group.njobs == 3 and all(r.status == "ok" for r in group.results)
        assert len(backend.prepared) == 1  # the cluster is prepared once for the group
        again = run_group(session, 1, [config.spec(i, 1) for i in (1, 2, 3)])  # finished: reused
        assert again.results == group.results and len(runner.argvs) == 3
    assert sorted(p.name for p in (tmp_path / "logs").glob("*.out")) == ["1-1.out", "2-1.out", "3-1.out"]
    table = courier_table(tmp_path)
    assert list(table.columns) == ["batch", "cpus", "njobs", "network", "time", "accuracy"]
    assert table["njobs"].tolist() == [3, 3, 3] and table["batch"].tolist() == [64] * 3
    assert table["time"].tolist() == [31.0 + 5.0] * 3  # elapsed_s: the fake's wall clock + 5 s
    assert (tmp_path / GROUPS_CSV).read_text().splitlines()[0] == "run,replicate,group,njobs"


def test_margin_requires_headroom_below_the_slo():
    times, accs = [283, 200, 141, 100], [0.95, 0.93, 0.90, 0.85]
    assert choose([64, 128, 256, 512], times, accs, slo=210).batch == 128
    assert choose([64, 128, 256, 512], times, accs, slo=210, margin=0.1).batch == 256  # 200 x 1.1 > 210
    with pytest.raises(SearchOptionError, match="margin"):
        choose([64], [1.0], [0.5], slo=10, margin=-0.1)
