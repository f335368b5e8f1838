"""kill -9 of the harness at every phase of a real campaign, then --resume (one pass of bench/kill_matrix.py).

Each phase: every design row ends exactly once (ok) in results.csv and no process of the
state directory outlives the resumed campaign. ~3-5 min a phase on a loaded 2-core machine.
"""

from __future__ import annotations

import pytest

from bench.kill_matrix import PHASES, cleanup, run_trial

pytestmark = [pytest.mark.slow, pytest.mark.cluster]


@pytest.mark.parametrize("phase", PHASES)
def test_kill9_at_each_phase_then_resume_gives_every_row_once_and_leaves_no_jvm(phase, tmp_path):
    try:
        trial = run_trial(phase, tmp_path / "trial")
    finally:
        cleanup(tmp_path / "trial" / "cluster")
    assert trial.problems == [], (tmp_path / "trial" / "resumed.log").read_text()
