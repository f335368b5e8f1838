"""Bad logs: no traceback, no impossible figure reported as ok, one bad file never sinks a folder."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse import Status, cli, parse
from logparse import source as source_mod
from logparse.records import FailureKind
from sparkdl.cli import run_cli
from tests.test_logparse import FIXTURES, fixture_text, write_log

OK_TEXT = fixture_text("lenet-lr2.5-3ep")
LAST_VAL = "Top1Accuracy is Accuracy(correct: 23, count: 128, accuracy: 0.1796875)"
LAST_WALL = "[Wall Clock 8.653981682s] Top1Accuracy"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = run_cli(cli.main, list(argv))
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("edit, reason", [
    ("correct: 23, count: 128, accuracy: Infinity", "impossible Top1Accuracy accuracy inf (outside [0, 1])"),
    ("correct: 23, count: 128, accuracy: inf", "Top1Accuracy has no readable accuracy"),
    ("correct: 877, count: 1000", "Top1Accuracy has no readable accuracy"),
    ("correct: 23, count: 128, accuracy: 2.0", "impossible Top1Accuracy accuracy 2.0 (outside [0, 1])"),
    ("correct: 23, count: 128, accuracy: -0.5", "impossible Top1Accuracy accuracy -0.5 (outside [0, 1])"),
    ("correct: 129, count: 128, accuracy: 1.0", "impossible Top1Accuracy: correct 129 of count 128"),
    ("correct: 23, count: 128, accuracy: 0.5", "impossible Top1Accuracy: accuracy 0.5 is not correct/count = 23/128"),
    ("correct: 23, count: 128, accuracy: NaN", "impossible Top1Accuracy accuracy nan (outside [0, 1])"),
])
def test_impossible_accuracy_fails_with_that_reason(tmp_path, edit, reason):
    text = OK_TEXT.replace(LAST_VAL, f"Top1Accuracy is Accuracy({edit})")
    assert text != OK_TEXT
    log = parse(write_log(tmp_path, "x", text))
    assert (log.status, log.failure_kind) == (Status.FAILED, FailureKind.JOB)
    assert log.reason.startswith(reason), log.reason
    assert repr(parse(tmp_path / "x.out", full=True).summary()) == repr(log.summary())  # repr: NaN == NaN


@pytest.mark.parametrize("wall", ["-8.65", "NaN", "Infinity", "-Infinity", "2.0E7", "10000000.5"])
def test_impossible_wall_clock_fails(tmp_path, wall):
    text = OK_TEXT.replace(LAST_WALL, f"[Wall Clock {wall}s] Top1Accuracy")
    log = parse(write_log(tmp_path, "w", text))
    assert log.status == Status.FAILED and log.reason.startswith("impossible wall clock"), log.reason


FIRST_THROUGHPUT = "Throughput is 42.1387 records/second"
LAST_THROUGHPUT = "Throughput is 151.47607 records/second"


@pytest.mark.parametrize("old, new, reason", [
    (FIRST_THROUGHPUT, "Throughput is -42.1387 records/second",
     "impossible throughput -42.1387 records/second in the first iteration (epoch 1)"),
    (LAST_THROUGHPUT, "Throughput is NaN records/second", "impossible throughput nan records/second in the last"),
    ("Current learning rate is 2.5.", "Current learning rate is NaN.", "impossible learning rate nan in the first"),
    ("8.653981682s]", "12000000.0s]", "impossible wall clock 12000000.0 s"),
    ("Wall clock time is 9004.518097 ms", "Wall clock time is -1.0 ms", "impossible epoch 3 wall clock"),
])
def test_impossible_training_figures_fail_the_log_in_every_mode(tmp_path, old, new, reason):
    """Figures BigDL's arithmetic cannot print fail the log, whichever way it is read."""
    text = OK_TEXT.replace(old, new)
    assert text != OK_TEXT
    p = write_log(tmp_path, "x", text)
    log = parse(p)
    assert (log.status, log.failure_kind) == (Status.FAILED, FailureKind.JOB) and log.reason.startswith(reason), \
        log.reason
    assert repr(parse(p, full=True).summary()) == repr(log.summary())
    for mode in ([], ["--per-epoch"], ["--full"], ["--losses"], ["--format", "json"]):
        code, out, err = run(*mode, str(p))
        assert code == 3 and err == "", (mode, err)


def test_an_impossible_figure_in_a_log_that_stopped_early_fails_it(tmp_path):
    import re

    text = fixture_text("lenet-killed")
    assert parse(write_log(tmp_path, "k0", text)).status == Status.INCOMPLETE
    edited = re.sub(r"Throughput is ([0-9.]+) records", r"Throughput is -\1 records", text, count=1)
    log = parse(write_log(tmp_path, "k", edited))
    assert (log.status, log.failure_kind) == (Status.FAILED, FailureKind.JOB)
    assert log.reason.startswith("impossible throughput -") and "in the first iteration (epoch 1)" in log.reason


def test_a_folder_without_a_log_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "notes.txt").write_text("no logs here\n")
    code, out, err = run(str(tmp_path))
    assert (code, out) == (2, "") and err.count("\n") == 1 and err.startswith(f"error: no log in {tmp_path}")
    code, out, err = run(str(tmp_path / "missing"))
    assert (code, out) == (2, "") and err == f"error: {tmp_path / 'missing'}: no such file or directory\n"


def test_big_plain_file_without_training_lines_does_not_crash_and_keeps_the_folder(tmp_path):
    """Any .out/.err over 8 MiB without a training line crashed (mmap closed) and sank the folder."""
    junk = b"2026-11-23 15:00:00 INFO  BlockManager:57 - Removing RDD 27\n" * (9 * (1 << 20) // 60)
    (tmp_path / "big.out").write_bytes(junk)
    (tmp_path / "big.err").write_bytes(junk)
    (tmp_path / "good.out").write_bytes(OK_TEXT.encode())
    log = parse(tmp_path / "big.out")
    assert log.status == Status.INCOMPLETE and log.reason.startswith("no BigDL training line")
    code, out, err = run("--format", "json", str(tmp_path))
    assert code == 3 and '"status": "ok"' in out and "Traceback" not in err


def test_gzip_bomb_is_refused_with_a_row_and_the_other_logs_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(source_mod, "MAX_GUNZIP", 20 << 20)
    with gzip.open(tmp_path / "bomb.out.gz", "wb") as g:
        for _ in range(64):
            g.write(b"\0" * (1 << 20))  # 64 MiB of zeros, ~64 KB compressed
    assert (tmp_path / "bomb.out.gz").stat().st_size < 200_000
    (tmp_path / "good.out").write_bytes(OK_TEXT.encode())
    code, out, err = run("--format", "json", str(tmp_path))
    assert code == 2
    assert err.count("error: ") == 1 and "expands beyond 20,971,520 bytes" in err
    import json
    rows = {r["path"].rsplit("/", 1)[1]: r for r in json.loads(out)}
    assert rows["bomb.out.gz"]["status"] == "failed" and "expands beyond" in rows["bomb.out.gz"]["reason"]
    assert rows["good.out"]["status"] == "ok"


def test_gzip_is_streamed_within_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(source_mod, "GUNZIP_CHUNK", 4096)  # many small steps: the result must be the same
    raw = OK_TEXT.encode()
    (tmp_path / "a.out.gz").write_bytes(gzip.compress(raw[:5000]) + b"\0\0" + gzip.compress(raw[5000:]))
    (tmp_path / "b.out").write_bytes(raw)
    assert parse(tmp_path / "a.out.gz").summary() | {"path": ""} == parse(tmp_path / "b.out").summary() | {"path": ""}


def test_fifo_missing_and_directory_paths_are_rows_or_lines_not_tracebacks(tmp_path):
    os.mkfifo(tmp_path / "pipe.out")
    (tmp_path / "good.out").write_bytes(OK_TEXT.encode())
    code, out, err = run(str(tmp_path), str(tmp_path / "missing.out"))
    assert code == 2 and "Traceback" not in err
    assert "pipe.out: not a regular file" in err and "missing.out: no such file or directory" in err
    assert out.count("\n") == 3  # header, the FIFO's error row, the good log


def test_undecodable_and_binary_bytes_in_a_real_log(tmp_path):
    text = OK_TEXT.encode()
    at = text.index(b"[Epoch 2 64/256]")
    data = text[:at] + b"\xff\xfe\x00\x80garbage\xc3(\n" + text[at:]
    log = parse(write_log(tmp_path, "u", data))
    assert log.status == Status.OK and log.accuracy == 0.1796875


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4000), gz=st.booleans(), err=st.one_of(st.none(), st.binary(max_size=500)))
def test_no_input_makes_the_cli_print_a_traceback(tmp_path, data, gz, err):
    name = "x.out.gz" if gz else "x.out"
    (tmp_path / name).write_bytes(data)
    if err is not None:
        (tmp_path / "x.err").write_bytes(err)
    code, out, errtext = run("--format", "json", str(tmp_path / name))
    assert code in (0, 2, 3) and "Traceback" not in errtext and out.startswith("[")


def test_cli_subprocess_on_the_fixture_folder_exits_3_with_one_row_per_log():
    r = subprocess.run([sys.executable, "-m", "logparse", str(FIXTURES)], capture_output=True, text=True,
                       env=os.environ | {"PYTHONPATH": str(FIXTURES.parents[2])})
    assert r.returncode == 3 and r.stderr == ""
    assert r.stdout.count("\n") == 1 + len(list(FIXTURES.glob("*.out.gz")))


def test_every_marker_needle_holds_a_lowercase_key():
    """status.markers() finds candidate lines by MARKER_KEYS only: a needle without a key would never be seen."""
    from logparse import patterns as P

    for mk in P.MARKERS:
        for n in mk.needles:
            assert any(k in n.lower() for k in P.MARKER_KEYS), (mk.name, n)
            assert any(mk in P.MARKERS_BY_KEY[k] for k in P.MARKER_KEYS if k in n.lower())
