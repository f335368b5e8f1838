"""A split-plot campaign for real: harness.design's whole plots run on a real standalone cluster, which is
rescaled or restarted only between whole plots; the results, the manifest and the analysis keep them (the
reference runs' placement and their use by the analysis are checked without Spark: tests/test_wholeplots.py,
tests/test_report_splitplot.py)."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

FACTORS = """[factors.nodes]
levels = [1, 2]
[factors.learning_rate]
levels = [0.01, 0.05]
[constants]
model = "lenet"
executors = 1
executor_cores = 1
epochs = 1
batch_size = 16
"""


def test_split_plot_campaign_rescales_only_between_whole_plots_and_keeps_them(local_cluster, tmp_path):
    factors = tmp_path / "factors.toml"
    factors.write_text(FACTORS)
    design = tmp_path / "design.csv"
    made = subprocess.run([sys.executable, "-m", "harness.design", "--factors", str(factors), "--kind", "full",
                           "--replications", "2", "--seed", "11", "--out", str(design)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert "4 whole plots" in made.stdout and "whole-plot error df: 2" in made.stdout
    rows = list(csv.DictReader(open(design)))
    out = tmp_path / "campaign"
    proc = subprocess.run([sys.executable, "-m", "harness.submit", str(design), "--local", "--state-dir",
                           str(local_cluster.state_dir), "--port", str(local_cluster.port), "--webui-port",
                           str(local_cluster.webui_port), "--out", str(out), "--train-samples", "256",
                           "--test-samples", "128"],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    # the progress: every rescale or reset comes right before the first run of a whole plot, and every whole
    # plot after the first starts with one (a reset even when nodes stays the same)
    plot_of = {f"{r['run']}-{r['replicate']}": int(r["whole_plot"]) for r in rows}
    events: list[tuple[str, str]] = []
    for line in proc.stdout.splitlines():
        m = re.match(r"\[\d+/\d+\] run (\d+-\d+): ", line)
        if m:
            events.append(("run", m.group(1)))
        elif "scaling the local cluster" in line or "resetting the cluster" in line:
            events.append(("change", line))
    runs = [key for kind, key in events if kind == "run"]
    assert len(runs) == len(rows) == 8
    for i, (kind, _) in enumerate(events):
        if kind == "change":
            nxt = next(key for k, key in events[i + 1:] if k == "run")
            before = [key for k, key in events[:i] if k == "run"]
            assert not before or plot_of[before[-1]] != plot_of[nxt], events  # never inside a whole plot
    boundaries = sum(plot_of[a] != plot_of[b] for a, b in zip(runs, runs[1:]))
    resets = [line for kind, line in events if kind == "change" and "resetting the cluster" in line]
    assert len(resets) == boundaries == 3  # 4 whole plots: a reset at each of the 3 boundaries
    assert all(kind == "run" or "resetting" in line for kind, line in events)  # no rescale but at a reset
    # the results keep each run's whole plot, and the manifest the structure
    results = list(csv.DictReader(open(out / "results.csv")))
    assert all(r["status"] == "ok" for r in results)
    assert {(r["run"], r["replicate"], r["whole_plot"]) for r in results} == \
        {(r["run"], r["replicate"], r["whole_plot"]) for r in rows}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["whole_plot_factors"] == ["nodes"] and manifest["whole_plots"] == 4
    assert "whole_plot" not in manifest["factors"]
    # the analysis: the split-plot ANOVA with no flags, the reference runs out of it and in the drift check
    anova = subprocess.run([sys.executable, "-m", "models.anova", str(out), "--response", "wall_clock_s", "--format",
                            "json"], capture_output=True, text=True, timeout=300)
    assert anova.returncode == 0, anova.stderr
    doc = json.loads(anova.stdout)
    assert doc["analysis"] == "split-plot" and doc["whole_plots"]["factors"] == ["nodes"]
    nodes = next(r for r in doc["rows"] if r["term"] == "nodes")
    assert nodes["stratum"] == "whole plot" and nodes["df_den"] == 2
    assert doc["drift"]["n"] == 8 and doc["drift"]["p"] is not None  # the trend beside the model, in the split-plot fit
    assert "random intercept per whole plot" in doc["drift"]["method"] and doc["drift"]["df"] > 0
    report = subprocess.run([sys.executable, "-m", "report", str(out), "--out", str(out / "report.html"), "--response",
                             "wall_clock_s"], capture_output=True, text=True, timeout=600)
    assert report.returncode == 0, report.stderr
    page = (out / "report.html").read_text()
    assert 'id="split-plot"' in page and "Drift over run order" in page and "residuals vs run order" in page
