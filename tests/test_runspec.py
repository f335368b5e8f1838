"""The design-file reader: read exactly, every bad row named with its field and fix, good rows as RunSpecs."""

import os
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.designfile import MAX_FIELD_CHARS, check_design, read_design, read_table
from harness.errors import DesignFileError
from harness.job import JobChoice, builtin
from sparkdl.runspec import ParamRule, RunSpec, batch_problem, parse_value

HEADER = "nodes,executors,executor_cores,epochs,learning_rate,batch_size"


def write(tmp_path: Path, text: str, name: str = "design.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return p


def problems(tmp_path: Path, text: str, **kw) -> list[str]:
    with pytest.raises(DesignFileError) as e:
        read_design(write(tmp_path, text), **kw)
    return e.value.problems


def test_reads_rows_with_defaults(tmp_path):
    specs = read_design(write(tmp_path, f"{HEADER}\n1,1,1,1,0.01,64\n2,2,2,3,0.001,256\n"))
    assert specs == [
        RunSpec(run=1, replicate=1, nodes=1, executors=1, executor_cores=1, epochs=1, learning_rate=0.01, batch_size=64,
                model="birnn"),
        RunSpec(run=2, replicate=1, nodes=2, executors=2, executor_cores=2, epochs=3, learning_rate=0.001,
                batch_size=256, model="birnn"),
    ]
    assert specs[1].total_cores == 8 and specs[1].cores_per_node == 4 and specs[1].key == "2-1"
    assert specs[1].epochs == 3 and specs[1].get("absent") is None


def test_as_row_and_from_row_are_inverse(tmp_path):
    specs = read_design(write(tmp_path, f"run,replicate,model,{HEADER}\n7,3,lenet,1,2,1,1,9.011,64\n"))
    row = specs[0].as_row()
    assert row == {"run": 7, "replicate": 3, "nodes": 1, "executors": 2, "executor_cores": 1, "model": "lenet",
                   "epochs": 1, "learning_rate": 9.011, "batch_size": 64}
    assert RunSpec.from_row(row) == specs[0] and hash(RunSpec.from_row(row)) == hash(specs[0])
    with pytest.raises(AttributeError):
        specs[0].max_iter  # noqa: B018


def test_integers_are_exact_never_through_float(tmp_path):
    # 2**53 + 1 would become ...992 through a float; as a generic column it stays exact (within 2**53 it is refused)
    spec = read_design(write(tmp_path, "nodes,executors,executor_cores,n\n1,1,1,9007199254740991\n"),
                       JobChoice(_job_using(tmp_path, "n")))[0]
    assert spec.n == 9007199254740991 and isinstance(spec.n, int)
    assert read_design(write(tmp_path, f"{HEADER}\n1.0,1,1,1,0.01,64\n"))[0].nodes == 1  # a whole number


def _job_using(tmp_path: Path, *columns: str, results: str = "json", extra: str = ""):
    from harness.job import load_job

    (tmp_path / "app.py").write_text("print('hi')\n")
    args = ", ".join(f'"--{c}", "{{{c}}}"' for c in columns)
    (tmp_path / "job.toml").write_text(f'[job]\nname = "t"\napp = "app.py"\nargs = [{args}]\nresults = "{results}"\n'
                                       + extra)
    return load_job(tmp_path / "job.toml")


@pytest.mark.parametrize("row, needle", [
    ("0,1,1,1,0.01,64", "nodes='0' is out of range"),
    ("x,1,1,1,0.01,64", "nodes='x' is not a number"),
    ("1.5,1,1,1,0.01,64", "nodes='1.5' is not a whole number"),
    ("1,1,1,1,-0.01,64", "learning_rate='-0.01' is out of range"),
    ("1,1,1,1,nan,64", "learning_rate='nan' is not a number"),
    ("1,1,1,1,inf,64", "learning_rate='inf' is not a number"),
    ("1,1,1,1,,64", "learning_rate is empty"),
    ("2,2,2,1,0.01,65", "batch_size=65 is not a multiple of nodes x executors x executor_cores = 8"),
    ("1,1,1,1,0.01,64,9", "7 values for 6 columns"),
    ("1,1,1,1,0.01", "give a value for batch_size"),
    ('"1\n6",1,1,1,0.01,64', "nodes='1\\n6' holds a line break"),
    ("１,1,1,1,0.01,64", "nodes='１' is not a number"),            # fullwidth digit
    ("١,1,1,1,0.01,64", "nodes='١' is not a number"),             # Arabic-Indic digit
    ("1,1,1,1_000,0.01,64", "epochs='1_000' is not a number"),
    ("1,1,1,1e308,0.01,64", "epochs='1e308' is out of range"),
    ("1,1,1,1,5e-324,64", "learning_rate='5e-324' is too small"),
    ("1,1,1,1,0.01,9007199254740993", "batch_size='9007199254740993' is out of range"),
    ("20000,1,1,1,0.01,64", "nodes='20000' is out of range: write a whole number from 1 to 10000"),
    ("1,1,1,1001,0.01,64", "epochs='1001' is out of range"),
])
def test_each_bad_row_is_named_with_field_and_fix(tmp_path, row, needle):
    found = problems(tmp_path, f"{HEADER}\n1,1,1,1,0.01,64\n{row}\n")
    assert len(found) == 1, found
    assert found[0].startswith("row 2: ")
    assert needle in found[0]


def test_all_problems_reported_at_once(tmp_path):
    found = problems(tmp_path, f"{HEADER}\n0,1,1,1,0.01,64\n1,1,1,0,0.01,64\n1,1,1,1,0.01,3\n")
    assert [p.split(":")[0] for p in found] == ["row 1", "row 2"]  # 3 is a multiple of 1 core


def test_header_problems(tmp_path):
    assert "missing column(s) executor_cores" in problems(
        tmp_path, "nodes,executors,cores,epochs,learning_rate,batch_size\n1,1,1,1,0.1,64\n")[0]
    assert "appear more than once" in problems(tmp_path, f"{HEADER},nodes\n1,1,1,1,0.1,64,2\n")[0]
    assert "column 7 of the header has no name" in problems(tmp_path, f"{HEADER},\n1,1,1,1,0.1,64,\n")[0]
    found = problems(tmp_path, f"{HEADER},cores\n1,1,1,1,0.1,64,2\n")
    assert found == ["design column cores is not used by the job birnn (birnn.toml): add {cores} to its args, "
                     "or remove the column"]


def test_duplicate_cells_and_unknown_model(tmp_path):
    found = problems(tmp_path, f"run,model,{HEADER}\n1,birnn,1,1,1,1,0.1,64\n1,birnn,1,1,1,1,0.1,64\n"
                               f"2,resnet,1,1,1,1,0.1,64\n")
    assert "repeats row 1" in found[0] and "no built-in job 'resnet'" in found[1]


def test_model_column_picks_the_builtin_job(tmp_path):
    specs = read_design(write(tmp_path, f"model,{HEADER}\nlenet,1,1,1,1,0.1,64\n,1,1,1,1,0.1,64\n"))
    assert [s.model for s in specs] == ["lenet", "birnn"]
    assert [JobChoice().for_spec(s).name for s in specs] == ["lenet", "birnn"]


def test_files_that_are_not_designs(tmp_path):
    with pytest.raises(DesignFileError, match="no rows"):
        read_design(write(tmp_path, HEADER + "\n"))
    with pytest.raises(DesignFileError, match="cannot read"):
        read_design(tmp_path / "absent.csv")
    with pytest.raises(DesignFileError, match="empty"):
        read_design(write(tmp_path, ""))
    with pytest.raises(DesignFileError, match="not UTF-8"):
        read_design(_bytes(tmp_path, b"nodes\xff\n"))


def _bytes(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "bin.csv"
    p.write_bytes(data)
    return p


def test_non_regular_files_are_refused_without_reading(tmp_path):
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)  # opening it would block forever
    with pytest.raises(DesignFileError, match="not a regular file"):
        read_design(fifo)
    with pytest.raises(DesignFileError, match="not a regular file"):
        read_design(Path("/dev/zero"))
    with pytest.raises(DesignFileError, match="not a regular file"):
        read_design(tmp_path)


def test_size_limits(tmp_path):
    long = "1" * (MAX_FIELD_CHARS + 1)
    with pytest.raises(DesignFileError, match=f"a field of {MAX_FIELD_CHARS + 1} characters"):
        read_table(write(tmp_path, f"{HEADER}\n{long},1,1,1,0.1,64\n"))
    huge = '"' + "x" * 200_000 + '"'  # beyond csv's own field limit (131,072)
    with pytest.raises(DesignFileError, match="longer than 131072 characters"):
        read_table(write(tmp_path, f"{HEADER}\n{huge},1,1,1,0.1,64\n"))
    with pytest.raises(DesignFileError, match="more than the 100 allowed"):
        from harness.designfile import read_bytes
        read_bytes(write(tmp_path, "x" * 101), limit=100)


def test_quoted_newline_is_data_not_a_line_break(tmp_path):
    table = read_table(write(tmp_path, f'{HEADER}\n"1\n6",1,1,1,0.1,64\n'))
    assert table.rows[0][1][0] == "1\n6"


def test_batch_check_can_be_lifted(tmp_path):
    specs = read_design(write(tmp_path, f"{HEADER}\n2,2,2,1,0.01,65\n"), check_batch=False)
    assert batch_problem(specs[0]) is not None


def test_generic_job_columns_follow_its_rules(tmp_path):
    job = _job_using(tmp_path, "max_iter", "solver", "step",
                     extra='[params.max_iter]\ntype = "int"\nmin = 1\nmax = 100\n'
                           '[params.solver]\nchoices = ["gd", "l-bfgs"]\n')
    path = write(tmp_path, "nodes,executors,executor_cores,max_iter,solver,step,spark.sql.shuffle.partitions\n"
                           "1,1,1,10,gd,0.5,8\n1,1,1,101,sgd,-x,4\n")
    checked = check_design(path, JobChoice(job))
    assert checked.specs[0].as_row() == {"run": 1, "replicate": 1, "nodes": 1, "executors": 1, "executor_cores": 1,
                                         "max_iter": 10, "solver": "gd", "step": 0.5,
                                         "spark.sql.shuffle.partitions": 8}
    assert checked.problems == [
        "row 2: max_iter='101' is out of range: write a whole number from 1 to 100",
        "row 2: solver='sgd' is unknown: use one of gd, l-bfgs",
        "row 2: step='-x' starts with '-' and would be read as an option: remove the dash"]


@pytest.mark.parametrize("text, rule, value", [
    ("12", ParamRule(), 12), ("-3", ParamRule(), -3), ("0.5", ParamRule(), 0.5), ("1e-3", ParamRule(), 0.001),
    ("2.0", ParamRule("int"), 2), ("1e3", ParamRule("int"), 1000), ("gd", ParamRule(), "gd"),
    ("+7", ParamRule("int"), 7), (".5", ParamRule("float"), 0.5),
])
def test_values(text, rule, value):
    got, problem = parse_value("x", text, rule)
    assert problem is None and got == value and type(got) is type(value)


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


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 10_000), st.integers(1, 100), st.integers(1, 1000),
       st.decimals(min_value=Decimal("1e-9"), max_value=Decimal("1e4"), allow_nan=False, places=12))
def test_accepted_values_equal_the_written_ones(tmp_path_factory, nodes, executors, epochs, lr):
    path = tmp_path_factory.mktemp("v") / "design.csv"
    path.write_text(f"{HEADER}\n{nodes},{executors},1,{epochs},{lr},{nodes * executors}\n")
    if Decimal(repr(float(str(lr)))) != lr:  # more digits than a double holds: refused, never rounded in silence
        with pytest.raises(DesignFileError, match="more digits than a number holds"):
            read_design(path)
        return
    spec = read_design(path)[0]
    assert (spec.nodes, spec.executors, spec.epochs, spec.batch_size) == (nodes, executors, epochs, nodes * executors)
    assert spec.learning_rate == float(str(lr))


def test_courier_njobs_column_points_to_the_concurrent_runner(tmp_path):
    assert any("sparkdl concurrent" in p for p in problems(tmp_path, f"{HEADER},njobs\n1,1,1,1,0.01,64,2\n"))


def test_builtin_jobs_document_their_ranges():
    for name in ("birnn", "lenet"):
        rules = builtin(name).params
        assert rules["epochs"].maximum == 1000 and rules["batch_size"].maximum == 1048576
        assert rules["learning_rate"].minimum == 1e-9


def test_a_spec_copies_pickles_and_replaces_like_a_dataclass():
    import copy
    import dataclasses
    import pickle

    s = RunSpec(1, 1, 1, 1, 1, params=(("a", 1), ("b", "x")))
    assert copy.copy(s) == s == copy.deepcopy(s) == pickle.loads(pickle.dumps(s))
    moved = dataclasses.replace(s, nodes=2)
    assert moved.nodes == 2 and moved.a == 1 and moved.params == s.params
    assert not hasattr(s, "c") and s.get("b") == "x"
    assert RunSpec(1, 1, 1, 1, 1, params=(("b", "x"), ("a", 1))) == s  # column order does not make another run
