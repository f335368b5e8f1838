"""One CLI shape: errors carry their exit code, signals stop cleanly, bugs are one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from cluster.errors import PortInUse
from harness.errors import DesignFileError
from models.errors import CostError
from sparkdl import cli
from sparkdl.errors import EXIT_CLUSTER, EXIT_INPUT, ToolError


def test_errors_map_to_their_exit_codes_with_one_line(capsys):
    def raises(exc):
        def main(argv):
            raise exc
        return main

    assert cli.run_cli(raises(CostError("bad cost 'T/'")), []) == EXIT_INPUT
    assert capsys.readouterr().err == "error: bad cost 'T/'\n"
    assert cli.run_cli(raises(PortInUse("port 7077 is taken")), []) == EXIT_CLUSTER
    assert cli.run_cli(raises(DesignFileError("d.csv", ["row 1: x"])), []) == EXIT_INPUT
    assert cli.run_cli(raises(ZeroDivisionError("boom")), []) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("internal error: ZeroDivisionError: boom (a bug; the traceback is in ")
    path = err.rsplit(" ", 1)[-1].rstrip(")")
    assert "Traceback" in open(path).read()
    os.unlink(path)


def test_a_jobs_bug_prints_its_traceback_on_stderr_and_leaves_no_file(capsys, tmp_path, monkeypatch):
    """A job's stderr is its run's .err (kept by the harness); a file would stay on the driver's host."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR

    def main(argv):
        raise ZeroDivisionError("boom")

    assert cli.run_cli(main, [], traceback_to_stderr=True) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "Traceback (most recent call last):" and 'raise ZeroDivisionError("boom")' in "\n".join(err)
    assert err[-1] == "internal error: ZeroDivisionError: boom (a bug; its traceback is above)"
    assert list(tmp_path.iterdir()) == []


def test_every_package_error_is_a_tool_error():
    from cluster.errors import ClusterError
    from harness.errors import HarnessError
    from jobs.errors import JobError
    from logparse.errors import LogParseError
    from models.errors import ModelError
    from optimize.errors import OptimizeError

    for base in (ClusterError, HarnessError, JobError, LogParseError, ModelError, OptimizeError):
        assert issubclass(base, ToolError), base


def test_cluster_options_have_one_set_of_defaults():
    import argparse

    from sparkdl.options import cluster_options

    a = argparse.ArgumentParser(parents=[cluster_options()]).parse_args([])
    assert (a.executor_memory, a.driver_memory, a.timeout, a.retries, a.port, a.webui_port) == \
        ("700m", "2g", 3600.0, 1, 7077, 8080)


CHILD = textwrap.dedent("""
    import sys, time
    from sparkdl.cli import on_interrupt, run_cli

    def main(argv):
        on_interrupt("finished runs are kept; continue with --resume")
        try:
            print("ready", flush=True)
            time.sleep(60)
        finally:
            print("cleaned up", flush=True)
        return 0

    sys.exit(run_cli(main))
""")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_signals_run_the_clean_up_and_exit_128_plus_signal(sig, code):
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    start = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == code
    assert out.strip() == "cleaned up"
    assert err.strip() == f"interrupted by {signal.Signals(sig).name}: finished runs are kept; continue with --resume"
    assert "Traceback" not in err and time.monotonic() - start < 10
