"""Central composite designs: run counts, the three alphas checked against the property each one
promises (brute force on the design's own columns), natural levels, and the CLI."""

from __future__ import annotations

import csv
import doctest
import itertools

import numpy as np
import pytest

import harness.design.ccd as ccd_module
from harness.design import central_composite, make_factors, schedule
from harness.design.__main__ import main as design_main
from sparkdl import cli
from harness.design.ccd import orthogonal_alpha, resolve_alpha, rotatable_alpha
from harness.errors import DesignError


def main(argv):
    """The command as a user runs it: errors become one line and an exit code."""
    return cli.run_cli(design_main, argv)


def numeric(k: int) -> object:
    return make_factors({f"x{j}": [10.0, 20.0] for j in range(k)})


def quadratic_model_matrix(x: np.ndarray) -> np.ndarray:
    """Intercept, linear, two-factor interaction and pure quadratic columns, written out by hand."""
    k = x.shape[1]
    cols = [np.ones(len(x))] + [x[:, i] for i in range(k)]
    cols += [x[:, i] * x[:, j] for i, j in itertools.combinations(range(k), 2)]
    cols += [x[:, i] ** 2 for i in range(k)]
    return np.column_stack(cols)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("n0", [0, 1, 4])
def test_run_count_is_cube_plus_axial_plus_centre(k, n0):
    d = central_composite(numeric(k), "rotatable", n0)
    assert d.n_runs == 2**k + 2 * k + n0
    x = d.coded
    cube = x[: 2**k]
    assert {tuple(r) for r in cube} == set(itertools.product([-1.0, 1.0], repeat=k))
    axial = x[2**k: 2**k + 2 * k]
    assert np.allclose(np.sort(np.abs(axial).max(axis=1)), d.alpha)
    assert np.all((np.abs(axial) > 0).sum(axis=1) == 1)  # one factor off centre per axial point
    assert np.all(x[2**k + 2 * k:] == 0)


def test_alpha_values_from_the_textbook():
    # Montgomery, Design and Analysis of Experiments, Sec. 11.4: rotatable alpha = F^(1/4).
    assert rotatable_alpha(2) == pytest.approx(1.414, abs=1e-3)
    assert rotatable_alpha(3) == pytest.approx(1.682, abs=1e-3)
    assert rotatable_alpha(4) == pytest.approx(2.0)
    assert resolve_alpha("face-centered", 3, 2) == ("face-centred", 1.0)
    assert resolve_alpha("1.5", 3, 2) == ("custom", 1.5)
    # k = 2 with one centre point: N = 9, alpha^2 = (sqrt(36) - 4) / 2 = 1.
    assert orthogonal_alpha(2, 1) == pytest.approx(1.0)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_rotatable_prediction_variance_depends_only_on_radius(k):
    x = central_composite(numeric(k), "rotatable", 3).coded
    inv = np.linalg.inv(quadratic_model_matrix(x).T @ quadratic_model_matrix(x))
    rng = np.random.default_rng(k)
    for radius in (0.5, 1.0, 1.5):
        u = rng.normal(size=(200, k))
        pts = radius * u / np.linalg.norm(u, axis=1, keepdims=True)
        f = quadratic_model_matrix(pts)
        v = np.einsum("ij,jk,ik->i", f, inv, f)
        assert v.std() / v.mean() < 1e-5, (radius, v.min(), v.max())  # levels kept to 6 digits
    # and a non-rotatable alpha is not: the same check fails for the face-centred design
    x1 = central_composite(numeric(k), "face-centred", 3).coded
    inv1 = np.linalg.inv(quadratic_model_matrix(x1).T @ quadratic_model_matrix(x1))
    u = rng.normal(size=(200, k))
    f = quadratic_model_matrix(u / np.linalg.norm(u, axis=1, keepdims=True))
    v = np.einsum("ij,jk,ik->i", f, inv1, f)
    assert v.std() / v.mean() > 1e-3


@pytest.mark.parametrize("k,n0", [(2, 1), (2, 5), (3, 3), (4, 2), (5, 6)])
def test_orthogonal_alpha_makes_centred_quadratic_columns_uncorrelated(k, n0):
    d = central_composite(numeric(k), "orthogonal", n0)
    x = quadratic_model_matrix(d.coded)
    q = x[:, -k:] - x[:, -k:].mean(axis=0)
    gram = q.T @ q
    off = gram[~np.eye(k, dtype=bool)]
    assert np.allclose(off, 0.0, atol=1e-4 * np.abs(gram).max())  # levels kept to 6 digits
    # with every other alpha they are correlated
    d2 = central_composite(numeric(k), "rotatable", n0)
    q2 = quadratic_model_matrix(d2.coded)[:, -k:]
    q2 = q2 - q2.mean(axis=0)
    if not np.isclose(d2.alpha, d.alpha):
        assert np.abs((q2.T @ q2)[~np.eye(k, dtype=bool)]).max() > 1e-3


@pytest.mark.parametrize("alpha", ["rotatable", "orthogonal", "face-centred", 1.3])
def test_quadratic_model_is_estimable(alpha):
    d = central_composite(numeric(3), alpha, 2)
    x = quadratic_model_matrix(d.coded)
    assert np.linalg.matrix_rank(x) == x.shape[1] == 10


def test_face_centred_has_three_levels_and_natural_values():
    fs = make_factors({"lr": [0.02, 0.1], "batch": [32, 128], "epochs": [1, 3]})
    d = central_composite(fs, "face-centred", 3)
    assert [f.levels for f in d.factors.factors] == [(0.02, 0.06, 0.1), (32, 80, 128), (1, 2, 3)]
    assert set(np.unique(d.coded)) == {-1.0, 0.0, 1.0}
    assert d.points[-1] == (0.06, 80, 2)


def test_circumscribed_and_inscribed_natural_levels():
    fs = make_factors({"a": [10.0, 20.0], "b": [100.0, 200.0]})
    out = central_composite(fs, "rotatable", 1)
    a = out.factors.factors[0].levels
    assert a[0] == pytest.approx(15 - 5 * 2**0.5, rel=1e-5) and a[-1] == pytest.approx(15 + 5 * 2**0.5, rel=1e-5)
    assert 10.0 in a and 20.0 in a
    inside = central_composite(fs, "rotatable", 1, inscribed=True)
    a = inside.factors.factors[0].levels
    assert a[0] == 10.0 and a[-1] == 20.0  # the given limits are the axial points
    assert a[1] == pytest.approx(15 - 5 / 2**0.5, rel=1e-5)
    assert np.allclose(np.abs(inside.coded[:4]), 1.0)
    assert np.allclose(np.abs(inside.coded[4:8]).max(axis=1), 2**0.5, rtol=1e-5)


def test_integer_factor_is_rounded_and_coded_as_run():
    fs = make_factors({"lr": [0.04, 0.1], "batch": [64, 192]})
    d = central_composite(fs, "rotatable", 3)
    batch = d.factors.factors[1].levels
    assert batch == (37, 64, 128, 192, 219)  # 128 -+ 64 * 1.414 = 37.5, 218.5 rounded
    assert all(isinstance(v, int) for v in batch)
    # the coded matrix holds what ran: (37 - 128) / 64
    assert d.coded[:, 1].min() == pytest.approx((37 - 128) / 64)


@pytest.mark.parametrize(
    "levels,kwargs,message",
    [
        ({"a": [1, 2]}, {}, "at least 2 factors"),
        ({"a": [0.01, 0.1], "b": [1.0, 2.0]}, {}, "<= 0"),
        ({"a": [1, 3], "b": [10, 20]}, {"alpha": 1.2}, "merges"),
        ({"a": ["x", "y"], "b": [10, 20]}, {}, "non-numeric"),
        ({"a": [1, 2, 3], "b": [10, 20]}, {}, "give a CCD factor 2"),
        ({"a": [10, 20], "b": [10, 20]}, {"alpha": "steep"}, "rotatable, orthogonal"),
        ({"a": [10, 20], "b": [10, 20]}, {"alpha": -1.0}, "> 0"),
    ],
)
def test_bad_ccd_input_is_a_design_error(levels, kwargs, message):
    with pytest.raises(DesignError, match=message):
        central_composite(make_factors(levels), **kwargs)


def test_cli_writes_a_ccd_campaign_file(tmp_path, capsys):
    f = tmp_path / "f.toml"
    f.write_text('[factors.learning_rate]\nlevels = [0.02, 0.1]\n[factors.batch_size]\nlevels = [32, 128]\n'
                 '[factors.epochs]\nlevels = [1, 3]\n[constants]\nmodel = "lenet"\nnodes = 1\n')
    out = tmp_path / "d.csv"
    assert main(["--factors", str(f), "--kind", "ccd", "--axial", "face-centred", "--center-points", "4",
                 "--replications", "2", "--seed", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "central composite design, 3 factors, 18 runs (8 factorial + 6 axial + 4 center" in text
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 36
    assert rows[0].keys() >= {"run", "replicate", "learning_rate", "batch_size", "epochs", "model", "nodes"}
    centre = [r for r in rows if (r["learning_rate"], r["batch_size"], r["epochs"]) == ("0.06", "80", "2")]
    assert len(centre) == 8  # 4 centre points x 2 replicates


def test_cli_alpha_only_with_ccd(tmp_path, capsys):
    f = tmp_path / "f.toml"
    f.write_text("[factors.a]\nlevels = [1, 2]\n[factors.b]\nlevels = [1, 2]\n")
    assert main(["--factors", str(f), "--kind", "full", "--axial", "orthogonal", "--no-randomize",
                 "--out", str(tmp_path / "d.csv")]) == 2
    assert "apply to --kind ccd" in capsys.readouterr().err


def test_schedule_replicates_ccd_points():
    d = central_composite(numeric(2), "orthogonal", 2)
    plan = schedule(d, replications=3, seed=5)
    assert len(plan.jobs) == 3 * d.n_runs


def test_doctest():
    assert doctest.testmod(ccd_module).failed == 0
