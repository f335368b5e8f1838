"""logparse.eventlog: real Spark 4.3 event logs (zstd and lz4, single and rolling) and hand-made input.

The real logs in tests/fixtures/eventlogs (README.md: how they were made) are checked byte for byte
against what Spark's own reader decompressed from them. Hand-made input covers what a real log
cannot show: corrupt and truncated streams, a block declaring a huge size, decompression bombs.
No Spark here (fast); a real cluster's log against Spark's REST API: test_sparkmetrics.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import struct
import time
import tracemalloc
from pathlib import Path

import lz4.block
import pytest
import zstandard

from logparse.errors import LogNotFoundError, LogParseError, LogTooLargeError
from logparse.eventlog import (CHUNK, LZ4_MAX_BLOCK, AppMetrics, CompressedLogError, EventLogError,
                               EventLogTooLargeError, codec_of, find_event_log, iter_lines, parse_events,
                               read_event_log, read_lines, scheduler_delay_ms, write_stage_table)

FIXTURES = Path(__file__).parent / "fixtures" / "eventlogs"
SPARK_DECODED = json.loads((FIXTURES / "spark_decoded.json").read_text())


def fixture(pattern: str, folder: Path = FIXTURES) -> Path:
    """The one fixture matching ``pattern`` (the names hold the app ids Spark chose)."""
    [path] = folder.glob(pattern)
    return path


ZSTD_LOG, LZ4_LOG = fixture("local-*.zstd"), fixture("local-*.lz4")
ZSTD_ROLLING = fixture("eventlog_v2_*/events_1_*.zstd").parent
LZ4_ROLLING = fixture("eventlog_v2_*/events_1_*.lz4").parent
REAL_LOGS = [ZSTD_LOG, LZ4_LOG, ZSTD_ROLLING, LZ4_ROLLING]


def lz4_stream(*blocks: tuple[int, bytes, int], level: int = 5) -> bytes:
    """lz4-java LZ4Block framing around (method, payload, original length) blocks, then the end mark.

    ``level``: log2(block size) - 10, as lz4-java writes it into the token (5: Spark's 32k blocks).
    """
    out = b""
    for method, payload, size in (*blocks, (0x10, b"", 0)):
        out += b"LZ4Block" + struct.pack("<Biii", method | level, len(payload), size, 0) + payload
    return out


def lz4_compressed(data: bytes) -> tuple[int, bytes, int]:
    """One LZ4-compressed block of ``data``, as lz4-java writes it (a bare LZ4 block, no size prefix)."""
    return 0x20, lz4.block.compress(data, store_size=False), len(data)


def zstd_file(path: Path, zeros: int) -> Path:
    """A zstd file of ``zeros`` zero bytes, written a MiB at a time (the test never holds them all)."""
    c = zstandard.ZstdCompressor(level=1).compressobj()
    with open(path, "wb") as f:
        for _ in range(zeros // 2**20):
            f.write(c.compress(bytes(2**20)))
        f.write(c.flush())
    return path


def too_large_and_peak(path: Path, max_bytes: int) -> tuple[EventLogTooLargeError, int]:
    """Read ``path`` under the cap, expecting the cap's error: the error and the peak memory Python allocated
    meanwhile (the bytes the decompressors return included; zstd's own window, malloc'ed, is not)."""
    tracemalloc.start()
    try:
        with pytest.raises(EventLogTooLargeError) as e:
            read_event_log(path, max_bytes=max_bytes)
        return e.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def facts(app: AppMetrics) -> dict[str, object]:
    """What one run of the fixture application must give whatever the codec (not ids, names or times)."""
    stages = {k: (s.name.split(" at ")[0], s.num_tasks, s.totals.tasks, s.totals.shuffle_write_bytes, s.failure)
              for k, s in app.stages.items()}
    t = app.totals
    return {"complete": app.complete, "jobs": app.jobs, "jobs_failed": app.jobs_failed, "stages": stages,
            "executors": [(e.executor_id, e.cores) for e in app.executors],
            "tasks": (t.tasks, t.failed_tasks, t.killed_tasks),
            "shuffle": (t.shuffle_write_bytes, t.shuffle_read_bytes),
            "result_bytes": t.result_size_bytes > 0,
            "times": app.end_ms is not None and app.start_ms < app.first_task_launch_ms < app.end_ms}


# ---------------------------------------------------------------- real Spark 4.3 logs


@pytest.mark.parametrize("log", REAL_LOGS, ids=lambda p: p.name.split("-")[0] + p.suffix)
def test_real_logs_decode_to_the_bytes_sparks_own_reader_gives(log):
    files = sorted(log.glob("events_*")) if log.is_dir() else [log]
    for file in files:
        expected = SPARK_DECODED[file.relative_to(FIXTURES).as_posix()]
        lines = read_lines(file)
        data = "".join(line + "\n" for line in lines).encode()
        assert (hashlib.sha256(data).hexdigest(), len(data), len(lines)) == (
            expected["sha256"], expected["bytes"], expected["lines"])


def test_zstd_and_lz4_logs_give_the_same_application_facts():
    apps = {log: read_event_log(log) for log in REAL_LOGS}
    for log, app in apps.items():
        assert app.app_id == log.name.removeprefix("eventlog_v2_").split(".")[0]  # the id Spark named it after
        assert app.app_name.startswith("eventlog-fixture-")
    reference = facts(apps[ZSTD_LOG])
    assert reference["complete"] and reference["jobs"] == 2 and len(reference["stages"]) == 3
    assert reference["tasks"] == (6, 0, 0) and reference["shuffle"][0] == reference["shuffle"][1] > 0
    for log in REAL_LOGS[1:]:
        assert facts(apps[log]) == reference, log.name


def test_find_event_log_picks_rolling_folders_and_prefers_finished_logs(tmp_path):
    running = fixture("eventlog_v2_*", FIXTURES / "running")
    shutil.copytree(running, tmp_path / running.name)
    assert find_event_log(tmp_path) == tmp_path / running.name  # only one, still running
    app = read_event_log(find_event_log(tmp_path))
    assert not app.complete and app.jobs == 2 and app.totals.tasks == 6  # every job's events were flushed
    shutil.copyfile(ZSTD_LOG, tmp_path / ZSTD_LOG.name)
    os.utime(tmp_path / ZSTD_LOG.name, (1, 1))  # older than the running folder, but finished
    assert find_event_log(tmp_path) == tmp_path / ZSTD_LOG.name
    done = shutil.copytree(ZSTD_ROLLING, tmp_path / "done" / ZSTD_ROLLING.name)
    running_file = fixture("local-*.zstd.inprogress", FIXTURES / "running")
    shutil.copyfile(running_file, tmp_path / "done" / running_file.name)
    os.utime(done, (1, 1))
    assert find_event_log(tmp_path / "done") == done


def test_real_inprogress_zstd_log_reads_what_spark_flushed():
    app = read_event_log(fixture("local-*.zstd.inprogress", FIXTURES / "running"))
    assert not app.complete and app.end_ms is None
    assert {k: v for k, v in facts(app).items() if k not in ("complete", "times")} == {
        k: v for k, v in facts(read_event_log(ZSTD_LOG)).items() if k not in ("complete", "times")}


def test_truncated_real_logs_raise_unless_in_progress(tmp_path):
    for log in (ZSTD_LOG, LZ4_LOG):
        data = log.read_bytes()
        cut = tmp_path / log.name
        cut.write_bytes(data[: len(data) - 100])
        with pytest.raises(CompressedLogError, match="truncated"):
            read_event_log(cut)
        running = tmp_path / (log.name + ".inprogress")
        running.write_bytes(data[: len(data) - 100])
        app = read_event_log(running)  # the events of every complete block
        assert app.app_id == log.name.split(".")[0] and app.jobs == 2 and not app.complete
    with pytest.raises(CompressedLogError, match="no zstd frame"):
        read_lines(tmp_path / "x.zstd" if (tmp_path / "x.zstd").write_bytes(b"{}\n" * 10) else None)


def test_rolling_log_of_several_files_shares_one_cap(tmp_path):
    lines = read_lines(ZSTD_LOG)
    folder = tmp_path / "eventlog_v2_local-7"
    folder.mkdir()
    cctx = zstandard.ZstdCompressor()
    for n, part in ((1, lines[:10]), (2, lines[10:20]), (10, lines[20:])):  # events_10 comes after events_2
        (folder / f"events_{n}_local-7.zstd").write_bytes(cctx.compress("".join(x + "\n" for x in part).encode()))
    (folder / "appstatus_local-7").touch()
    (folder / ".appstatus_local-7.crc").write_bytes(b"crc")
    assert read_lines(folder) == lines
    size = sum(len(x) + 1 for x in lines)
    assert len(read_lines(folder, max_bytes=size)) == len(lines)
    with pytest.raises(EventLogTooLargeError):
        read_lines(folder, max_bytes=size - 1)
    # a cut last file is an error in a finished log, the end of the data in a running one
    last = folder / "events_10_local-7.zstd"
    last.write_bytes(last.read_bytes()[:-50])
    with pytest.raises(CompressedLogError, match="truncated"):
        read_lines(folder)
    (folder / "appstatus_local-7").rename(folder / "appstatus_local-7.inprogress")
    assert read_lines(folder)[:20] == lines[:20]
    with pytest.raises(LogNotFoundError, match="events_"):
        read_lines(tmp_path if (tmp_path / "eventlog_v2_empty").mkdir() is None else None)


def test_codec_from_the_name():
    names = {"app-1.lz4": "lz4", "local-1.zstd.inprogress": "zstd", "events_2_local-1.zst": "zstd",
             "events_3_app-1-0001.zstd.compact": "zstd", "local-1": None, "application_1_2": None, "x.json": None}
    assert {name: codec_of(Path(name)) for name in names} == names


def test_unreadable_codecs_name_the_codec_and_the_setting(tmp_path):
    for suffix in ("snappy", "lzf"):
        log = tmp_path / f"local-1.{suffix}"
        log.write_bytes(b"\xff" * 10)
        with pytest.raises(EventLogError, match=f"'{suffix}'.*spark.eventLog.compression.codec=zstd"):
            read_event_log(log)
    with pytest.raises(LogNotFoundError, match="no such event log"):
        read_event_log(tmp_path / "local-2.zstd")


# ---------------------------------------------------------------- the caps


def test_lz4_block_declaring_a_huge_size_is_refused_before_decompression(tmp_path):
    log = tmp_path / "local-1.lz4"
    for level, size, match in ((15, 2**31 - 1, "declares 2147483647 bytes"), (5, 32 * 1024 + 1, "block size of 32768"),
                               (15, -5, "declares -5")):
        log.write_bytes(b"LZ4Block" + struct.pack("<Biii", 0x20 | level, 10, size, 0) + bytes(10))
        started = time.monotonic()
        with pytest.raises(CompressedLogError, match=match):
            read_event_log(log)
        assert time.monotonic() - started < 1
    # a size the block may have, over what is left of the cap: refused before the (bogus) block is touched
    log.write_bytes(b"LZ4Block" + struct.pack("<Biii", 0x2F, 10, LZ4_MAX_BLOCK, 0) + bytes(10))
    with pytest.raises(EventLogTooLargeError, match="max_bytes"):
        read_event_log(log, max_bytes=2**20)
    with pytest.raises(CompressedLogError, match="corrupt"):  # under a large cap it is decompressed, and fails
        read_event_log(log)


def test_lz4_bomb_stops_at_the_cap_with_bounded_memory(tmp_path):
    block = lz4_compressed(bytes(32 * 1024))
    log = tmp_path / "local-1.lz4"
    log.write_bytes(lz4_stream(*[block] * 6400))  # 200 MiB of zeros in 2 MB
    started = time.monotonic()
    error, peak = too_large_and_peak(log, max_bytes=4 * 2**20)
    assert time.monotonic() - started < 5 and peak < 4 * 2**20 + 4 * CHUNK
    message = str(error)
    assert "\n" not in message and "more than 4194304 bytes" in message and "max_bytes" in message
    assert isinstance(error, LogTooLargeError) and isinstance(error, LogParseError)


def test_zstd_bomb_stops_at_the_cap_with_bounded_memory(tmp_path):
    log = zstd_file(tmp_path / "local-1.zstd", 200 * 2**20)
    assert log.stat().st_size < 100_000
    started = time.monotonic()
    error, peak = too_large_and_peak(log, max_bytes=8 * 2**20)
    assert time.monotonic() - started < 5 and peak < 8 * 2**20 + 4 * CHUNK
    assert "more than 8388608 bytes" in str(error)
    # at the cap exactly it is read (one line of zeros)
    small = zstd_file(tmp_path / "local-2.zstd", 2**20)
    assert [len(x) for x in iter_lines(small, max_bytes=2**20)] == [2**20]


def test_plain_log_over_the_cap(tmp_path):
    log = tmp_path / "local-1"
    log.write_bytes(b'{"Event": "SparkListenerLogStart"}\n' * 1000)
    assert len(read_lines(log)) == 1000
    with pytest.raises(EventLogTooLargeError):
        read_lines(log, max_bytes=1000)


def test_corrupt_logs_only_ever_raise_event_log_errors(tmp_path):
    """Seeded mutations of the real logs: every outcome is events or an EventLogError, never another exception."""
    rng = random.Random(7)
    for log in (ZSTD_LOG, LZ4_LOG):
        original = log.read_bytes()
        for i in range(150):
            data = bytearray(original)
            for _ in range(rng.randint(1, 4)):
                at = rng.randrange(len(data))
                if rng.random() < 0.7:
                    data[at] = rng.randrange(256)
                else:
                    del data[at: at + rng.randint(1, 300)]
            for name in (log.name, log.name + ".inprogress"):
                path = tmp_path / name
                path.write_bytes(bytes(data))
                try:
                    read_event_log(path, max_bytes=2**20)
                except EventLogError:
                    pass


def test_json_that_is_no_spark_event_is_a_corrupt_log():
    good = json.dumps({"Event": "SparkListenerApplicationStart", "App ID": "app-1", "Timestamp": 5})
    for bad in ('[1, 2]', '{"Event": "SparkListenerTaskEnd", "Stage ID": "x"}',
                '{"Event": "SparkListenerJobEnd", "Job Result": 5}',
                '{"Event": "SparkListenerJobStart", "Submission Time": 1e999}'):
        with pytest.raises(EventLogError, match=r"^log-1: line 2 is not an event Spark writes .*: the log is corrupt$"):
            parse_events([good, bad], "log-1")


# ---------------------------------------------------------------- lz4 streams made here


def test_lz4_stream_raw_and_compressed_blocks_and_errors(tmp_path):
    text = b"abcd" * 20_000 + b"xyz\n"
    log = tmp_path / "local-1.lz4"
    data = lz4_stream(lz4_compressed(text[:32768]), (0x10, text[32768:65536], 32768), lz4_compressed(text[65536:]))
    log.write_bytes(data + lz4_stream((0x10, b"{}\n", 3)))  # a second stream follows the first
    assert read_lines(log) == [text[:-1].decode(), "{}"]
    log.write_bytes(data[:-30])
    with pytest.raises(CompressedLogError, match="truncated"):
        read_lines(log)
    running = tmp_path / "local-1.lz4.inprogress"
    running.write_bytes(data[:-30])
    assert read_lines(running) == [(text[:65536]).decode()]  # the blocks that are complete
    log.write_bytes(b"not an lz4 file at all")
    with pytest.raises(CompressedLogError, match="magic"):
        read_lines(log)
    method, payload, _ = lz4_compressed(text[:1000])
    log.write_bytes(lz4_stream((method, payload, 1001)))
    with pytest.raises(CompressedLogError, match="header says 1001"):
        read_lines(log)
    bad_offset = bytes([0x10]) + b"a" + bytes([0x00, 0x10]) + bytes([0x50]) + b"bbbbb"  # a match 4096 bytes back
    log.write_bytes(lz4_stream((0x20, bad_offset, 10)))
    with pytest.raises(CompressedLogError, match="corrupt"):
        read_lines(log)
    log.write_bytes(lz4_stream((0x30, b"x", 1)))
    with pytest.raises(CompressedLogError, match="unknown method 0x30"):
        read_lines(log)


def test_lines_split_at_newlines_only(tmp_path):
    log = tmp_path / "local-1.lz4"
    events = [{"Event": "SparkListenerApplicationStart", "App ID": "app-1", "App Name": "a\u2028b\x85c"},
              {"Event": "SparkListenerApplicationEnd", "Timestamp": 5}]
    text = "".join(json.dumps(e, ensure_ascii=False) + "\r\n" for e in events).encode()
    log.write_bytes(lz4_stream(*(lz4_compressed(text[i:i + 7]) for i in range(0, len(text), 7))))  # lines across blocks
    app = read_event_log(log)
    assert (app.app_id, app.app_name, app.complete) == ("app-1", "a\u2028b\x85c", True)


# ---------------------------------------------------------------- events made here


def task_end(stage, task_id, launch, finish, run, cpu_ns, gc, deser, ser, fetch=0, reason="Success", **extra):
    return {"Event": "SparkListenerTaskEnd", "Stage ID": stage, "Stage Attempt ID": 0,
            "Task End Reason": {"Reason": reason},
            "Task Info": {"Task ID": task_id, "Launch Time": launch, "Finish Time": finish,
                          "Getting Result Time": fetch, "Failed": reason not in ("Success", "TaskKilled"),
                          "Killed": reason == "TaskKilled"},
            "Task Metrics": {"Executor Run Time": run, "Executor CPU Time": cpu_ns, "JVM GC Time": gc,
                             "Executor Deserialize Time": deser, "Result Serialization Time": ser,
                             "Peak Execution Memory": extra.get("peak", 0),
                             "Shuffle Read Metrics": {"Remote Bytes Read": extra.get("remote", 0),
                                                      "Local Bytes Read": extra.get("local", 0)},
                             "Shuffle Write Metrics": {"Shuffle Bytes Written": extra.get("written", 0)},
                             "Input Metrics": {"Bytes Read": extra.get("input", 0)}}}


EVENTS = [
    {"Event": "SparkListenerApplicationStart", "App Name": "x", "App ID": "app-1", "Timestamp": 1000},
    {"Event": "SparkListenerExecutorAdded", "Timestamp": 2500, "Executor ID": "0",
     "Executor Info": {"Host": "127.0.0.1", "Total Cores": 2}},
    {"Event": "SparkListenerExecutorAdded", "Timestamp": 2700, "Executor ID": "1",
     "Executor Info": {"Host": "127.0.0.1", "Total Cores": 2}},
    {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 3000},
    {"Event": "SparkListenerStageSubmitted", "Stage Info": {"Stage ID": 0, "Stage Attempt ID": 0,
                                                            "Stage Name": "map", "Number of Tasks": 3}},
    {"Event": "SparkListenerTaskStart", "Stage ID": 0, "Task Info": {"Launch Time": 3010}},
    task_end(0, 0, 3010, 3200, run=150, cpu_ns=100_000_000, gc=10, deser=20, ser=1, written=500, peak=64),
    task_end(0, 1, 3020, 3100, run=40, cpu_ns=30_000_000, gc=0, deser=5, ser=0, reason="ExceptionFailure"),
    task_end(0, 2, 3100, 3400, run=200, cpu_ns=150_000_000, gc=30, deser=2, ser=3, fetch=3390, input=1000,
             peak=128),
    {"Event": "SparkListenerStageCompleted", "Stage Info": {"Stage ID": 0, "Stage Attempt ID": 0, "Stage Name": "map",
                                                            "Number of Tasks": 3, "Submission Time": 3005,
                                                            "Completion Time": 3400}},
    task_end(1, 3, 3500, 3600, run=80, cpu_ns=50_000_000, gc=5, deser=1, ser=1, remote=300, local=200,
             reason="TaskKilled"),
    {"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 3700, "Job Result": {"Result": "JobSucceeded"}},
    {"Event": "SparkListenerApplicationEnd", "Timestamp": 4000},
]


def test_sums_counts_and_times_from_events():
    app = parse_events([json.dumps(e) for e in EVENTS] + ['{"Event": "SparkListenerTaskEnd", "Sta'])
    t = app.totals
    assert (app.app_id, app.start_ms, app.end_ms, app.complete) == ("app-1", 1000, 4000, True)
    assert app.executors_granted_ms == 2700 and len(app.executors) == 2
    assert (app.first_task_launch_ms, app.last_task_finish_ms) == (3010, 3600)
    assert (app.jobs, app.jobs_failed, len(app.stages)) == (1, 0, 2)
    assert (t.tasks, t.failed_tasks, t.killed_tasks) == (4, 1, 1)
    assert t.executor_run_ms == 150 + 40 + 200 + 80 and t.executor_cpu_ns == 330_000_000
    assert t.jvm_gc_ms == 45 and t.deserialize_ms == 28 and t.result_serialization_ms == 5
    assert (t.shuffle_read_bytes, t.shuffle_write_bytes, t.input_bytes) == (500, 500, 1000)
    assert t.peak_execution_memory_bytes == 192 and t.max_task_peak_memory_bytes == 128
    # scheduler delay, Spark's formula by hand: duration - run - deser - ser - getting result
    expected = (190 - 150 - 20 - 1) + (80 - 40 - 5) + (300 - 200 - 2 - 3 - 10) + (100 - 80 - 1 - 1)
    assert t.scheduler_delay_ms == expected
    s0 = app.stages[(0, 0)]
    assert (s0.name, s0.num_tasks, s0.duration_ms, s0.totals.tasks) == ("map", 3, 395, 3)
    cols = app.columns()
    assert cols["spark_app_s"] == 3.0 and cols["spark_tasks"] == 4
    assert cols["spark_gc_share"] == round(45 / 470, 4) and cols["spark_cpu_share"] == round(0.33 / 0.47, 4)


def test_scheduler_delay_never_negative():
    assert scheduler_delay_ms({"Launch Time": 10, "Finish Time": 20}, {"Executor Run Time": 50}) == 0


def test_files_plain_lz4_inprogress_and_stage_table(tmp_path):
    lines = "\n".join(json.dumps(e) for e in EVENTS).encode()
    (tmp_path / "app-1.lz4").write_bytes(lz4_stream((0x10, lines, len(lines))))
    (tmp_path / "app-0.lz4.inprogress").write_bytes(lz4_stream((0x10, lines[:100], 100))[:-21])
    (tmp_path / "app-2").write_bytes(lines)
    os.utime(tmp_path / "app-2", (1, 1))
    assert find_event_log(tmp_path).name == "app-1.lz4"  # a finished log wins, the latest of them
    app = read_event_log(find_event_log(tmp_path))
    assert app.totals.tasks == 4 and read_event_log(tmp_path / "app-2").totals.tasks == 4
    assert read_event_log(tmp_path / "app-0.lz4.inprogress").app_id == "app-1"
    table = write_stage_table(app, tmp_path / "spark_stages.csv").read_text().splitlines()
    assert table[0].startswith("stage_id,attempt,name") and len(table) == 3
    with pytest.raises(LogNotFoundError, match="no Spark event log"):
        find_event_log(tmp_path / "logs" if (tmp_path / "logs").mkdir() is None else tmp_path)
