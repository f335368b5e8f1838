"""logparse.eventlog and logparse.lz4block on hand-made input (fast; real Spark logs: test_sparkmetrics.py)."""

from __future__ import annotations

import json
import struct

import pytest

from logparse.eventlog import find_event_log, parse_events, read_event_log, scheduler_delay_ms, write_stage_table
from logparse.errors import LogNotFoundError
from logparse.lz4block import CompressedLogError, decompress, decompress_block


def lz4_stream(*blocks: tuple[int, bytes, int]) -> bytes:
    """lz4-java LZ4Block framing around (method, payload, original length) blocks, then the end mark."""
    out = b""
    for method, payload, size in (*blocks, (0x10, b"", 0)):
        out += b"LZ4Block" + struct.pack("<Biii", method, len(payload), size, 0) + payload
    return out


def test_lz4_block_literals_matches_and_overlap():
    # "abcd" literal + match (offset 4, length 8) + literal "xyz": abcd abcd abcd xyz
    block = bytes([0x44]) + b"abcd" + bytes([4, 0]) + bytes([0x30]) + b"xyz"
    assert decompress_block(block, 15) == b"abcdabcdabcdxyz"
    # run-length: "a" then offset 1, length 4 + 15 + 1 = 20 (extended length byte)
    rle = bytes([0x1F]) + b"a" + bytes([1, 0, 1]) + bytes([0x00])
    assert decompress_block(rle, 21) == b"a" * 21
    # a literal run of 15 + 255 + 3 = 273 bytes (two extension bytes)
    text = bytes(range(256)) + b"x" * 17
    assert decompress_block(bytes([0xF0, 255, 3]) + text, 273) == text


def test_lz4_stream_raw_and_compressed_blocks_and_errors():
    block = bytes([0x44]) + b"abcd" + bytes([4, 0]) + bytes([0x30]) + b"xyz"
    data = lz4_stream((0x20, block, 15), (0x10, b"raw!", 4))
    assert decompress(data) == b"abcdabcdabcdxyzraw!"
    with pytest.raises(CompressedLogError, match="truncated"):
        decompress(data[:30])
    assert decompress(data[:30], allow_truncated=True) == b""  # the first block is incomplete
    with pytest.raises(CompressedLogError, match="magic"):
        decompress(b"not an lz4 file at all")
    with pytest.raises(CompressedLogError, match="header says"):
        decompress_block(block, 16)


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
    assert find_event_log(tmp_path).name == "app-1.lz4"  # a finished log wins
    app = read_event_log(find_event_log(tmp_path))
    assert app.totals.tasks == 4
    assert read_event_log(tmp_path / "app-0.lz4.inprogress").app_id == "app-1"
    table = write_stage_table(app, tmp_path / "spark_stages.csv").read_text().splitlines()
    assert table[0].startswith("stage_id,attempt,name") and len(table) == 3
    with pytest.raises(LogNotFoundError, match="no Spark event log"):
        find_event_log(tmp_path / "logs" if (tmp_path / "logs").mkdir() is None else tmp_path)
