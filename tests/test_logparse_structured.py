"""Spark 4's structured (JSON) log lines read as the log4j layout they stand for: the same status, reason and
failure kind (logparse.structured).

The JSON lines are real: tests/fixtures/spark4json/ holds the logs of a Spark 4.3 standalone run with
``spark.log.structuredLogging.enabled=true`` (a clean end, a lost executor, a driver OutOfMemoryError; how
they were made is in its README.md). Each JSON event is compared with the same event written in the layout
Spark prints without structured logging (``yy/MM/dd HH:mm:ss LEVEL Logger: message``), typed here by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logparse import FailureKind, Status, parse, structured
from logparse.judgement import ProcessFacts, judge_json_run
from logparse.losses import resource_losses
from tests.test_logparse import write_log
from tests.test_logparse_program_end import RAW, final_validation_end

SPARK4 = Path(__file__).resolve().parent / "fixtures" / "spark4json"


def events(name: str) -> list[tuple[bytes, dict]]:
    """Every JSON line of a fixture's .err, with its parsed record."""
    lines = (SPARK4 / f"{name}.err").read_bytes().splitlines()
    return [(ln, json.loads(ln)) for ln in lines if ln.startswith(b'{"ts":')]


def event(name: str, needle: str) -> tuple[bytes, dict]:
    return next((ln, rec) for ln, rec in events(name) if needle in rec["msg"])


def layout(rec: dict) -> bytes:
    """The event as Spark writes it without structured logging (typed from the record, not by the converter)."""
    ts = rec["ts"]
    line = f"{ts[2:4]}/{ts[5:7]}/{ts[8:10]} {ts[11:19]} {rec['level']} {rec['logger']}: {rec['msg']}"
    exc = rec.get("exception")
    if exc:
        line += f"\n{exc['class']}: {exc['msg']}" + "".join(
            f"\n\tat {f['class']}.{f['method']}({f.get('file')}:{f.get('line')})" for f in exc.get("stacktrace", []))
    return line.encode() + b"\n"


def epoch_boundary() -> bytes:
    """A real finished BigDL log cut right after its last validation, its plan removed: nothing says it ended."""
    raw = RAW["lenet-4000-2ep"]
    return raw[:final_validation_end(raw)]


def verdict(tmp_path: Path, name: str, data: bytes):
    log = parse(write_log(tmp_path, name, data))
    return log.status, log.reason, log.failure_kind


def test_the_fixtures_are_spark_4_structured_logs():
    for name in ("clean", "lost", "oom"):
        recs = [rec for _, rec in events(name)]
        assert recs and all({"ts", "level", "msg", "logger"} <= set(rec) for rec in recs)
        assert any(rec["msg"] == "Running Spark version 4.3.0" for rec in recs)


def test_one_json_line_after_a_cut_at_an_epoch_boundary_keeps_it_incomplete(tmp_path):
    bare = verdict(tmp_path, "bare", epoch_boundary())
    assert bare[0] == Status.INCOMPLETE
    for needle in ("Unable to load native-hadoop", "Running Spark version", "Executor added"):
        line, rec = event("clean", needle)
        as_json = verdict(tmp_path, "json", epoch_boundary() + line + b"\n")
        as_layout = verdict(tmp_path, "layout", epoch_boundary() + layout(rec))
        assert as_json == as_layout == bare, needle
        # and cut mid-write (no newline, a JSON object left open): still a logger's line, never the program's
        assert verdict(tmp_path, "cut", epoch_boundary() + line[:len(line) // 2])[0] == Status.INCOMPLETE


def test_a_json_lost_executor_reads_as_the_layout_line(tmp_path):
    line, rec = event("lost", "Lost executor")
    assert rec["level"] == "ERROR"
    as_json = verdict(tmp_path, "json", epoch_boundary() + line + b"\n")
    as_layout = verdict(tmp_path, "layout", epoch_boundary() + layout(rec))
    assert as_json == as_layout
    assert as_json[0] == Status.FAILED and as_json[2] == FailureKind.INFRASTRUCTURE
    assert as_json[1].startswith("Lost executor ") and rec["msg"].startswith(as_json[1].removesuffix("..."))


def test_a_json_oom_reason_is_the_exception_not_cut_json(tmp_path):
    line, rec = next((ln, r) for ln, r in events("oom") if "OutOfMemoryError" in json.dumps(r.get("exception", {})))
    as_json = verdict(tmp_path, "json", epoch_boundary() + line + b"\n")
    as_layout = verdict(tmp_path, "layout", epoch_boundary() + layout(rec))
    assert as_json == as_layout
    status, reason, kind = as_json
    assert status == Status.FAILED and kind == FailureKind.JOB
    assert reason == f"java.lang.OutOfMemoryError: {rec['exception']['msg']}" and '"' not in reason


def test_the_real_runs_are_judged_as_the_harness_judges_a_json_job():
    clean = judge_json_run(SPARK4 / "clean.out", ProcessFacts(0, False, 60.0), None)
    assert (clean.status, clean.reason) == (Status.OK, "")
    lost = judge_json_run(SPARK4 / "lost.out", ProcessFacts(0, False, 60.0), None)
    _, rec = event("lost", "Lost executor")
    assert lost.status == Status.FAILED and lost.failure_kind == FailureKind.INFRASTRUCTURE
    assert lost.reason.endswith(f"ERROR {rec['logger']}: {rec['msg']}")
    assert resource_losses(SPARK4 / "lost.out")[0] == f"ERROR {rec['logger']}: {rec['msg']}"
    oom = judge_json_run(SPARK4 / "oom.out", ProcessFacts(1, False, 60.0), None)
    # the run's reason is the program's own last error line and exit code; the log's reading of the JSON lines
    # found the OOM, whole (not cut mid-JSON)
    assert oom.status == Status.FAILED and oom.reason.startswith("the job exited with code 1: ")
    assert "java.lang.OutOfMemoryError: Java heap space" in oom.log.reason
    assert '"' not in oom.log.reason.split("OutOfMemoryError", 1)[1]


@pytest.mark.parametrize("line", [
    b'{"ts":"2026-11-27T23:01:13.836Z","level":"WARN","msg":"a\\nb","logger":"X"}',
    b'{"ts":"x","msg":"no level"}',
    b'{"ts":"2026-11-27T23:01:13.836Z","level":"ERROR","msg":"m","exception":{"class":"E","msg":null,'
    b'"stacktrace":[1,{"class":"C"}],"cause":{"class":"F","msg":"why"}},"logger":"L"}',
    b'{"ts":', b'{"ts": [1, 2', b'{"ts":"1","msg":"\\ud800"}',
])
def test_any_structured_line_converts_without_error_and_keeps_its_message(line):
    text = structured.as_layout(b"before\n" + line + b"\nafter")
    assert text.startswith(b"before\n") and text.endswith(b"\nafter")
    body = text[len(b"before\n"):-len(b"\nafter")]
    try:
        rec = json.loads(line)
    except ValueError:
        assert body == line  # not JSON: as it was
        return
    first = body.split(b"\n")[0].decode()
    assert rec["msg"].split("\n")[0].encode("utf-8", "replace").decode() in first
    assert all(x.startswith(b"\t") or x.startswith((b"E", b"Caused by: ")) for x in body.split(b"\n")[1:])
