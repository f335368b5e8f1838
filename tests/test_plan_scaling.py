"""The first scaling design (models.power.scaling): Ernest's A-optimal design for its model, cross-checked against
Ernest's documented example (amplab/ernest examples/mllib_rcv1.md: expt_design.py --min-parts 4 --max-parts 32
--total-parts 256 --min-mcs 1 --max-mcs 8 --cores-per-mc 4) and against an independent solve of the same problem."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from models.errors import PlanError
from models.power.scaling import candidates, costs, design, features

ARGS = (4, 32, 256, 1, 8, 4)
#: The runs Ernest's design chose and its walk-through then ran (examples/ernest_rcv1/results.csv): machines, fraction.
COLLECTED = [(8, 0.125), (1, 0.015625), (1, 0.021382), (3, 0.050164), (3, 0.055921), (3, 0.061678), (4, 0.061678)]


def test_the_design_chooses_every_run_of_ernest_s_documented_example_at_full_weight():
    runs, _ = design(*ARGS, budget=20.0)
    chosen = {(r.machines, round(r.fraction, 6)): r for r in runs}
    for machines, fraction in COLLECTED:
        run = chosen[(machines, fraction)]
        assert run.weight == pytest.approx(1.0, abs=1e-3)
        assert run.cores == 4 * machines and run.partitions == int(np.ceil(fraction * 256))
    point = candidates(*ARGS)
    weights = np.array([r.weight for r in runs])
    assert (weights > 0.3).all() and list(weights) == sorted(weights, reverse=True)
    spent = sum(r.weight * (r.fraction / (4 / 256)) / r.machines for r in runs)
    assert spent <= 20.0 + 1e-3 and len(point) > len(runs)


def test_the_weights_are_the_optimum_an_independent_solver_finds():
    """scipy's SLSQP on trace(M(lambda)^-1) under the same box and budget: cvxpy's optimum is no worse."""
    points = candidates(*ARGS)
    x = features(np.array([p[0] for p in points]), np.array([p[1] for p in points]))
    x = x / x.mean(axis=0)
    cost = costs(points, 4 / 256)

    def trace_inverse(lam: np.ndarray) -> float:
        return float(np.trace(np.linalg.inv(np.einsum("i,ij,ik->jk", lam, x, x))))

    _, weights = design(*ARGS, budget=20.0)
    start = np.full(len(points), 20.0 / cost.sum())
    ref = minimize(trace_inverse, start, method="SLSQP", bounds=[(1e-9, 1.0)] * len(points),
                   constraints=[{"type": "ineq", "fun": lambda lam: 20.0 - cost @ lam}],
                   options={"maxiter": 500, "ftol": 1e-12})
    assert cost @ weights <= 20.0 * (1 + 1e-3)  # the conic solver's tolerance
    assert trace_inverse(np.clip(weights, 1e-12, 1)) <= ref.fun * (1 + 1e-3)


def test_a_budget_below_the_cheapest_run_is_refused_in_one_line():
    with pytest.raises(PlanError, match="below the cheapest run"):
        design(*ARGS, budget=0.5)
    with pytest.raises(PlanError, match="partition per core"):
        design(4, 8, 256, 4, 8, 4)
