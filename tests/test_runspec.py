"""The design-file reader: every bad row named with its field and fix, good rows as RunSpecs."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import DesignFileError
from harness.runspec import RunSpec, batch_problem, read_design

HEADER = "nodes,executors,executor_cores,epochs,learning_rate,batch_size"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "design.csv"
    p.write_text(text)
    return p


def test_reads_rows_with_defaults(tmp_path):
    specs = read_design(write(tmp_path, f"{HEADER}\n1,1,1,1,0.01,64\n2,2,2,3,0.001,256\n"))
    assert specs == [
        RunSpec(run=1, replicate=1, nodes=1, executors=1, executor_cores=1, epochs=1, learning_rate=0.01, batch_size=64),
        RunSpec(run=2, replicate=1, nodes=2, executors=2, executor_cores=2, epochs=3, learning_rate=0.001,
                batch_size=256),
    ]
    assert specs[1].total_cores == 8 and specs[1].cores_per_node == 4 and specs[1].key == "2-1"


def test_optional_columns_and_learning_rate_above_one(tmp_path):
    # Seed 001's optimizer silently ran every rate above 1.0 at 1.024; we keep the value exactly.
    specs = read_design(write(tmp_path, f"run,replicate,model,{HEADER}\n7,3,lenet,1,1,1,1,9.011,64\n"))
    assert (specs[0].run, specs[0].replicate, specs[0].model, specs[0].learning_rate) == (7, 3, "lenet", 9.011)


def test_integers_written_as_floats_are_accepted(tmp_path):
    assert read_design(write(tmp_path, f"{HEADER}\n1.0,1,1,1,0.01,64\n"))[0].nodes == 1


@pytest.mark.parametrize("row, needle", [
    ("0,1,1,1,0.01,64", "nodes='0' is below 1"),
    ("x,1,1,1,0.01,64", "nodes='x' is not a number"),
    ("1.5,1,1,1,0.01,64", "nodes='1.5' is not a whole number"),
    ("1,1,1,1,-0.01,64", "learning_rate='-0.01' must be a positive"),
    ("1,1,1,1,nan,64", "learning_rate='nan' must be a positive finite"),
    ("1,1,1,1,,64", "learning_rate='' is not a number"),
    ("2,2,2,1,0.01,65", "batch_size=65 is not a multiple of nodes x executors x executor_cores = 8"),
    ("1,1,1,1,0.01,64,9", "more values than columns"),
])
def test_each_bad_row_is_named_with_field_and_fix(tmp_path, row, needle):
    with pytest.raises(DesignFileError) as e:
        read_design(write(tmp_path, f"{HEADER}\n1,1,1,1,0.01,64\n{row}\n"))
    assert len(e.value.problems) == 1
    assert e.value.problems[0].startswith("row 2: ")
    assert needle in e.value.problems[0]


def test_all_problems_reported_at_once(tmp_path):
    with pytest.raises(DesignFileError) as e:
        read_design(write(tmp_path, f"{HEADER}\n0,1,1,1,0.01,64\n1,1,1,0,0.01,64\n1,1,1,1,0.01,3\n"))
    assert [p.split(":")[0] for p in e.value.problems] == ["row 1", "row 2"]  # 3 is a multiple of 1 core


def test_missing_and_unknown_columns(tmp_path):
    with pytest.raises(DesignFileError) as e:
        read_design(write(tmp_path, "nodes,executors,cores,epochs,learning_rate,batch_size\n1,1,1,1,0.1,64\n"))
    text = str(e.value)
    assert "missing column(s) executor_cores" in text and "unknown column(s) cores" in text


def test_duplicate_cells_and_unknown_model(tmp_path):
    with pytest.raises(DesignFileError) as e:
        read_design(write(tmp_path, f"run,model,{HEADER}\n1,birnn,1,1,1,1,0.1,64\n1,birnn,1,1,1,1,0.1,64\n"
                                    f"2,resnet,1,1,1,1,0.1,64\n"))
    assert "repeats row 1" in e.value.problems[0] and "model='resnet' is unknown" in e.value.problems[1]


def test_empty_and_unreadable_files(tmp_path):
    with pytest.raises(DesignFileError, match="no rows"):
        read_design(write(tmp_path, HEADER + "\n"))
    with pytest.raises(DesignFileError, match="cannot read"):
        read_design(tmp_path / "absent.csv")


def test_batch_check_can_be_lifted(tmp_path):
    specs = read_design(write(tmp_path, f"{HEADER}\n2,2,2,1,0.01,65\n"), check_batch=False)
    assert batch_problem(specs[0]) is not None


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_arbitrary_text_never_crashes(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("d") / "design.csv"
    path.write_text(text)
    try:
        specs = read_design(path)
    except DesignFileError as e:
        assert e.problems and all(isinstance(p, str) and p for p in e.problems)
    else:
        assert all(isinstance(s, RunSpec) and s.batch_size % s.total_cores == 0 for s in specs)


def test_courier_njobs_column_points_to_the_concurrent_runner(tmp_path):
    with pytest.raises(DesignFileError, match="optimize.concurrent"):
        read_design(write(tmp_path, f"{HEADER},njobs\n1,1,1,1,0.01,64,2\n"))
