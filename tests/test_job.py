"""Job descriptions: parsing, template filling, and every mistake caught before anything runs (one line, exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.job import JobFileError, builtin, column_problems, load_job, resolve_job, template_fields
from sparkdl.runspec import RunSpec

ROOT = Path(__file__).resolve().parents[1]


def job_file(tmp_path: Path, body: str, app: str | None = "app.py") -> Path:
    if app:
        (tmp_path / app).write_text("import sys\n")
    path = tmp_path / "job.toml"
    path.write_text(body)
    return path


def test_template_fields_and_literal_braces():
    assert template_fields("--lr={learning_rate}") == ["learning_rate"]
    assert template_fields("{{not}}-{a}{b}") == ["a", "b"]


def test_fill_drops_optional_groups_without_values(tmp_path):
    job = load_job(job_file(tmp_path, '[job]\nname = "x"\napp = "app.py"\n'
                                      'args = ["{a}", ["--opt", "{data_dir}"], ["--both", "{a}", "{b}"]]\n'))
    assert job.fill({"a": 1, "b": None, "data_dir": None}) == ["1"]
    assert job.fill({"a": 0.1, "b": "y", "data_dir": "/d"}) == ["0.1", "--opt", "/d", "--both", "0.1", "y"]
    assert job.fields() == ("a", "data_dir", "b")


@pytest.mark.parametrize("body, needle", [
    ('[job\nname = "x"', "not valid TOML"),
    ('[job]\nname = "x"\napp = "missing.py"\nargs = []\n', "no such file"),
    ('[job]\nname = "x"\nargs = []\n', "exactly one of app"),
    ('[job]\nname = "x y"\napp = "app.py"\n', "name must be a word"),
    ('[job]\nname = "x"\napp = "app.py"\nresults = "csv"\n', "results = 'csv'"),
    ('[job]\nname = "x"\napp = "app.py"\nargs = "--a"\n', "args must be an array"),
    ('[job]\nname = "x"\napp = "app.py"\nargs = ["{a!r}"]\n', "write a field as {column_name}"),
    ('[job]\nname = "x"\napp = "app.py"\nargs = ["{a"]\n', "literal brace"),
    ('[job]\nname = "x"\napp = "app.py"\nargz = []\n', "unknown key(s) argz"),
    ('[job]\nname = "x"\napp = "app.py"\n[spark]\n"spark.executor.cores" = "2"\n', "set by executor_cores"),
    ('[job]\nname = "x"\napp = "app.py"\n[params.a]\ntype = "decimal"\n', "use int, float or str"),
    ('[job]\nname = "x"\napp = "app.py"\n[sparks]\n', "unknown table(s) sparks"),
    ('[job]\nname = "x"\njar = "app.py"\nmain_class = "A"\n', "must be a .jar file"),
])
def test_bad_job_files_are_one_line(tmp_path, body, needle):
    with pytest.raises(JobFileError) as e:
        load_job(job_file(tmp_path, body))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_builtin_names_and_paths():
    assert resolve_job("birnn") is builtin("birnn")
    assert resolve_job(str(ROOT / "jobs" / "lenet.toml")).name == "lenet"
    with pytest.raises(JobFileError, match="no built-in job 'resnet': use one of birnn, lenet, mlp"):
        resolve_job("resnet")


def test_design_columns_against_the_template(tmp_path):
    job = load_job(job_file(tmp_path, '[job]\nname = "x"\napp = "app.py"\nargs = ["{a}", "{b}", "{seed}"]\n'))
    assert column_problems(job, ["nodes", "executors", "executor_cores", "a", "b", "spark.x.y"]) == []
    assert column_problems(job, ["nodes", "executors", "executor_cores", "a", "c"]) == [
        "the job x (job.toml) uses {b} but the design has no column b: add the column, or remove the field "
        "from the job's args",
        "design column c is not used by the job x (job.toml): add {c} to its args, or remove the column"]


def test_a_required_harness_option_must_be_given(tmp_path):
    job = load_job(job_file(tmp_path, '[job]\nname = "x"\napp = "app.py"\nargs = ["--data", "{data_dir}"]\n'))
    assert "was not given --data-dir" in column_problems(job, ["nodes", "executors", "executor_cores"])[0]
    assert column_problems(job, ["nodes", "executors", "executor_cores"], ["data_dir"]) == []


def submit(tmp_path: Path, design: str, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "design.csv").write_text(design)
    return subprocess.run([sys.executable, "-m", "harness.submit", str(tmp_path / "design.csv"), "--dry-run",
                           "--out", str(tmp_path / "out"), *extra], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


@pytest.mark.parametrize("design, job, needle", [
    ("nodes,executors,executor_cores,a\n1,1,1,3\n", '["{a}", "{b}"]', "uses {b} but the design has no column b"),
    ("nodes,executors,executor_cores,a,c\n1,1,1,3,4\n", '["{a}"]', "design column c is not used by the job"),
    ("nodes,executors,executor_cores,a\n1,1,1,3\n", None, "no such file"),
    ("nodes,executors,executor_cores,a\n1,1,1,3\n", "[", "not valid TOML"),
])
def test_cli_checks_before_anything_runs(tmp_path, design, job, needle):
    if job is None:
        path = job_file(tmp_path, '[job]\nname = "x"\napp = "gone.py"\nargs = ["{a}"]\n', app=None)
    else:
        path = job_file(tmp_path, f'[job]\nname = "x"\napp = "app.py"\nargs = {job}\n')
    proc = submit(tmp_path, design, "--job", str(path))
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr and proc.stdout == ""
    assert not (tmp_path / "out").exists()


def test_cli_dry_run_shows_every_filled_argv(tmp_path):
    path = job_file(tmp_path, '[job]\nname = "x"\napp = "app.py"\nresults = "json"\nargs = ["--a", "{a}"]\n')
    proc = submit(tmp_path, "nodes,executors,executor_cores,a,spark.sql.shuffle.partitions\n1,1,1,3,2\n2,1,1,0.5,2\n",
                  "--job", str(path))
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("#")]
    assert len(lines) == 2
    assert lines[0].endswith(f"app.py --a 3 --metrics-out {tmp_path}/out/runs/1-1/metrics.json")
    assert lines[1].endswith(f"app.py --a 0.5 --metrics-out {tmp_path}/out/runs/2-1/metrics.json")
    assert "--conf spark.sql.shuffle.partitions=2" in lines[0]


def test_model_column_and_job_must_agree(tmp_path):
    proc = submit(tmp_path, "model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"
                            "lenet,1,1,1,1,0.1,64\n", "--job", "birnn")
    assert proc.returncode == 2 and "model='lenet' but the job is birnn" in proc.stderr


def test_runspec_refuses_parameter_names_that_clash():
    with pytest.raises(ValueError, match="clash"):
        RunSpec(1, 1, 1, 1, 1, params=(("nodes", 2),))
