"""python -m logparse on a campaign folder whose files are hostile: the recorded row of a json job is checked
(a figure no run can have is one error line naming it, exit 2), and a manifest.json that is a FIFO is
refused, not waited on (the CLI runs in a child process with a deadline: before, it hung)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_logparse_campaign import make_campaign, run

ROOT = Path(__file__).resolve().parents[1]


def set_row(results_csv: Path, key: str, **values: str) -> None:
    with open(results_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if f"{row['run']}-{row['replicate']}" == key:
            row.update(values)
    with open(results_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


@pytest.mark.parametrize("field,value,words", [
    ("epochs_completed", "inf", "not a finite number"),
    ("epochs_completed", "9" * 400, "characters"),
    ("accuracy", "5.5", "above 1"),
    ("wall_clock_s", "-7", "below 0"),
    ("accuracy", "nan", "not a finite number"),
    ("epochs_completed", "2.5", "not a whole number"),
])
def test_a_recorded_figure_no_run_can_have_is_refused_naming_it(tmp_path, field, value, words):
    folder, _ = make_campaign(tmp_path / "c", "json")
    set_row(folder.results_csv, "1-1", **{field: value})
    code, rows, err = run("--format", "json", str(folder.path))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and field in lines[0] and words in lines[0], err
    assert "1-1.out" in lines[0]
    by_log = {Path(r["path"]).name: r for r in rows}
    assert by_log["1-1.out"]["status"] == "failed" and "cannot read" in by_log["1-1.out"]["reason"]
    assert by_log["2-1.out"]["status"] == "ok"  # the BigDL log beside it is read as before


def test_a_recorded_row_within_bounds_is_the_value_given(tmp_path):
    folder, _ = make_campaign(tmp_path / "c", "json")
    set_row(folder.results_csv, "1-1", accuracy="1", wall_clock_s="0", epochs_completed="3.0")
    code, rows, err = run("--format", "json", str(folder.logs / "1-1.out"))
    assert err == "" and (rows[0]["accuracy"], rows[0]["wall_clock_s"], rows[0]["epochs_completed"]) == (1.0, 0.0, 3)


@pytest.mark.parametrize("name", ["manifest.json", "results.csv"])
def test_a_fifo_in_the_campaign_folder_is_refused_not_waited_on(tmp_path, name):
    folder, _ = make_campaign(tmp_path / "c", "json")
    target = folder.path / name
    target.unlink()
    os.mkfifo(target)
    done = subprocess.run([sys.executable, "-m", "logparse", str(folder.logs / "1-1.out")], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and f"{target}: the campaign" in done.stderr and "FIFO" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
