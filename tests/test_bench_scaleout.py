"""bench/scaleout.py, small: both arms run, stop by the rule the bench states, and the summary counts add up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench(*extra: str) -> dict:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "scaleout.py"), "--seeds", "2", "--at", "8",
                           "--candidates", "1,2,4,6", "--width", "0.5", "--max-runs", "9", "--format", "json",
                           *extra], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-500:]
    return json.loads(done.stdout)


def test_the_next_run_bench_runs_both_arms_and_its_counts_add_up():
    payload = bench("--streams", "2", "--processes", "2")
    s = payload["summary"]
    assert s["seeds"] == 2 and s["advised_fewer_runs"] + s["ties"] + s["advised_more_runs"] == 2
    assert s["streams_compared"] == 4 and 0 <= s["streams_advised_fewer_runs"] <= 4
    assert 0 <= s["advised_fewer_significant"] <= s["advised_fewer_runs"]  # significant only where the mean is lower
    assert all(r["p_fewer"] is None or 0 < r["p_fewer"] <= 1 for r in payload["seeds"])
    for row in payload["seeds"]:
        for arm in ("advised", "uniform"):
            a = row[arm]
            assert len(a["streams"]) == 2 and a["runs"] == sum(x["runs"] for x in a["streams"]) / 2
            assert a["covered"] == sum(x["covered"] for x in a["streams"])
            for x in a["streams"]:
                assert 4 <= x["runs"] <= 9  # the four shared starting runs, then one at a time up to the cap
                assert x["capped"] == (x["width"] > 0.5 * ((100 + row["contention"] * 100 * 7
                                                             + row["coherency"] * 100 * 56) / 8))
                assert x["cluster_s"] > 0
    # the first stream is the one a single-stream bench draws (a seed replays whatever the stream count), in
    # another process or this one; the second stream draws other noise
    single = bench()
    assert all(r["p_fewer"] is None for r in single["seeds"])  # one draw per arm tests nothing
    for row, one in zip(payload["seeds"], single["seeds"]):
        for arm in ("advised", "uniform"):
            assert row[arm]["streams"][0] == one[arm]["streams"][0]
    assert any(row[arm]["streams"][0]["cluster_s"] != row[arm]["streams"][1]["cluster_s"]
               for row in payload["seeds"] for arm in ("advised", "uniform"))
