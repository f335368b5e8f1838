"""logparse never crashes and never reports wrong figures: arbitrary bytes, damaged .gz, logs cut anywhere."""

from __future__ import annotations

import gzip
import random
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse import LogNotFoundError, LogReadError, parse
from logparse import scan as scan_mod
from logparse.records import FAILURE_KINDS, STATUSES
from tests.test_logparse import FIXTURES, fixture_text

HSETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@contextmanager
def windows(size: int):
    """Shrink the head/tail windows so that small inputs exercise the growth paths."""
    saved = scan_mod.TAIL0, scan_mod.HEAD0
    scan_mod.TAIL0 = scan_mod.HEAD0 = size
    try:
        yield
    finally:
        scan_mod.TAIL0, scan_mod.HEAD0 = saved


def check(path: Path, **kw):
    """Both scans agree and the result is well formed; returns the final-only JobLog."""
    fast, full = parse(path, **kw), parse(path, full=True, **kw)
    assert repr(fast.summary()) == repr(full.summary())  # repr: NaN figures compare equal
    assert fast.status in STATUSES
    # ok and pruned (stopped on purpose) are nobody's fault; only ok has no reason
    assert (fast.failure_kind is None) == (fast.status in ("ok", "pruned")) and (fast.reason == "") == (fast.status == "ok")
    assert fast.failure_kind is None or fast.failure_kind in FAILURE_KINDS
    return fast


@HSETTINGS
@given(data=st.binary(max_size=3000), window=st.sampled_from([16, 300, 65536]))
def test_arbitrary_bytes(tmp_path, data, window):
    (tmp_path / "x.out").write_bytes(data)
    (tmp_path / "y.out.gz").write_bytes(data)
    with windows(window):
        check(tmp_path / "x.out")
        check(tmp_path / "y.out.gz")


def _pool() -> list[bytes]:
    lines = fixture_text("lenet-lr2.5-3ep").encode().split(b"\n")
    keep = [l for l in lines if b"[Epoch " in l or b"Shutdown hook" in l or b"Submitted application" in l]
    keep += fixture_text("birnn-batch65").encode().split(b"\n")[350:400]
    keep += [b"Traceback (most recent call last):", b"  File \"x\", line 1", b"ValueError: bad", b"error: nope",
             b"2026-11-23 15:00:00 ERROR X:1 - Lost executor 2 on h: worker lost", "\u00e9\u4e2d".encode("utf-8"),
             b"\xff\xfe\x00", b"RECEIVED SIGNAL TERM", b"Killed"]
    return keep


POOL = _pool()


@HSETTINGS
@given(
    picks=st.lists(st.one_of(st.sampled_from(POOL), st.binary(max_size=60)), max_size=60),
    crlf=st.booleans(), cut=st.integers(min_value=0, max_value=400), window=st.sampled_from([64, 2048, 65536]),
    expected=st.sampled_from([None, 1, 3]),
)
def test_real_lines_shuffled_cut_and_mixed_with_garbage(tmp_path, picks, crlf, cut, window, expected):
    data = (b"\r\n" if crlf else b"\n").join(picks)
    data = data[:max(0, len(data) - cut)]
    (tmp_path / "x.out").write_bytes(data)
    with windows(window):
        log = check(tmp_path / "x.out", expected_epochs=expected)
    if log.status == "ok" and log.epochs_validated is not None:  # validated: the last epoch's own validation
        assert log.accuracy is not None and log.wall_clock_s is not None and log.epochs_validated == log.epochs_completed
    elif log.status == "ok":  # never validated (no validation line anywhere): ok from the epoch end alone
        assert b"Accuracy(" not in data and log.epochs_completed >= 1


def _truth(text: str):
    full = parse_text_full(text)
    return {(v.epoch, v.accuracy, v.wall_clock_s) for v in full.validations}, full


def parse_text_full(text: str):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.out"
        p.write_text(text)
        return parse(p, full=True)


@pytest.mark.parametrize("window", range(44700, 45100, 13))
def test_head_window_ending_inside_the_first_iteration_line(tmp_path, window):
    """A head read that stops mid-line must not take a cut first iteration (its learning rate would be lost)."""
    p = tmp_path / "h.out"
    p.write_text(fixture_text("lenet-4000-2ep"))
    with windows(window):
        log = check(p)
    assert (log.learning_rate, log.batch_size) == (0.1, 64)


@pytest.mark.parametrize("name", ["lenet-lr2.5-3ep", "birnn-small-1ep", "lenet-killed", "birnn-batch65"])
def test_real_logs_cut_at_random_points(tmp_path, name):
    text = fixture_text(name)
    raw = text.encode()
    truth, whole = _truth(text)
    final_val = raw.rfind(b"Top1Accuracy is Accuracy(")
    final_val_end = raw.find(b")", final_val) + 1 if final_val >= 0 else len(raw) + 1
    shutdown_end = raw.find(b"\n", raw.find(b"Shutdown hook called")) + 1
    rng = random.Random(20261123)
    cuts = sorted({0, 1, final_val_end - 1, final_val_end, final_val_end + 1, shutdown_end - 1, shutdown_end,
                   *rng.sample(range(len(raw)), 60)})
    for k in cuts:
        p = tmp_path / "cut.out"
        p.write_bytes(raw[:k])
        log = check(p)
        if log.status == "ok":
            # Only a cut after the final validation of the last planned epoch may be ok, with the whole log's figures.
            assert whole.status == "ok" and k >= final_val_end, k
            assert (log.accuracy, log.wall_clock_s, log.epochs_completed) == (
                whole.accuracy, whole.wall_clock_s, whole.epochs_completed)
        elif k < len(raw):
            assert log.status in ("incomplete", "failed")
        if log.accuracy is not None:  # never a wrong figure, only an earlier one
            assert (log.epochs_validated, log.accuracy, log.wall_clock_s) in truth
        assert log.learning_rate in (None, whole.learning_rate) and log.batch_size in (None, whole.batch_size)
        assert log.epochs_completed <= whole.epochs_completed
        if whole.status == "ok" and shutdown_end <= k:
            assert log.status == "ok"


def test_truncated_gzip_of_a_real_log(tmp_path):
    blob = (FIXTURES / "lenet-lr2.5-3ep.out.gz").read_bytes()
    for n in (0, 10, len(blob) // 3, len(blob) - 9):
        p = tmp_path / "t.out.gz"
        p.write_bytes(blob[:n])
        log = check(p)
        if n < len(blob) // 2:
            assert (log.status, log.failure_kind) == ("incomplete", "infrastructure")
        else:  # only the gzip trailer is lost: every line through Spark's shutdown decompressed
            assert log.status == "ok" and "gzip stream truncated" in log.notes
    (tmp_path / "z.out.gz").write_bytes(b"")
    assert "empty .gz file" in check(tmp_path / "z.out.gz").reason
    (tmp_path / "e.out.gz").write_bytes(gzip.compress(b""))
    assert check(tmp_path / "e.out.gz").reason == "empty log"
    (tmp_path / "n.out.gz").write_bytes(b"not gzip at all\n")
    assert "corrupt gzip" in check(tmp_path / "n.out.gz").reason


def test_multi_member_gzip_is_read_whole(tmp_path):
    raw = fixture_text("lenet-lr2.5-3ep").encode()
    half = len(raw) // 2
    (tmp_path / "m.out.gz").write_bytes(gzip.compress(raw[:half]) + gzip.compress(raw[half:]))
    (tmp_path / "m.out").write_bytes(raw)
    assert parse(tmp_path / "m.out.gz").summary() | {"path": ""} == parse(tmp_path / "m.out").summary() | {"path": ""}


def test_empty_file(tmp_path):
    (tmp_path / "e.out").write_bytes(b"")
    log = check(tmp_path / "e.out")
    assert (log.status, log.reason, log.failure_kind) == ("incomplete", "empty log", "infrastructure")


def test_missing_paths_raise(tmp_path):
    with pytest.raises(LogNotFoundError, match="no such file"):
        parse(tmp_path / "missing.out")
    with pytest.raises(LogReadError, match="a directory"):
        parse(tmp_path)


def test_absurd_numbers_do_not_crash(tmp_path):
    big = "9" * 5000
    text = (f"2026-11-23 15:00:00 INFO  SparkContext:57 - Submitted application: x epochs={big}\n"
            f"[Epoch {big} 1/2][Iteration 1][Wall Clock 1.0s] Trained 64.0 records in 1 seconds. Throughput is 1 "
            f"records/second. Loss is 1.0.\n"
            f"[Epoch 1 1/2][Iteration 1][Wall Clock {big}.5s] Trained Infinity records in 1 seconds. Throughput is "
            f"NaN records/second. Loss is -Infinity. M's hyper parameters: Current learning rate is 1E400.\n"
            f"[Epoch 1 1/2][Iteration 1][Wall Clock 1.0s] Top1Accuracy is Accuracy(correct: {big}, count: 1, accuracy: NaN)\n")
    p = tmp_path / "big.out"
    p.write_text(text)
    log = check(p)
    assert log.planned_epochs is None and log.batch_size is None and log.learning_rate == float("inf")


def test_big_log_without_an_answer_in_its_tail_is_scanned_whole(tmp_path):
    """Killed in epoch 2 after ~10 MB of iteration lines: the tail grows to the whole (mapped) file."""
    text = fixture_text("lenet-killed")
    last_iter = text.rindex("\n", 0, text.rindex("] Trained ")) + 1
    line = text[last_iter:text.index("\n", last_iter) + 1]
    p = tmp_path / "big.out"
    p.write_text(text + line * (10_000_000 // len(line)))
    log = check(p)
    assert (log.status, log.epochs_completed, log.epochs_validated) == ("incomplete", 1, 1)
    assert log.accuracy == parse(FIXTURES / "lenet-killed.out.gz").accuracy
