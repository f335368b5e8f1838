"""optimize.epochs: max epochs under a budget on a synthetic linear time model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from optimize.cli.epochs import main
from optimize.epochs import EpochTimeModel, largest_fitting, max_epochs, parse_config
from sparkdl.cli import run_cli
from optimize.errors import CampaignDataError, SearchOptionError

FAST = dict(cv_folds=4, n_estimators=40, grid={"max_depth": [None], "max_features": [1.0]})


def linear_campaign(noise: float = 0.5, seed: int = 1) -> pd.DataFrame:
    """elapsed = 20 + 30 * epochs / sqrt(cores) + 0.02 * batch (+ normal noise)."""
    rng = np.random.default_rng(seed)
    rows = [dict(model="lenet", nodes=1, executors=1, executor_cores=c, batch_size=b, epochs=e, learning_rate=0.05,
                 elapsed_s=20 + 30 * e / c**0.5 + 0.02 * b + rng.normal(0, noise), status="ok")
            for e in range(1, 11) for c in (1, 2) for b in (64, 256)]
    return pd.DataFrame(rows)


def truth(epochs, cores=1, batch=64):
    return 20 + 30 * epochs / cores**0.5 + 0.02 * batch


@pytest.fixture(scope="module")
def model():
    return EpochTimeModel(seed=0, **FAST).fit(linear_campaign())


def test_largest_fitting_rule():
    assert largest_fitting([1, 2, 3, 4], [10, 20, 30, 40], 30) == 3  # equal to the budget fits
    assert largest_fitting([1, 2, 3], [10, 20, 30], 9.9) is None
    assert largest_fitting([2, 4, 6], [50, 20, 70], 60) == 4  # the largest that fits, not the last before a miss


@pytest.mark.parametrize("budget, cores, expected", [
    # truth(e) = 21.28 + 30 e: budgets half-way between two epoch counts
    (185.0, 1, 5),   # 171.3 fits, 201.3 does not
    (110.0, 1, 2),
    (60.0, 1, 1),
    (240.0, 2, 10),  # 21.28 + 21.2 e: 10 epochs = 233.4
])
def test_max_epochs_on_a_linear_time_model(model, budget, cores, expected):
    choice = max_epochs(model, {"executor_cores": cores, "batch_size": 64}, budget, upper=10)
    assert choice.epochs == expected
    chosen = choice.chosen
    assert chosen.time == pytest.approx(truth(expected, cores), rel=0.06)
    assert chosen.time == pytest.approx(0.5 * (chosen.forest + chosen.regression))
    assert chosen.low <= chosen.time <= chosen.high
    assert all(p.fits == (p.time <= budget) for p in choice.predictions)


def test_none_fits_and_the_safe_choice_is_never_larger(model):
    assert max_epochs(model, {"executor_cores": 1, "batch_size": 64}, 10.0).epochs is None
    plain = max_epochs(model, {"executor_cores": 1, "batch_size": 64}, 185.0, upper=10)
    safe = max_epochs(model, {"executor_cores": 1, "batch_size": 64}, 185.0, upper=10, safe=True)
    assert safe.epochs is not None and safe.epochs <= plain.epochs
    assert safe.chosen.high <= 185.0


def test_interval_covers_held_out_noise():
    """The out-of-fold interval at level 0.9 covers about 90% of fresh runs (noise sd 5)."""
    m = EpochTimeModel(seed=0, **FAST).fit(linear_campaign(noise=5.0, seed=2))
    fresh = linear_campaign(noise=5.0, seed=99)
    mean, _, _ = m.predict(fresh)
    lo, hi = m.interval(mean, 0.9)
    y = fresh["elapsed_s"].to_numpy()
    assert 0.75 <= np.mean((lo <= y) & (y <= hi)) <= 1.0


def test_extrapolation_is_flagged(model):
    choice = max_epochs(model, {"executor_cores": 1, "batch_size": 64}, 500.0, upper=20)
    assert choice.epochs is not None and choice.epochs > 10 and choice.extrapolated


def test_config_errors_name_the_fix(model):
    with pytest.raises(SearchOptionError, match="lacks executor_cores"):
        max_epochs(model, {"batch_size": 64}, 100.0)
    with pytest.raises(SearchOptionError, match="only ran model='lenet'"):
        max_epochs(model, {"model": "birnn", "executor_cores": 1, "batch_size": 64}, 100.0)
    with pytest.raises(SearchOptionError, match="budget"):
        max_epochs(model, {"executor_cores": 1, "batch_size": 64}, 0.0)


def test_a_campaign_without_epoch_variation_is_refused():
    table = linear_campaign()
    with pytest.raises(CampaignDataError, match="never varied epochs"):
        EpochTimeModel(**FAST).fit(table[table.epochs == 1])


def test_parse_config():
    assert parse_config("model=lenet, batch_size=64,learning_rate=0.05") == {
        "model": "lenet", "batch_size": 64, "learning_rate": 0.05}
    with pytest.raises(SearchOptionError, match="key=value"):
        parse_config("lenet")


def test_cli(tmp_path, capsys):
    path = tmp_path / "results.csv"
    linear_campaign().to_csv(path, index=False)
    code = run_cli(main, ["--budget", "185", "--fixed", "executor_cores=1,batch_size=64", str(path),
                 "--upper", "10", "--cv-folds", "4", "--trees", "30"])
    out = capsys.readouterr().out
    assert code == 0 and "max epochs within 185 s: 5" in out
    assert run_cli(main, ["--budget", "185", "--fixed", "batch_size", str(path)]) == 2
    assert capsys.readouterr().err.startswith("error: --fixed item")
    # the option's former name is refused with the command's new spelling (one name for one thing)
    assert run_cli(main, ["--budget", "185", "--config", "batch_size=64", str(path)]) == 2
    assert "--config batch_size=64 is now --fixed batch_size=64" in capsys.readouterr().err
    assert run_cli(main, ["--budget", "185", "--campaign", str(path)]) == 2
    assert "is now the positional CAMPAIGN" in capsys.readouterr().err
    # the job is --job, as in every command; the budget is a duration, as in every command
    assert run_cli(main, [str(path), "--budget", "185", "--fixed", "model=lenet,batch_size=64"]) == 2
    assert "write --job lenet and drop model= from --fixed" in capsys.readouterr().err
    assert run_cli(main, [str(path), "--budget", "3m", "--fixed", "executor_cores=1,batch_size=64", "--upper", "10",
                          "--cv-folds", "4", "--trees", "30"]) == 0
    assert "max epochs within 180 s: " in capsys.readouterr().out


def test_per_epoch_table_reads_every_validated_epoch_from_the_logs(tmp_path):
    from harness.command import SubmitOptions
    from optimize.epochs import per_epoch_table
    from optimize.session import ClusterOptions, JobConfig, open_session
    from tests.test_optimize_fakes import FakeBackend, FakeRunner, fake_env

    runner = FakeRunner(lambda lr, b, e, s: (12.0 * e, 0.8))  # 12 s per epoch
    config = JobConfig(model="lenet", batch_size=64, learning_rate=0.05)
    with open_session(tmp_path, {"t": 1}, SubmitOptions("x"), ClusterOptions(), [config.spec(1, 1)], False,
                      backend=FakeBackend(), runner=runner, env=fake_env()) as session:
        session.run(config.spec(1, 1, epochs=3))
        session.run(config.spec(2, 1, epochs=2, batch_size=128))
    table = per_epoch_table(tmp_path)
    assert table[["source_run", "epochs", "batch_size"]].values.tolist() == [
        ["1-1", 1, 64], ["1-1", 2, 64], ["1-1", 3, 64], ["2-1", 1, 128], ["2-1", 2, 128]]
    assert table["wall_clock_s"].tolist() == pytest.approx([12.0, 24.0, 36.0, 12.0, 24.0])
    assert run_cli(main, [str(tmp_path), "--budget", "30", "--per-epoch"]) == 2  # needs --time wall_clock_s


def gapped_campaign(levels=(1, 3, 5), replicates=3, noise=0.3, seed=2) -> pd.DataFrame:
    """elapsed = 10 + 10 * epochs (+ noise), run at some epoch counts only (a design with levels 1, 3, 5)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame([dict(model="lenet", nodes=1, executors=1, executor_cores=1, batch_size=64, epochs=e,
                              learning_rate=0.05, elapsed_s=10 + 10 * e + rng.normal(0, noise), status="ok")
                         for e in levels for _ in range(replicates)])


def test_between_trained_epoch_counts_the_forest_interpolates_instead_of_stepping():
    """A forest splits epochs at 4 between trained 3 and 5 and predicted 3 epochs' 40 s for 4 (truth 50): the mean
    with the regression came out 45, so a budget of 47 s chose 4 epochs that take 50."""
    model = EpochTimeModel(seed=0, **FAST).fit(gapped_campaign())
    choice = max_epochs(model, {"batch_size": 64}, 47.0, upper=5)
    by_epochs = {p.epochs: p for p in choice.predictions}
    for e in (2, 4):
        assert by_epochs[e].forest == pytest.approx(10 + 10 * e, rel=0.03)
        assert by_epochs[e].time == pytest.approx(10 + 10 * e, rel=0.03)
    for e in (1, 3, 5):  # at a trained count the forest is its own
        configs = pd.DataFrame([{**choice.config, "epochs": e}])
        assert by_epochs[e].forest == pytest.approx(float(model.forest.predict(configs)[0]))
    assert choice.epochs == 3
    assert not by_epochs[4].fits
