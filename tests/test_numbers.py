"""Numbers in and out: the one cell reader of results tables (sparkdl.numbers.cell, read by models.results and the
MLflow export alike), finite-or-None for one value going out and json_safe for a whole document."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sparkdl.numbers import NumberError, cell, finite, json_safe


@pytest.mark.parametrize("text, value", [
    ("", None), ("  ", None), ("3", 3), (" -12 ", -12), ("3.5", 3.5), ("1e-3", 0.001), (".5", 0.5),
    ("lenet", "lenet"), ("1_0", "1_0"), ("\uff13", "\uff13"), ("0x10", "0x10"),
])
def test_a_cell_is_none_a_number_or_its_text(text: str, value: object) -> None:
    got = cell(text)
    assert got == value and type(got) is type(value)


def test_non_finite_cells_are_floats_and_overlong_numbers_are_refused() -> None:
    assert cell("inf") == math.inf and cell("-Infinity") == -math.inf and math.isnan(cell("nan"))  # type: ignore[arg-type]
    assert cell("1e999") == math.inf
    for text, says in (("9" * 19, "19 digits"), ("1." + "9" * 80, "82 characters")):
        with pytest.raises(NumberError, match=says):
            cell(text)


@pytest.mark.parametrize("value, out", [
    (1, 1.0), (2.5, 2.5), (np.float32(1.5), 1.5), (np.int64(4), 4.0), (math.nan, None), (-math.inf, None),
    (np.float64("nan"), None), (True, None), (np.True_, None), ("3", None), (None, None), (10**400, None),
])
def test_finite_is_a_finite_float_or_none(value: object, out: float | None) -> None:
    got = finite(value)
    assert got == out and (got is None or type(got) is float)


def test_json_safe_makes_any_result_document_valid_json() -> None:
    doc = {"a": (1, np.float64("nan"), np.int64(3), np.bool_(True), "x", None, np.float32(2.5), math.inf),
           "b": {"c": [np.float64(0.25), (np.int32(7),)]}}
    safe = json_safe(doc)
    assert json.loads(json.dumps(safe, allow_nan=False)) == {"a": [1, None, 3, True, "x", None, 2.5, None],
                                                             "b": {"c": [0.25, [7]]}}
    assert type(safe["a"][2]) is int and type(safe["a"][3]) is bool


def test_models_results_and_the_mlflow_export_read_a_results_table_alike(tmp_path) -> None:
    """The same results.csv through models.results (the analyses) and the MLflow export: the same numbers."""
    from harness.mlflow_export import _cell_value
    from models.results import read_csv

    text = ("run,replicate,status,nodes,executors,executor_cores,model,wall_clock_s,accuracy,note\n"
            "1,1,ok,1,1,2,lenet,12.5,0.91,fast\n2,1,ok,2,1,2,lenet,1e1,0.875,\n")
    (tmp_path / "results.csv").write_text(text)
    _, frame = read_csv(tmp_path / "results.csv")
    rows = [line.split(",") for line in text.splitlines()]
    for i, row in enumerate(rows[1:]):
        for name, raw in zip(rows[0], row):
            exported = _cell_value(raw)
            analysed = frame[name].iloc[i]
            if isinstance(exported, float):
                assert exported == float(analysed), (name, raw)
            elif raw:
                assert exported == raw == analysed, (name, raw)
    assert _cell_value("9" * 400) == "9" * 400  # the export keeps text it cannot read as a number (a tag)
    (tmp_path / "big.csv").write_text(text.replace("12.5", "9" * 400))
    from models.errors import InvalidTableError

    with pytest.raises(InvalidTableError, match="line 2, column 'wall_clock_s'"):
        read_csv(tmp_path / "big.csv")
