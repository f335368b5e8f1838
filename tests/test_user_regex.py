"""Every regex a user writes runs under a time bound (sparkdl.userregex): a pattern that backtracks without
end on one path is refused with that path named, exit 2, nothing written. The commands run in a child
process with a deadline: with Python's ``re`` they ran for hours (the child is then killed and the test fails)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sparkdl import userregex

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "fixtures" / "logs" / "lenet-4000-2ep.out.gz"
EVIL = r"(?P<x>(a|aa)+)b"   # the regex module too backtracks without end on 50 a's
NESTED = r"(?P<x>(a+)+)b"   # re: 2^200 steps on 200 a's; the regex module answers it in ~0.1 s


def command(module: str, *argv: str, deadline: float = 120) -> tuple[int, str, str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True, env=env,
                          timeout=deadline, cwd=ROOT)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


@pytest.fixture()
def long_path(tmp_path: Path) -> Path:
    folder = tmp_path / ("a" * 200)
    folder.mkdir()
    shutil.copy(LOG, folder / "x.out.gz")
    return folder / "x.out.gz"


def test_a_backtracking_fields_regex_is_refused_with_the_path(long_path: Path, tmp_path: Path):
    out = tmp_path / "campaign"
    code, _, err, took = command("harness.ingest", str(long_path.parent), "--fields", EVIL, "--out", str(out))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "--fields" in lines[0] and str(long_path) in lines[0] and "took over 1 s" in lines[0]
    assert took < 90 and not out.exists()


def test_a_nested_repeat_over_a_long_path_is_answered_not_run_forever(long_path: Path, tmp_path: Path):
    out = tmp_path / "campaign"
    code, _, err, took = command("harness.ingest", str(long_path.parent), "--fields", NESTED, "--out", str(out))
    assert code == 2 and f"error: {long_path}: its path does not match --fields" in err and took < 90, err
    assert not out.exists()


def test_a_backtracking_point_pattern_is_refused_with_the_path(long_path: Path):
    code, _, err, took = command("logparse", "--min-replications", "1", "--point-pattern", EVIL, str(long_path.parent))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "--point-pattern" in lines[0] and str(long_path) in lines[0] and took < 90


def test_patterns_keep_their_meaning_under_the_bound():
    # the same matches as Python's re, backreferences and lookarounds included (RE2 would refuse these two)
    import re

    for pattern, subject in [(r"exp(?P<rep>\d+)_(?P<lr>[^_/]+)/", "/s/exp12_0.01/x.out"),
                             (r"(?P<a>\w)(?P=a)", "xyzzy"), (r"(?<=run)(?P<n>\d+)(?!\d)", "a/run42/b")]:
        mine = userregex.compile(pattern, "--fields", ValueError, "x").search(subject)
        theirs = re.search(pattern, subject)
        assert mine is not None and theirs is not None and mine.groupdict() == theirs.groupdict()
    assert userregex.compile(r"(?P<x>q)", "--fields", ValueError, "x").search("aaa") is None


def test_the_bound_and_the_refusals_name_the_option():
    rx = userregex.compile(EVIL, "--fields", ValueError, "x", timeout_s=0.2)
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"--fields .* took over 0.2 s on the path '/aaaa"):
        rx.search("/" + "a" * 5000)
    assert time.monotonic() - start < 5
    for text, words in [("", "is empty"), ("(", "is not a regular expression"), ("a" * 5000, "characters long")]:
        with pytest.raises(ValueError, match=words):
            userregex.compile(text, "--point-pattern", ValueError, "'(point\\d+)'")
