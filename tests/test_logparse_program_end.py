"""The program's own output after its last validation shows that training returned.

A finished job whose program printed its result after optimize() (no Spark shutdown, no "creating:" line)
is ok; any prefix of a finished log cut inside training is never ok, whatever the lines around the cut; the
lines BigDL, Spark, the JVM and Python write during training or on an error never count as the program's.
Logs are the real fixtures (tests/fixtures/logs/README.md), with their plan ("epochs=N" in the application
name) removed so that only the end of the log can decide.
"""

from __future__ import annotations

import gzip
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse import Status, parse
from logparse import patterns as P
from logparse.scan import scan_final
from logparse.source import Source
from logparse.status import _balance, end_evidence, markers, program_output
from tests.test_logparse import FIXTURES, write_log

FINISHED = ["lenet-lr2.5-3ep", "birnn-small-1ep", "lenet-4000-2ep", "dllib-eval-4methods", "bigdl0-distri-evaluated",
            "dllib-print-after-training", "dllib-spark-logs-elsewhere"]


def unplanned(name: str) -> bytes:
    """The real log without what says how many epochs it was asked for."""
    raw = gzip.decompress((FIXTURES / f"{name}.out.gz").read_bytes())
    return re.sub(rb"epochs=(\d)", rb"n_ep=\1", raw)


RAW = {n: unplanned(n) for n in FINISHED}


def final_validation_end(raw: bytes) -> int:
    return raw.index(b"\n", raw.rfind(b"Top1Accuracy is Accuracy(")) + 1


def test_a_real_program_that_prints_after_training_is_ok_and_nothing_else_said_so(tmp_path):
    path = FIXTURES / "dllib-print-after-training.out.gz"
    log = parse(path)
    assert (log.status, log.epochs_completed, log.planned_epochs, log.notes) == (Status.OK, 2, None, ())
    assert log.accuracy == 0.640625 and log.wall_clock_s == 7.013417662
    with Source(path) as src:
        region = scan_final(src).region
    assert b"Optimization Done. Total 2 epochs finished in" in region
    assert not end_evidence(region, len(region))  # a rule blind to the program's output finds no sign: "incomplete"
    assert program_output(region, len(region))
    # the same log cut before the program's line is not ok: nothing after training shows it returned
    raw = gzip.decompress(path.read_bytes())
    cut = raw[:raw.index(b"Optimization Done.")]
    assert parse(write_log(tmp_path, "cut", cut)).status == Status.INCOMPLETE


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FINISHED), frac=st.floats(0, 1, exclude_max=True), at_line=st.booleans(),
       crlf=st.booleans())
def test_any_prefix_cut_inside_training_is_never_ok(tmp_path, name, frac, at_line, crlf):
    raw = RAW[name]
    start = raw.rfind(b"\n", 0, raw.index(b"[Epoch ")) + 1
    end = final_validation_end(raw) - 1  # up to (not including) the final validation's newline
    k = start + int(frac * (end - start))
    if at_line:  # a whole-line cut, right after a line BigDL or Spark wrote during training
        k = raw.rfind(b"\n", 0, k) + 1 or k
    data = raw[:k].replace(b"\n", b"\r\n") if crlf else raw[:k]
    p = write_log(tmp_path, "cut", data)
    log = parse(p)
    assert log.status != Status.OK, (name, k, raw[max(0, k - 200):k])
    assert parse(p, full=True).status == log.status


def _is_program_line(line: str) -> bool:
    """What the rule calls the program's own line: not blank, not indented, not a logger's or an error's line,
    no error marker in it (an ``error: ...`` line is the program failing, not finishing)."""
    raw = line.encode("utf-8", "replace")
    return (bool(line.strip()) and line[0] not in " \t" and P.NOT_PROGRAM.match(raw) is None
            and not markers(b"\n" + raw + b"\n"))


PROGRAM_LINES = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=80).filter(
    _is_program_line)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FINISHED), lines=st.lists(PROGRAM_LINES, min_size=1, max_size=4),
       log_lines_before=st.integers(0, 3), log_lines_after=st.integers(0, 3), crlf=st.booleans())
def test_a_finished_log_followed_by_any_program_output_is_ok(tmp_path, name, lines, log_lines_before,
                                                              log_lines_after, crlf):
    raw = RAW[name]
    end = final_validation_end(raw)
    # real log lines of the same job (Spark and BigDL INFO lines from before training) around the program's
    spark = [ln for ln in raw[:raw.index(b"[Epoch ")].split(b"\n") if P.LOG_LINE.match(ln) and b"ERROR" not in ln
             and not markers(ln) and _balance(ln) == 0 and not ln.rstrip().endswith(b"-")][-6:]  # whole messages
    body = (spark[:log_lines_before] + [ln.encode() for ln in lines] + spark[:log_lines_after])
    data = raw[:end] + b"\n".join(body) + b"\n"
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    log = parse(write_log(tmp_path, "done", data))
    assert log.status == Status.OK, (name, lines, log.reason)
    whole = parse(write_log(tmp_path, "bare", raw[:end]), expected_epochs=log.epochs_completed)
    assert (log.accuracy, log.wall_clock_s, log.epochs_completed) == (whole.accuracy, whole.wall_clock_s,
                                                                      whole.epochs_completed)


@pytest.mark.parametrize("ending", [
    "Optimization Done.\n",
    "[7 2 1 0 4 1 4 9]\n",                          # print(trained_model.predict_class(X_test)) in BigDL's examples
    "{'accuracy': 0.98, 'time': 12.5}\n",
    "(0.5, 3)\n",
    "0.9734\n",
    "Accuracy: 0.97\n2026-11-25 02:07:51 INFO  SparkContext:57 - Invoking stop() from shutdown hook\n",
    "Mean Squared Error: 0.12\n",
])
def test_what_a_program_prints_counts(tmp_path, ending):
    raw = RAW["lenet-lr2.5-3ep"]
    log = parse(write_log(tmp_path, "p", raw[:final_validation_end(raw)] + ending.encode()))
    assert log.status == Status.OK, log.reason


@pytest.mark.parametrize("ending", [
    "",
    "\n\n  \n",
    "[rdd_22_0, test_0weights0, test_0gradients0]\n",    # BigDL's println of cached blocks, during training
    "\tcomputeThresholdbatchSize: 100\n",                  # a log message's indented continuation
    "2026-11-23 15:04:40 WARN  TaskSetManager:69 - Lost task 0.0 (TID 9, FetchFailed(BlockManagerId(1),\n"
    "org.apache.spark.shuffle.MetadataFetchFailedException: Missing an output location\n(0,List()).\n)\n",
    "java.io.IOException: Connection reset by peer\n\tat sun.nio.ch.FileDispatcherImpl.read0(Native Method)\n",
    "Caused by: java.lang.InterruptedException\n\t... 12 more\n",
    "OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x00000000d5580000) failed; error='Cannot allocate'\n",
    "# A fatal error has been detected by the Java Runtime Environment:\n",
    "/usr/lib/python3/x.py:12: UserWarning: something\n  warnings.warn(msg)\n",
    "WARNING: An illegal reflective access operation has occurred\n",
    "ERROR:root:Exception while sending command.\n",
    "Optimization Do",                                     # the process died inside the line it was writing
    "KeyboardInterrupt\n",
    "****************************Usage Error************************\n",
])
def test_lines_that_are_not_the_programs_own_do_not_count(tmp_path, ending):
    raw = RAW["lenet-lr2.5-3ep"]
    log = parse(write_log(tmp_path, "n", raw[:final_validation_end(raw)] + ending.encode()))
    assert log.status != Status.OK, ending


def test_program_output_after_a_hard_error_does_not_count(tmp_path):
    raw = RAW["lenet-lr2.5-3ep"]
    tail = b"Traceback (most recent call last):\n  File \"job.py\", line 3\nRuntimeError: boom\nafter\n"
    log = parse(write_log(tmp_path, "e", raw[:final_validation_end(raw)] + tail))
    assert (log.status, log.reason) == (Status.FAILED, "RuntimeError: boom")


def test_log4j_on_stderr_the_err_region_needs_the_old_signs(tmp_path):
    """When the training lines are in the .err (log4j on stderr), a stray line there is not the program's output."""
    raw = RAW["lenet-lr2.5-3ep"]
    err = raw[:final_validation_end(raw)] + b"some line on stderr\n"
    out = b"loading data\n"  # the program's stdout, before training
    log = parse(write_log(tmp_path, "s", out, err=err))
    assert log.status == Status.INCOMPLETE and log.epochs_completed == 3
