"""kill -9 of the harness during a real campaign, then --resume: three phases of bench/kill_matrix.py.

Each phase: every design row ends exactly once (ok) in results.csv and no process of the state
directory outlives the resumed campaign. The suite runs three classes of crash: a daemon spawned but
not recorded during the rescale, the cluster of one runtime stopped and the next runtime's not yet
started, and a finished job not yet stored. A job left
running when the harness dies is tests/test_campaign_faults.py's sigkill test.
`python bench/kill_matrix.py [--repeats N]` runs all eight phases and prints the tally (a trial takes
minutes, so the whole matrix lives in bench/).
"""

from __future__ import annotations

import pytest

from bench.kill_matrix import PHASES, cleanup, run_trial

pytestmark = [pytest.mark.slow, pytest.mark.cluster]


# mid-job is tests/test_campaign_faults.py's sigkill test (the harness killed while a job runs, then --resume)
SUITE_PHASES = ("worker-spawned:2", "runtime-switch", "store")
assert set(SUITE_PHASES) <= set(PHASES)


@pytest.mark.parametrize("phase", SUITE_PHASES)
def test_kill9_at_each_phase_then_resume_gives_every_row_once_and_leaves_no_jvm(phase, tmp_path):
    try:
        trial = run_trial(phase, tmp_path / "trial")
    finally:
        cleanup(tmp_path / "trial" / "cluster")
    assert trial.problems == [], (tmp_path / "trial" / "resumed.log").read_text()
    if phase == "runtime-switch":  # killed where the runtime changes, not before it
        killed = (tmp_path / "trial" / "killed.log").read_text()
        assert "restarting the local cluster on runtime spark4 (it ran bigdl)" in killed, killed
