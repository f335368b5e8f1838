"""The report's response-surface section: present for a response-surface design, absent otherwise,
and its figures are those of models.rsm and models.desirability."""

from __future__ import annotations

import re

import pandas as pd

from report import build_report
from report.recover import recover_design
from report.surfaces import applicable
from models.results import ok_rows
from models.desirability import compromise, parse_goal
from models.desirability.confirm import steps_of
from models.rsm import analyse
from tests.test_desirability import FACTORS, campaign


def test_section_on_a_box_behnken_campaign(tmp_path):
    frame = campaign(seed=5)
    frame = pd.concat([frame, frame.iloc[[0]].assign(status="failed", accuracy=float("nan"))], ignore_index=True)
    path = tmp_path / "results.csv"
    frame.to_csv(path, index=False)
    report = build_report(path, plots=False, generated="2026-01-01T00:00:00+00:00")
    assert "surfaces" in report.sections
    html = report.html
    body = html[html.index('id="surfaces"'):]
    assert "the DoE-tool report" in body and "full quadratic" in body
    ok = ok_rows(frame)
    a = analyse(ok, "accuracy", FACTORS, "max")
    assert f"R^2 = {a.fit.r2:.4g}" in body
    goals = [parse_goal("wall_clock_s:min:t=log", ok["wall_clock_s"].to_numpy(float)),
             parse_goal("accuracy:max", ok["accuracy"].to_numpy(float))]
    best = compromise(ok, goals, FACTORS, steps=steps_of(ok))
    d = re.search(r"overall desirability D = ([0-9.]+)", body)
    assert d and abs(float(d.group(1)) - best.D) < 5e-3
    assert 'id="desirability"' in body and 'id="rsm-anova-accuracy"' in body and "lack of fit" in body
    assert 'id="tradeoff"' in body and "What more accuracy costs" in body


def test_no_section_for_a_two_level_factorial(tmp_path):
    rows = [{"learning_rate": lr, "batch_size": b, "epochs": 1, "nodes": 1, "executors": 1, "executor_cores": 1,
             "status": "ok", "wall_clock_s": 10 + b / 32 + lr, "accuracy": 0.5 + lr}
            for lr in (0.01, 0.1) for b in (32, 64) for _ in range(2)]
    frame = pd.DataFrame(rows)
    design = recover_design(frame, ("learning_rate", "batch_size"))
    assert "three levels" in applicable(frame, design)
    path = tmp_path / "results.csv"
    frame.to_csv(path, index=False)
    assert "surfaces" not in build_report(path, plots=False).sections
