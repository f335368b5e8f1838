"""One command shape: the ``sparkdl`` console script, ``--job`` naming a job, and old spellings refused with the fix.

The console script is tested by its main function in-process and through ``python -m sparkdl`` (the same
function setup.cfg's entry point names), not by installing the package.
"""

from __future__ import annotations

import configparser
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from sparkdl.__main__ import main
from sparkdl.cli import run_cli
from sparkdl.commands import COMMANDS
from sparkdl.errors import EXIT_INPUT

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "fixtures" / "logs" / "birnn-batch65.out.gz"


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_the_entry_point_in_setup_cfg_is_the_dispatcher() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    (line,) = [v for v in cfg["options.entry_points"]["console_scripts"].splitlines() if v.strip()]
    name, _, target = (part.strip() for part in line.partition("="))
    module, _, function = target.partition(":")
    assert name == "sparkdl" and getattr(importlib.import_module(module), function).__module__ == "sparkdl.__main__"
    assert "report*" in cfg["options.packages.find"]["include"]  # the report's package is installed too


def test_sparkdl_help_lists_every_command_once_with_one_line() -> None:
    done = _run("-m", "sparkdl", "--help")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for c in COMMANDS:
        (mine,) = [ln for ln in lines if ln.split()[:1] == [c.name]]
        assert c.summary in mine and f"python -m {c.module.removesuffix('.__main__')}" in mine
    assert {c.name for c in COMMANDS} >= {"submit", "report", "anova", "search", "ingest", "runtime"}


def test_a_command_runs_the_same_main_as_its_python_m_form() -> None:
    via_sparkdl = _run("-m", "sparkdl", "logparse", str(LOG), "--format", "json")
    direct = _run("-m", "logparse", str(LOG), "--format", "json")
    assert (via_sparkdl.returncode, via_sparkdl.stdout) == (direct.returncode, direct.stdout)
    assert '"status": "failed"' in direct.stdout  # the batch-65 log: BigDL's Usage Error


def test_a_commands_help_is_its_modules_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["report", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: sparkdl report") and "--out" in out and "--output" not in out


#: Library modules whose command line moved to a module of its own; ``python -m`` of the library module still runs it.
MOVED = {"optimize.pareto": "optimize.cli.pareto", "optimize.lr": "optimize.cli.lr",
         "optimize.epochs": "optimize.cli.epochs", "optimize.batch": "optimize.cli.batch",
         "optimize.concurrent": "optimize.cli.concurrent", "harness.ingest": "harness.cli.ingest",
         "harness.history": "harness.cli.history", "harness.runtime": "harness.cli.runtime",
         "harness.doctor": "harness.cli.doctor", "cluster.local": "cluster.cli"}


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_python_m_of_a_library_module_runs_its_commands_main(old: str, new: str, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import runpy
    import warnings

    monkeypatch.setattr(sys, "argv", [old, "--help"])
    with warnings.catch_warnings(), pytest.raises(SystemExit) as done:
        warnings.simplefilter("ignore", RuntimeWarning)  # the library module is imported already (by other tests)
        runpy.run_module(old, run_name="__main__")
    assert done.value.code == 0
    forwarded = capsys.readouterr().out
    with pytest.raises(SystemExit):
        importlib.import_module(new).main(["--help"])
    assert forwarded == capsys.readouterr().out and forwarded.startswith("usage: sparkdl ")
    assert new in {c.module for c in COMMANDS}


def test_an_unknown_command_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sumbit"]) == EXIT_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no command 'sumbit'" in err[0] and "submit" in err[0]
    assert main([]) == EXIT_INPUT  # no command: the list, and a non-zero exit


def test_the_search_takes_a_job_name_and_fixed_factors() -> None:
    from harness.job import JobFileError
    from optimize.search.__main__ import parse_job
    from optimize.errors import SearchOptionError

    job = parse_job("lenet", "epochs=2,batch_size=64")
    assert (job.model, job.epochs, job.batch_size, job.learning_rate) == ("lenet", 2, 64, 0.002)
    assert parse_job("torch-lenet").model == "torch-lenet"
    with pytest.raises(SearchOptionError, match="write --job lenet and drop model="):
        parse_job("birnn", "model=lenet")
    with pytest.raises(JobFileError, match="no such job file"):  # any job runs now: a description is read
        parse_job("my-job.toml")
    with pytest.raises(SearchOptionError, match="not a job factor"):
        parse_job("lenet", "epochz=2")


def test_the_old_search_job_form_is_refused_with_the_exact_new_command(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from optimize.search.__main__ import main as search

    out = tmp_path / "search"
    argv = ["--job", "model=lenet,epochs=2,batch_size=64", "--space", "space.toml", "--budget", "30m", "--out", str(out)]
    assert run_cli(search, argv) == EXIT_INPUT
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith(f"run sparkdl search --job lenet --fixed epochs=2,batch_size=64 --space space.toml "
                         f"--budget 30m --out {out}")
    assert not out.exists()  # refused before anything
    assert run_cli(search, ["--job=epochs=1", "--space", "s.toml"]) == EXIT_INPUT  # no model: the default job
    assert capsys.readouterr().err.strip().endswith("run sparkdl search --job birnn --fixed epochs=1 "
                                                    "--space s.toml")


@pytest.mark.parametrize("module, old, new", [
    ("optimize.cli.lr", ["--model", "lenet"], "--model lenet is now --job lenet"),
    ("optimize.cli.concurrent", ["--model", "birnn"], "--model birnn is now --job birnn"),
    ("models.predict.cli", ["x.csv", "--target", "cost"], "--target cost is now --response cost"),
    ("report.cli", ["x.csv", "--output", "r.html"], "--output r.html is now --out r.html"),
])
def test_a_renamed_option_is_one_line_with_the_fix(module: str, old: list[str], new: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(importlib.import_module(module).main, old) == EXIT_INPUT
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert new in line and "Traceback" not in line
