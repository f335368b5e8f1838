"""examples/concurrent_lenet: the real 60-job concurrent campaign, read and fitted as the docs print it.

If the loader, the fit or the intervals change meaning, the figures docs/queueing-and-prediction.md prints from
this folder stop being what ``sparkdl queueing cpu-disk`` says, and these tests fail. Nothing here is timed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from models.queueing import cli as queueing_cli
from models.queueing.cpu_disk import fit_cpu_disk, load_runs
from models.queueing.result import cpu_disk_fit
from sparkdl.cli import run_cli

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "concurrent_lenet"
#: folder -> (njobs it was run with, groups, batch sizes in run order), as the README's commands say
FOLDERS = {"j1a": (1, (64, 256, 256, 64)), "j2a": (2, (64, 256, 64, 256)), "j3a": (3, (64, 256, 256, 64)),
           "j3b": (3, (64, 256, 64, 256, 256, 64)), "j2b": (2, (256, 256, 64, 256, 64, 64)),
           "j1b": (1, (64, 256, 64, 256, 64, 256))}
N = 4000  # --train-samples 4000: 63 iterations at batch 64, 16 at 256
S_CPU = 0.045  # Albo Martínez 2021's E[S_cpu]


def folders(*names: str) -> list[Path]:
    return [EXAMPLE / name for name in names]


FIT_12 = folders("j1a", "j1b", "j2a", "j2b")
TEST_3 = folders("j3a", "j3b")
ALL = FIT_12 + TEST_3


def test_njobs_is_read_as_recorded():
    """Each folder's runs have the njobs its command ran (from concurrency.csv; results.csv has no njobs), one
    cpu each on one worker: processes 1, 2, 3."""
    for name, (njobs, batches) in FOLDERS.items():
        folder = EXAMPLE / name
        assert "njobs" not in (folder / "results.csv").read_text().splitlines()[0].split(",")
        configs, times = load_runs(folder, N)
        assert len(configs) == njobs * len(batches)
        assert {(c.njobs, c.cpus, c.workers, c.processes, c.epochs) for c in configs} == {(njobs, 1, 1, njobs, 1)}
        assert sorted(c.batch_size for c in configs) == sorted(b for b in batches for _ in range(njobs))
        assert all(math.isfinite(t) and t > 0 for t in times)
    configs, _ = load_runs(ALL, N)
    assert len(configs) == 60
    assert {c.iterations for c in configs} == {63, 16}


def test_the_fit_on_njobs_1_and_2_predicts_3_as_the_docs_print():
    """mu_D = 20.75 - 0.0332 b + 17.06 p (standard errors 1.57, 0.0041, 0.83); at njobs 3 the model says
    22.8 s (90 % CI 14.8-62.8) at batch 64, measured 16.7 s, and an unstable disk (no finite time) at batch
    256, measured 9.8 s, whose every run lies below the run interval's lower end (17.05 s)."""
    configs, times = load_runs(FIT_12, N)
    test_configs, test_times = load_runs(TEST_3, N)
    model = fit_cpu_disk(configs, times, S_CPU)
    assert (model.intercept, model.per_batch, model.per_process) == pytest.approx((20.75, -0.03317, 17.06), abs=5e-3)
    assert model.standard_errors == pytest.approx((1.573, 0.00406, 0.827), rel=2e-3)
    assert model.residual_df == 27
    fit = cpu_disk_fit(model, configs, times, 0.9, test_configs, test_times)
    rows = {(r.role, r.config.njobs, r.config.batch_size): r for r in fit.configs}
    assert sorted(rows) == sorted([("fit", j, b) for j in (1, 2) for b in (64, 256)]
                                  + [("test", 3, b) for b in (64, 256)])
    expected = {  # measured mean, predicted, predicted CI, runs, inside the one-run interval
        ("fit", 1, 64): (6.941, 7.514, (7.094, 8.026), 5, 4),
        ("fit", 1, 256): (4.057, 2.975, (2.619, 3.494), 5, 5),
        ("fit", 2, 64): (11.689, 10.419, (9.568, 11.516), 10, 10),
        ("fit", 2, 256): (6.320, 8.977, (6.076, 18.742), 10, 10),
        ("test", 3, 64): (16.700, 22.838, (14.837, 62.849), 15, 15),
    }
    for key, (measured, predicted, (low, high), runs, inside) in expected.items():
        r = rows[key]
        assert (r.measured_ET, r.predicted_ET, r.predicted_low, r.predicted_high) == pytest.approx(
            (measured, predicted, low, high), abs=5e-3), key
        assert (r.runs, r.inside) == (runs, inside), key
    broken = rows[("test", 3, 256)]
    assert broken.measured_ET == pytest.approx(9.789, abs=5e-3)
    assert broken.predicted_ET == math.inf and broken.predicted_low == math.inf  # the line itself is unstable
    assert broken.run_low == pytest.approx(17.054, abs=5e-3) and broken.run_high == math.inf
    assert broken.inside == 0 and broken.measured_high < broken.run_low  # every run faster than the model allows
    assert fit.mape == pytest.approx(0.2196, abs=5e-4)
    assert fit.test_mape == pytest.approx(0.3675, abs=5e-4)  # batch 64 only: batch 256 has no finite prediction


def test_the_fit_on_all_three_as_the_docs_print():
    """In-sample, all 60 runs: mu_D = 16.36 - 0.0240 b + 19.01 p; 46.4 % mean error over the six
    configurations, 28.4 s predicted at njobs 3 batch 256 (disk utilization 0.99) against 9.8 s measured."""
    configs, times = load_runs(ALL, N)
    model = fit_cpu_disk(configs, times, S_CPU)
    assert (model.intercept, model.per_batch, model.per_process) == pytest.approx((16.36, -0.02399, 19.01), abs=5e-3)
    fit = cpu_disk_fit(model, configs, times)
    assert fit.mape == pytest.approx(0.464, abs=5e-4)
    worst = next(r for r in fit.configs if (r.config.njobs, r.config.batch_size) == (3, 256))
    assert worst.predicted_ET == pytest.approx(28.35, abs=5e-3) and worst.disk_rho == pytest.approx(0.991, abs=5e-4)


def test_the_paper_recipe_for_the_cpu_time_leaves_no_room_for_the_disk():
    """E[S_cpu] as Albo Martínez 2021 takes it, batch / throughput of a lone job (64 / 672.3 records/s here =
    0.095 s), is above the fastest lone batch-64 run's seconds per iteration (0.0936): the model cannot be
    inverted, and the command says so (exit 2)."""
    import csv

    with open(EXAMPLE / "throughput_njobs1.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["iterations"]) == 63]
    assert len(rows) == 5
    s_cpu = 64 / (sum(float(r["mean_throughput"]) for r in rows) / len(rows))
    assert s_cpu == pytest.approx(0.0952, abs=1e-4)
    configs, times = load_runs(folders("j1a", "j1b"), N)
    fastest = min(t / c.iterations for c, t in zip(configs, times) if c.batch_size == 64)
    assert fastest == pytest.approx(0.0936, abs=1e-4) and fastest < s_cpu
    assert run_cli(queueing_cli.main, ["cpu-disk", *map(str, ALL), "--cpu-service-time", "0.095",
                                       "--dataset-size", str(N)]) == 2


def test_the_command_prints_the_held_out_rows(capsys):
    assert queueing_cli.main(["cpu-disk", *map(str, FIT_12), "--test", *map(str, TEST_3), "--cpu-service-time",
                              str(S_CPU), "--dataset-size", str(N), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["disk_rate"]["per_process"] == pytest.approx(17.06, abs=5e-3)
    test_rows = [r for r in doc["rows"] if r["role"] == "test"]
    assert [(r["njobs"], r["batch_size"], r["runs"]) for r in test_rows] == [(3, 64, 15), (3, 256, 15)]
    assert test_rows[1]["predicted_ET"] is None  # inf: JSON has no infinity
