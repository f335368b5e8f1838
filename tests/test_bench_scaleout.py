"""bench/scaleout.py, small: both arms run, stop by the rule the bench states, and the summary counts add up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_next_run_bench_runs_both_arms_and_its_counts_add_up():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "scaleout.py"), "--seeds", "2", "--at", "8",
                           "--candidates", "1,2,4,6", "--width", "0.5", "--max-runs", "9", "--format", "json"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-500:]
    payload = json.loads(done.stdout)
    s = payload["summary"]
    assert s["seeds"] == 2 and s["advised_fewer_runs"] + s["ties"] + s["advised_more_runs"] == 2
    for row in payload["seeds"]:
        for arm in ("advised", "uniform"):
            a = row[arm]
            assert 4 <= a["runs"] <= 9  # the four shared starting runs, then one at a time up to the cap
            assert a["capped"] == (a["width"] > 0.5 * ((100 + row["contention"] * 100 * 7
                                                         + row["coherency"] * 100 * 56) / 8))
            assert a["cluster_s"] > 0
