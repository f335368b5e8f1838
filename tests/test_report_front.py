"""The report's time-against-accuracy section: the front is the brute-force set of non-dominated
runs, the extra time per accuracy point is computed by hand, and the CLI shows it."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from report import build_report
from report.front import time_accuracy


def table(seed: int, n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = rng.uniform(5, 60, n).round(2)
    a = np.clip(0.7 + 0.25 * (1 - np.exp(-t / 20)) + rng.normal(0, 0.03, n), 0, 1).round(4)
    frame = pd.DataFrame({"run": np.arange(1, n + 1), "replicate": 1, "nodes": rng.integers(1, 3, n),
                          "batch_size": rng.choice([32, 64], n), "status": "ok", "wall_clock_s": t, "accuracy": a})
    frame.loc[[3, 7], "status"] = ["failed", "incomplete"]
    frame.loc[[3, 7], "accuracy"] = [0.999, np.nan]  # a failed run's figure never reaches the front
    return frame


def brute_front(frame: pd.DataFrame) -> set[str]:
    ok = frame[frame["status"] == "ok"]
    keys = set()
    for i, r in ok.iterrows():
        beaten = any((o["wall_clock_s"] <= r["wall_clock_s"] and o["accuracy"] >= r["accuracy"])
                     and (o["wall_clock_s"] < r["wall_clock_s"] or o["accuracy"] > r["accuracy"])
                     for j, o in ok.iterrows() if j != i)
        if not beaten:
            keys.add(f"{r['run']}-{r['replicate']}")
    return keys


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_front_the_marginal_cost_and_the_fastest_run_at_a_target(seed):
    frame = table(seed)
    ta = time_accuracy(frame, target=0.9)
    assert {s.key for s in ta.steps} == brute_front(frame)
    assert ta.front.excluded == 2
    for prev, s in zip(ta.steps, ta.steps[1:]):  # along the front, more accuracy always costs time
        assert s.accuracy > prev.accuracy and s.wall_clock_s > prev.wall_clock_s
        assert s.seconds_per_point == pytest.approx((s.wall_clock_s - prev.wall_clock_s) / ((s.accuracy - prev.accuracy) * 100))
    ok = frame[frame["status"] == "ok"]
    reach = ok[ok["accuracy"] >= 0.9]
    if len(reach):
        assert ta.fastest is not None and ta.fastest.wall_clock_s == reach["wall_clock_s"].min()
    else:
        assert ta.fastest is None
    best = time_accuracy(frame)  # no target: the best accuracy observed, reached by the front's last run
    assert best.fastest == best.steps[-1] and best.target == ok["accuracy"].max()


def test_the_report_shows_the_front_and_answers_the_target_question(tmp_path):
    frame = table(4)
    path = tmp_path / "results.csv"
    frame.to_csv(path, index=False)
    report = build_report(path, plots=True, generated="2026-01-01T00:00:00+00:00", target_accuracy=0.85,
                          factors=["nodes", "batch_size"])
    assert "front" in report.sections
    body = report.html[report.html.index('id="front"'):]
    body = body[:body.index("</section>")]
    ta = time_accuracy(frame, 0.85)
    m = re.search(r"Fastest run reaching the target accuracy \(0\.85\): run (\d+-1), ([0-9.]+) s", body)
    assert m and m.group(1) == ta.fastest.key and float(m.group(2)) == pytest.approx(ta.fastest.wall_clock_s)
    assert f"{len(ta.steps)} of 28 ok runs are on the front" in body
    assert 'id="time-accuracy-front"' in body and "<img" in body and body.count("<tr>") >= len(ta.steps)


def test_a_table_without_time_and_accuracy_has_no_such_section_and_a_bad_target_is_one_line(tmp_path):
    frame = table(5).drop(columns=["accuracy"]).assign(cost=1.0)
    frame.to_csv(tmp_path / "cost.csv", index=False)
    report = build_report(tmp_path / "cost.csv", plots=False, factors=["nodes", "batch_size"])
    assert "front" not in report.sections
    table(5).to_csv(tmp_path / "results.csv", index=False)
    r = subprocess.run([sys.executable, "-m", "report", str(tmp_path / "results.csv"), "--no-plots",
                        "--factors", "nodes,batch_size", "--target-accuracy", "95", "--out", str(tmp_path / "r.html")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "--target-accuracy 95.0 must be a fraction" in r.stderr
    assert not (tmp_path / "r.html").exists()
