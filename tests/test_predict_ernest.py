"""One Ernest: the model table's and the scale-out section's are one fit, Ernest's predictor's (NNLS on the times,
features 1, s/m, log m, m), checked on Ernest's published example; and the --work / --at command line's answers to
bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import nnls

from models.predict.cli import main
from models.predict.scaling import ERNEST, ErnestModel, fit_curve
from sparkdl.cli import run_cli

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ernest_rcv1"
#: Ernest's predictor on its walk-through's data (amplab/ernest, examples/mllib_rcv1.md): cores -> seconds.
PUBLISHED = {16: 16.4412832993, 32: 12.4735312069, 48: 11.4279763052, 64: 11.040126181}


def test_the_example_is_the_reference_data():
    table = pd.read_csv(EXAMPLE / "results.csv")
    assert list(table.columns) == ["cores", "input_fraction", "time_s"] and len(table) == 7


def test_ernest_reproduces_its_published_predictions_in_the_model_and_in_the_scale_out(capsys):
    table = pd.read_csv(EXAMPLE / "results.csv")
    # an independent computation: Ernest's features in its own order [1, s/m, m, log m], scipy's nnls
    m, s, y = (table[c].to_numpy(dtype=float) for c in ("cores", "input_fraction", "time_s"))
    theta = nnls(np.column_stack([np.ones_like(m), s / m, m, np.log(m)]), y)[0]
    cores = np.array(list(PUBLISHED), dtype=float)
    independent = np.column_stack([np.ones(4), 1 / cores, cores, np.log(cores)]) @ theta
    np.testing.assert_allclose(independent, list(PUBLISHED.values()), rtol=1e-9)

    fit = fit_curve(ERNEST, m, y, s=s)
    np.testing.assert_allclose(fit.predict(cores, np.zeros((4, 0)), np.ones(4)), list(PUBLISHED.values()), rtol=0.01)
    model = ErnestModel("time_s", scale_columns=["cores"], work="input_fraction").fit(table)
    full = pd.DataFrame({"cores": cores, "input_fraction": 1.0})
    np.testing.assert_allclose(model.predict(full), list(PUBLISHED.values()), rtol=0.01)

    assert run_cli(main, [str(EXAMPLE / "results.csv"), "--response", "time_s", "--parallelism", "cores", "--work",
                          "input_fraction=1", "--at", "16,32,48,64", "--models", "ernest", "--split", "random",
                          "--no-intervals", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    points = {t["parallelism"]: next(c["point"] for c in t["curves"] if c["curve"] == "ernest")
              for t in payload["at"]["targets"]}
    assert [t["work"] for t in payload["at"]["targets"]] == [1.0] * 4
    for cores_, published in PUBLISHED.items():
        assert points[float(cores_)] == pytest.approx(published, rel=0.01)
        assert any(t["low"] <= published <= t["high"] for t in payload["at"]["targets"]
                   if t["parallelism"] == cores_)


def test_without_work_every_run_does_one_unit_and_the_work_column_is_no_covariate():
    table = pd.read_csv(EXAMPLE / "results.csv")
    with_work = ErnestModel("time_s", scale_columns=["cores"], work="input_fraction").fit(table)
    assert "input_fraction" not in with_work.fit_.covariates.columns
    without = ErnestModel("time_s", scale_columns=["cores"]).fit(table)
    assert "input_fraction" in without.fit_.covariates.columns


def bad_table(tmp_path: Path) -> str:
    table = pd.read_csv(EXAMPLE / "results.csv")
    table["zero"], table["neg"], table["text"] = 0.0, -1.0, "x"
    table["holes"] = [0.5, float("nan")] * 3 + [0.5]
    table.to_csv(tmp_path / "results.csv", index=False)
    return str(tmp_path / "results.csv")


@pytest.mark.parametrize("argv, message", [
    (["--work", "zero"], "not a number > 0"),
    (["--work", "neg"], "not a number > 0"),
    (["--work", "text"], "not a number > 0"),
    (["--work", "holes"], "not a number > 0"),
    (["--work", "input_fraction=0"], "above 0 and at most 1e+12"),
    (["--work", "input_fraction=-1"], "above 0 and at most 1e+12"),
    (["--work", "input_fraction=2e12"], "above 0 and at most 1e+12"),
    (["--work", "input_fraction=nan"], "above 0 and at most 1e+12"),
    (["--work", "input_fraction=lots"], "above 0 and at most 1e+12"),
    (["--work", "nope"], "'nope' is not in the table"),
    (["--work", "input_fraction=1", "--at", "16,32,16"], "names parallelism 16 twice"),
    (["--work", "input_fraction=1", "--at", "2,16"], "below the data"),
    (["--at", "16,x"], "give parallelisms as numbers"),
    (["--at", "16"], "already reach parallelism 32"),
])
def test_bad_work_and_scales_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    where = bad_table(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    code = run_cli(main, [where, "--response", "time_s", "--parallelism", "cores", "--models", "ernest",
                          "--split", "random", "--no-intervals", "--factors", "cores,input_fraction", *argv])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert message in err and "Traceback" not in err and out == ""
    assert len([line for line in err.splitlines() if line.startswith("error")]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before
