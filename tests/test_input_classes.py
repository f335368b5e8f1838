"""Issue 26's classes of bad input, one case each (tests/inputs.py): an input error (exit 2) or the right value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import inputs

NAMES = sorted(inputs.SEEDS)


@pytest.mark.parametrize("seed", NAMES)
def test_seed_class(seed: str, tmp_path: Path) -> None:
    wrong = {}
    for case in inputs.SEEDS[seed](tmp_path):
        outcome = inputs.run_main(case.main, case.argv, timeout=60)
        problem = case.judge(outcome)
        if problem:
            wrong[case.name] = problem
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())
