"""bench/workdir.py: a bench's temporary work folder goes when the bench ends, however it ends; the user's stays."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench.workdir import work_folder

ROOT = Path(__file__).resolve().parent.parent

BENCH = """
import sys, time
sys.path[:1] = [{root!r}]
from sparkdl.cli import run_cli
from bench.workdir import work_folder

def main(argv):
    with work_folder("bench-test-") as work:
        (work / "campaign.csv").write_text("x")
        print(work, flush=True)
        time.sleep(60)
    return 0

sys.exit(run_cli(main))
"""


def test_a_temporary_folder_goes_at_the_end_and_after_an_error_and_a_kept_one_stays(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    with work_folder("bench-test-") as work:
        (work / "a").write_text("x")
        assert work.parent == tmp_path and work.name.startswith("bench-test-")
    assert not work.exists()
    with pytest.raises(RuntimeError), work_folder("bench-test-") as work:
        raise RuntimeError("a bench's bug")
    assert not work.exists()
    kept = tmp_path / "mine" / "work"
    with work_folder("bench-test-", kept) as work:
        (work / "a").write_text("x")
    assert work == kept and (kept / "a").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_bench_stopped_by_a_signal_leaves_no_folder(tmp_path, signum):
    script = tmp_path / "bench.py"
    script.write_text(BENCH.format(root=str(ROOT)))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(scratch)})
    work = Path(proc.stdout.readline().strip())
    assert work.parent == scratch and (work / "campaign.csv").is_file()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum and f"interrupted by {signal.Signals(signum).name}" in err
    assert list(scratch.iterdir()) == []
