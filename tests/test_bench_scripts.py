"""Every bench script still starts: its imports resolve and its options parse (`--help`), without running it.

Benches are not tests (they take minutes and print figures), but one whose imports rotted would only
be found by the next person who needs its figures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
#: empty_app.py is the application the floors submit and workdir.py a helper the benches import: not commands
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name not in ("__init__.py", "empty_app.py", "workdir.py"))


def test_the_bench_folder_has_its_scripts():
    assert {"campaign.py", "jit.py", "kill_matrix.py", "overhead.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_bench_script_starts(script):
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True,
                          timeout=120, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: ")
