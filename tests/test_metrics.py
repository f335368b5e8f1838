"""A json job's figures: read strictly; every unusable file is a reason, never an exception."""

from __future__ import annotations

import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.metrics import MAX_METRICS_BYTES, parse_metrics, read_metrics


def test_scalars_become_figures_and_lists_series():
    m = parse_metrics('{"accuracy": 0.91, "train_time_s": 12, "solver": "gd", "loss": [2.3, 1.1], "note": null}')
    assert m.problem is None
    assert m.figures == {"accuracy": 0.91, "train_time_s": 12.0, "solver": "gd", "note": None}
    assert m.series == {"loss": (2.3, 1.1)} and m.accuracy == 0.91 and m.wall_clock_s is None
    assert m.extra({"solver"}) == {"train_time_s": 12.0, "note": None}


@pytest.mark.parametrize("text, needle", [
    ("", "not valid JSON"), ("[1, 2]", "one JSON object"), ("{}", "no figures"),
    ('{"accuracy": 1.5}', "accuracy 1.5: it must be a fraction"),
    ('{"accuracy": -0.5}', "it must be a fraction"),
    ('{"accuracy": NaN}', "'accuracy' = NaN is not a finite number"),
    ('{"wall_clock_s": -3}', "wall_clock_s -3.0"),
    ('{"wall_clock_s": Infinity}', "'wall_clock_s' = Infinity is not a finite"),
    ('{"x": 1e999}', "not a finite number"),
    ('{"x": true}', "not a finite number"),
    ('{"x": {"a": 1}}', "not a finite number"),
    ('{"x": [1, "a"]}', "list with a value"),
    ('{"bad name": 1}', "names are letters"),
    ('{"x": "a\\nb"}', "line breaks"),
    ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
])
def test_unusable_documents_are_reasons(text, needle):
    m = parse_metrics(text, reserved={"status"})
    assert m.problem is not None and needle in m.problem and not m.figures


def test_a_figure_named_like_the_harness_s_own_columns_is_kept_as_job_name_with_a_note():
    # a stock pyspark.ml script writing {"accuracy": ..., "spark_version": "4.3.0"}: the run keeps both
    m = parse_metrics('{"accuracy": 0.9, "spark_version": "4.3.0", "status": "done", "job_status": 1, '
                      '"host_cpu": 3}', reserved={"status"})
    assert m.problem is None and m.accuracy == 0.9
    assert m.figures == {"accuracy": 0.9, "job_spark_version": "4.3.0", "job_job_status": "done", "job_status": 1.0,
                         "job_host_cpu": 3.0}
    assert len(m.notes) == 3 and "spark_version is kept as job_spark_version" in m.notes[0]
    # an echoed design value that differs still fails the run: it ran another configuration
    bad = parse_metrics('{"max_iter": 20, "spark_version": "4.3.0"}', design={"max_iter": 10})
    assert "ran another configuration" in bad.problem


def test_files(tmp_path):
    assert "wrote no metrics" in read_metrics(tmp_path / "none.json").problem
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_METRICS_BYTES + 1))
    assert "bytes: at most" in read_metrics(big).problem
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in read_metrics(fifo).problem
    good = tmp_path / "m.json"
    good.write_text(json.dumps({"accuracy": 0.5, "wall_clock_s": 3.25}))
    assert read_metrics(good).figures == {"accuracy": 0.5, "wall_clock_s": 3.25}


json_values = st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                        max_size=3), max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_gives_figures_or_a_reason(doc):
    m = parse_metrics(json.dumps(doc))
    assert (m.problem is None) != (not m.figures and not m.series)
    for value in m.figures.values():
        assert value is None or isinstance(value, str) or (isinstance(value, float) and math.isfinite(value)) or (
            type(value) is int and abs(value) < 2**63)  # a count stays an integer


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True),
                       st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=10))
def test_valid_figures_come_back_equal(doc):
    doc.pop("accuracy", None), doc.pop("wall_clock_s", None)
    doc = {k: v for k, v in doc.items() if not k.startswith(("spark_", "host_", "phase_"))}
    if not doc:
        return
    m = parse_metrics(json.dumps(doc))
    assert m.problem is None and m.figures == {k: float(v) for k, v in doc.items()}
