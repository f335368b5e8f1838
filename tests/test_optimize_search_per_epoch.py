"""optimize.search --per-epoch: epochs at the space's largest, the other factors searched, every validated epoch harvested."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from optimize.errors import SearchOptionError
from optimize.pareto import hypervolume, minimisation_matrix, ok_runs, parse_objectives, read_campaign
from optimize.search.__main__ import main, report
from optimize.search.space import at_largest_epochs, load_space
from sparkdl.cli import run_cli
from tests.test_optimize_pareto import hypervolume_by_cells
from tests.test_optimize_search import SPACE, curve, pruned_at, run_fake_search, write
from tests.test_optimize_fakes import WatchingFakeRunner

OBJECTIVES = parse_objectives("wall_clock_s:min,accuracy:max")


def test_at_largest_epochs_drops_the_factor_and_keeps_its_largest_level(tmp_path):
    space = load_space(write(tmp_path, SPACE + "\n[epochs]\nlow = 1\nhigh = 3\n"))
    rest, epochs = at_largest_epochs(space, 1)
    assert (rest.names, epochs) == (("learning_rate", "batch_size"), 3)
    chosen = load_space(write(tmp_path, SPACE + "\n[epochs]\nchoices = [2, 5, 4]\n", "c.toml"))
    assert at_largest_epochs(chosen, 1)[1] == 5
    plain = load_space(write(tmp_path, SPACE, "p.toml"))
    assert at_largest_epochs(plain, 2) == (plain, 2)  # no epochs factor: --job's epochs, harvested all the same
    only = load_space(write(tmp_path, "[epochs]\nlow = 1\nhigh = 3\n", "o.toml"))
    with pytest.raises(SearchOptionError, match="varies only epochs"):
        at_largest_epochs(only, 1)


def test_a_per_epoch_search_runs_every_trial_at_the_largest_epochs_and_reports_every_validated_epoch(tmp_path, capsys):
    space = load_space(write(tmp_path, SPACE + "\n[epochs]\nlow = 1\nhigh = 3\n"))
    rest, epochs = at_largest_epochs(space, 1)
    assert epochs == 3
    runner = WatchingFakeRunner(curve)
    out = tmp_path / "s"
    outcome, _, search = run_fake_search(out, rest, runner, budget=400)  # the job's epochs are 3 (run_fake_search)
    assert search.config.job.epochs == 3 and all(a[a.index("--epochs") + 1] == "3" for a in runner.argvs)
    assert "epochs" not in search.study.trials[0].params
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert {r["status"] for r in rows} == {"ok", "pruned"}
    summary = report(out, search.config, outcome, per_epoch=True)
    front = summary["front"]
    assert front["per_epoch"] is True and front["excluded_not_ok"] == 0
    # every validated epoch: 3 per ok run, the epochs before its stop per pruned run
    validated = sum(3 if r["status"] == "ok" else pruned_at(r) for r in rows)
    assert front["ok_runs"] == validated
    # the front is that of the points the fake curve gives at each validated epoch
    pts = np.array([(w, -a) for r in rows for e in range(1, 4)
                    if r["status"] == "ok" or e <= pruned_at(r)
                    for w, a in [curve(float(r["learning_rate"]), int(r["batch_size"]), e, 42)]])
    ref = np.array([front["reference"]["wall_clock_s"], -front["reference"]["accuracy"]])
    assert front["hypervolume"] == pytest.approx(hypervolume_by_cells(pts, ref), rel=1e-9)
    # ...which holds the per-run front: no less volume against the same reference
    table = read_campaign(out)
    per_run = hypervolume(minimisation_matrix(ok_runs(table, OBJECTIVES)[0], OBJECTIVES), ref)
    assert front["hypervolume"] >= per_run
    assert any(p["point"].endswith("@1") for p in front["front"])
    text = capsys.readouterr().out
    assert f"of {validated} validated epochs on the front" in text
    # without the option the same campaign reports one point per ok run
    plain = report(out, search.config, outcome)
    assert plain["front"]["per_epoch"] is False and plain["front"]["ok_runs"] == sum(r["status"] == "ok" for r in rows)


@pytest.mark.parametrize("extra, space_text, needle", [
    (["--objectives", "elapsed_s:min,accuracy:max"], SPACE + "\n[epochs]\nlow = 1\nhigh = 3\n", "drop --per-epoch"),
    ([], "[epochs]\nlow = 1\nhigh = 3\n", "varies only epochs"),
])
def test_per_epoch_refusals_come_before_any_job(tmp_path, capsys, extra, space_text, needle):
    space = write(tmp_path, space_text)
    code = run_cli(main, ["--job", "lenet", "--space", str(space), "--budget", "10m", "--out",
                          str(tmp_path / "s"), "--per-epoch", *extra])
    assert code == 2 and needle in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
