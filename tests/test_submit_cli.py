"""harness.submit's command line on bad input: one clear error, exit 2, nothing submitted or created."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.backends import LocalBackend, available_memory_mb
from harness.runspec import RunSpec
from harness.submit import main as submit_main
from sparkdl import cli


def main(argv):
    return cli.run_cli(submit_main, argv)


HEADER = "nodes,executors,executor_cores,epochs,learning_rate,batch_size"
GOOD = "1,1,1,1,0.05,64"


def run_cli(tmp_path: Path, text: str, *extra: str) -> tuple[int, Path]:
    design = tmp_path / "design.csv"
    design.write_text(text)
    out = tmp_path / "campaign"
    return main([str(design), "--out", str(out), *extra]), out


def test_bad_rows_exit_2_and_create_nothing(tmp_path, capsys):
    code, out = run_cli(tmp_path, f"{HEADER}\n{GOOD}\n2,2,2,1,0.05,65\n1,1,1,1,zero,64\n")
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.startswith("error: ") and "2 problem(s); nothing was submitted" in err
    assert "row 2: batch_size=65" in err and "row 3: learning_rate='zero'" in err


def test_dry_run_prints_the_plan_and_every_argv(tmp_path, capsys):
    code, out = run_cli(tmp_path, f"{HEADER}\n{GOOD}\n2,1,2,1,0.05,64\n", "--dry-run")
    text = capsys.readouterr().out
    assert code == 0 and not out.exists()
    assert "# local cluster: workers of 2 cores" in text and "# scale the local cluster to 2 worker(s)" in text
    assert text.count("spark-submit --master") == 2 and "--total-executor-cores 4" in text


def test_skip_invalid_keeps_the_good_rows(tmp_path, capsys):
    code, out = run_cli(tmp_path, f"{HEADER}\n{GOOD}\n2,2,2,1,0.05,65\n", "--skip-invalid", "--dry-run")
    captured = capsys.readouterr()
    assert code == 0 and "skipped row 2: batch_size=65" in captured.err
    assert captured.out.count("spark-submit --master") == 1


def test_impossible_memory_is_refused_before_any_job():
    class Dummy:  # LocalBackend.check needs no cluster
        pass

    backend = LocalBackend(Dummy(), executor_memory_mb=10**9)  # type: ignore[arg-type]
    spec = RunSpec(run=1, replicate=1, nodes=4, executors=4, executor_cores=1, epochs=1, learning_rate=0.1,
                   batch_size=64)
    (problem,) = backend.check(spec)
    assert f"this machine has {available_memory_mb()} MB available" in problem
    assert LocalBackend(Dummy(), executor_memory_mb=1).check(spec) == []  # type: ignore[arg-type]


cell = st.one_of(st.just(""), st.text(alphabet="0123456789.-+eE xn,\"", max_size=6), st.integers(-3, 300).map(str))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(cell, min_size=5, max_size=7), min_size=1, max_size=4))
def test_malformed_designs_never_submit(tmp_path_factory, rows):
    tmp = tmp_path_factory.mktemp("cli")
    body = "\n".join(",".join(r) for r in rows)
    code, out = run_cli(tmp, f"{HEADER}\n{body}\n", "--dry-run")
    if code == 2:
        assert not out.exists()
    else:  # every row happened to be valid: the dry run still submits nothing
        assert code == 0 and not out.exists()
