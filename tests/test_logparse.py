"""logparse on real BigDL logs (tests/fixtures/logs) and on edited copies of them.

Every figure is checked against ``reference()``, an independent line-by-line reading
with plain string operations, not against the parser's own earlier output.
"""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest

from logparse import JobLog, parse
from logparse import scan as scan_mod

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
OK_LOGS = ["lenet-lr2.5-3ep", "birnn-small-1ep", "lenet-4000-2ep", "birnn-4000-1ep", "cluster-lenet-1ep"]
ALL_LOGS = OK_LOGS + ["lenet-killed", "bad-data-dir", "birnn-batch65"]


def fixture_text(name: str) -> str:
    return gzip.decompress((FIXTURES / f"{name}.out.gz").read_bytes()).decode()


def write_log(tmp_path: Path, name: str, text: str | bytes, err: str | bytes | None = None) -> Path:
    out = tmp_path / f"{name}.out"
    out.write_bytes(text.encode() if isinstance(text, str) else text)
    if err is not None:
        (tmp_path / f"{name}.err").write_bytes(err.encode() if isinstance(err, str) else err)
    return out


def reference(text: str) -> dict:
    """The figures read the slow, obvious way: split lines, search substrings."""
    acc = wall = first_lr = batch = epoch_ms = None
    epochs, iters, vals = 0, 0, 0
    for line in text.splitlines():
        if "[Wall Clock " not in line:
            continue
        wall_here = float(line.split("[Wall Clock ")[1].split("s]")[0])
        epoch_here = int(line.split("[Epoch ")[1].split(" ")[0])
        if "] Trained " in line:
            iters += 1
            if first_lr is None:
                first_lr = float(line.split("Current learning rate is ")[1].split(". ")[0])
                batch = int(float(line.split("] Trained ")[1].split(" records")[0]))
        elif "Epoch finished. Wall clock time is " in line:
            epochs = epoch_here
            epoch_ms = float(line.split("Wall clock time is ")[1].split(" ms")[0])
        elif "Top1Accuracy is Accuracy(" in line:
            vals += 1
            acc = float(line.split("accuracy: ")[1].rstrip(")\r "))
            wall = wall_here
    return dict(accuracy=acc, wall_clock_s=wall, learning_rate=first_lr, batch_size=batch,
                epochs_completed=epochs, epoch_wall_clock_ms=epoch_ms, iterations=iters, validations=vals)


def figures(log: JobLog) -> dict:
    return dict(accuracy=log.accuracy, wall_clock_s=log.wall_clock_s, learning_rate=log.learning_rate,
                batch_size=log.batch_size, epochs_completed=log.epochs_completed,
                epoch_wall_clock_ms=log.epoch_wall_clock_ms)


@pytest.mark.parametrize("name", OK_LOGS)
def test_ok_logs_match_reference(name):
    text = fixture_text(name)
    ref = reference(text)
    log = parse(FIXTURES / f"{name}.out.gz")
    assert log.status == "ok", log.reason
    assert log.reason == "" and log.failure_kind is None
    assert figures(log) == {k: ref[k] for k in figures(log)}
    full = parse(FIXTURES / f"{name}.out.gz", full=True)
    assert len(full.iterations) == ref["iterations"]
    assert len(full.validations) == ref["validations"] == ref["epochs_completed"]
    assert full.summary() == log.summary()


def test_learning_rate_above_one_is_read_exactly():
    log = parse(FIXTURES / "lenet-lr2.5-3ep.out.gz", full=True)
    assert log.learning_rate == 2.5
    assert log.planned_epochs == 3 and log.epochs_completed == 3
    # BigDL decays the rate every iteration: lr / (1 + decay * t) with decay 0.0002 (jobs.train's default).
    for t, it in enumerate(log.iterations):
        assert it.learning_rate == pytest.approx(2.5 / (1 + 0.0002 * t), rel=1e-12)


def test_epoch_count_may_exceed_epoch_size():
    log = parse(FIXTURES / "lenet-4000-2ep.out.gz", full=True)
    end = log.epochs[0]
    last_of_epoch1 = [i for i in log.iterations if i.epoch == 1][-1]
    assert (last_of_epoch1.epoch_records, last_of_epoch1.epoch_size) == (4032, 4000)
    assert end.iteration == 63 and log.iterations_completed == 126
    assert sum(i.records for i in log.iterations) == 126 * 64


def test_validation_metrics_are_all_kept():
    log = parse(FIXTURES / "birnn-small-1ep.out.gz", full=True)
    (m,) = log.validations[-1].metrics
    assert m.name == "Top1Accuracy" and m.kind == "Accuracy"
    assert m.get("correct") / m.get("count") == m.value == log.accuracy


def test_usage_error_is_a_failed_job_with_its_message():
    log = parse(FIXTURES / "birnn-batch65.out.gz")
    assert log.status == "failed" and log.failure_kind == "job"
    assert log.reason == "BigDL Usage Error: total batch size: 65 should be divided by total core number: 2"
    assert log.epochs_completed == 0 and log.accuracy is None and log.batch_size is None


def test_cli_error_line_is_a_failed_job():
    log = parse(FIXTURES / "bad-data-dir.out.gz")
    assert (log.status, log.failure_kind) == ("failed", "job")
    assert log.reason == "error: --data-dir /nonexistent/mnist is not a directory"


def test_killed_job_is_incomplete_infrastructure_with_last_figures():
    text = fixture_text("lenet-killed")
    log = parse(FIXTURES / "lenet-killed.out.gz")
    assert (log.status, log.failure_kind) == ("incomplete", "infrastructure")
    assert "epoch 2 stopped at iteration 9" in log.reason and "killed" in log.reason
    ref = reference(text)
    assert log.accuracy == ref["accuracy"] and log.epochs_completed == 1 and log.planned_epochs == 4


def test_err_beside_out_is_read_only_when_needed(tmp_path):
    out = write_log(tmp_path, "a", fixture_text("birnn-small-1ep"), err="WARNING: x\n")
    assert parse(out).err_path is None  # ok from the .out alone: the .err is not touched
    killed = write_log(tmp_path, "k", fixture_text("lenet-killed"), err="RuntimeError: x\n")
    assert parse(killed).err_path == str(tmp_path / "k.err")


# --- edited copies of real logs: each edit one thing a real log can show --------------------------------

def _ok_text() -> str:
    return fixture_text("lenet-lr2.5-3ep")


def _last_validation_end(text: str) -> int:
    i = text.rindex("Top1Accuracy is Accuracy(")
    return text.index("\n", i) + 1


def test_checkpoint_lines_after_the_last_validation_do_not_move_the_figures(tmp_path):
    text = _ok_text()
    at = _last_validation_end(text)
    extra = "".join(f"26-11-23 15:04:44 [Thread-5] INFO  DistriOptimizer$:200 - [Epoch 3 256/256][Iteration 12]"
                    f"[Wall Clock 8.7s] Save model to /tmp/ckpt/model.{k}\n" for k in range(5))
    log = parse(write_log(tmp_path, "ck", text[:at] + extra + text[at:]))
    assert log.status == "ok" and figures(log) == {k: reference(text)[k] for k in figures(log)}


def test_accuracy_of_exactly_one(tmp_path):
    text = _ok_text()
    i = text.rindex("Top1Accuracy is Accuracy(")
    j = text.index("\n", i)
    text = text[:i] + "Top1Accuracy is Accuracy(correct: 128, count: 128, accuracy: 1.0)" + text[j:]
    log = parse(write_log(tmp_path, "one", text))
    assert log.status == "ok" and log.accuracy == 1.0


def test_several_metrics_in_one_validation_nan_loss_and_exponents(tmp_path):
    text = _ok_text()
    at = _last_validation_end(text)
    head = "26-11-23 15:04:44 [Thread-5] INFO  DistriOptimizer$:184 - [Epoch 3 256/256][Iteration 12][Wall Clock 8.653981682s] "
    extra = (head + "Top5Accuracy is Accuracy(correct: 100, count: 128, accuracy: 0.78125)\n"
             + head + "Loss is (Loss: 1.5E2, count: 128, Average Loss: 1.171875)\n")
    text = text[:at] + extra + text[at:]
    text = text.replace("Loss is 48.279686.", "Loss is NaN.")
    log = parse(write_log(tmp_path, "m", text), full=True)
    assert [m.name for m in log.final_metrics] == ["Top1Accuracy", "Top5Accuracy", "Loss"]
    assert log.final_metrics[2].value == 1.171875 and log.final_metrics[2].get("Loss") == 150.0
    assert log.final_metrics[1].value == 0.78125
    assert log.accuracy == reference(text)["accuracy"]
    assert math.isnan(log.final_loss)
    assert parse(tmp_path / "m.out").summary().keys() == log.summary().keys()


def test_exception_after_training_keeps_ok_with_a_note(tmp_path):
    text = _ok_text()  # app name says epochs=3, and 3 epochs were validated: training finished
    at = _last_validation_end(text)
    tb = ("Traceback (most recent call last):\n  File \"/work/main/jobs/train.py\", line 139, in run\n"
          "    sc.stop()\nRuntimeError: boom while stopping\n")
    log = parse(write_log(tmp_path, "after", text[:at] + tb + text[at:]))
    assert (log.status, log.failure_kind, log.reason) == ("ok", None, "")
    assert log.notes[0] == "after training: RuntimeError: boom while stopping"
    assert log.accuracy == reference(text)["accuracy"]
    # Without the plan, an error right after the last validation is what stopped the job: failed.
    unplanned = text.replace("epochs=3", "three epochs")
    at = _last_validation_end(unplanned)
    log = parse(write_log(tmp_path, "after2", unplanned[:at] + tb + unplanned[at:]))
    assert (log.status, log.failure_kind, log.reason) == ("failed", "job", "RuntimeError: boom while stopping")


def test_lost_executor_mid_training_is_infrastructure(tmp_path):
    text = fixture_text("lenet-killed")  # ends in epoch 2
    lost = ("2026-11-23 15:06:41 ERROR TaskSchedulerImpl:73 - Lost executor 1 on 10.0.0.7: Remote RPC client "
            "disassociated. Likely due to containers exceeding thresholds, or network issues.\n"
            "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
            "py4j.protocol.Py4JJavaError: An error occurred while calling o97.optimize.\n"
            ": org.apache.spark.SparkException: Job aborted due to stage failure: ExecutorLostFailure\n"
            "2026-11-23 15:06:42 INFO  ShutdownHookManager:57 - Shutdown hook called\n")
    log = parse(write_log(tmp_path, "lost", text + lost))
    assert (log.status, log.failure_kind) == ("failed", "infrastructure")
    assert log.reason.startswith("Lost executor 1 on 10.0.0.7")


def test_python_traceback_reason_is_the_exception_line(tmp_path):
    text = fixture_text("lenet-killed") + (
        "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    optimizer.optimize()\n"
        "             ^^^^^^\npy4j.protocol.Py4JJavaError: An error occurred while calling o97.optimize.\n"
        ": java.lang.IllegalStateException: bad state\n\tat a.b(C.java:1)\n")
    log = parse(write_log(tmp_path, "tb", text))
    assert log.status == "failed" and log.failure_kind == "job"
    assert log.reason == ("py4j.protocol.Py4JJavaError: An error occurred while calling o97.optimize. "
                          "java.lang.IllegalStateException: bad state")


def test_out_of_memory_is_a_job_error_even_if_executors_are_lost_after(tmp_path):
    text = fixture_text("lenet-killed") + (
        "2026-11-23 15:06:41 ERROR Executor:94 - Exception in task 0.0 in stage 50.0 (TID 28)\n"
        "java.lang.OutOfMemoryError: Java heap space\n"
        "2026-11-23 15:06:41 ERROR TaskSchedulerImpl:73 - Lost executor driver on localhost: Executor heartbeat timed out\n")
    log = parse(write_log(tmp_path, "oom", text))
    assert (log.status, log.failure_kind, log.reason) == ("failed", "job", "java.lang.OutOfMemoryError: Java heap space")


def test_expected_epochs_decides_fewer_epochs_than_planned(tmp_path):
    text = _ok_text()
    assert parse(write_log(tmp_path, "e", text), expected_epochs=3).status == "ok"
    log = parse(tmp_path / "e.out", expected_epochs=4)
    assert (log.status, log.failure_kind) == ("incomplete", "job")
    assert log.reason == "3 of 4 planned epochs done"


def test_spark_shutdown_is_not_required_program_output_is_evidence(tmp_path):
    text = _ok_text().replace("epochs=3", "three epochs")
    # Cut before Spark's shutdown: the job's own summary line says optimize() returned.
    cut = text[:text.index("Shutdown hook called")].rsplit("\n", 1)[0] + "\n"
    log = parse(write_log(tmp_path, "ns", cut))
    assert log.planned_epochs is None and log.status == "ok" and log.notes == ()
    # Cut right after the final validation: nothing says training ended, and no plan says 3 epochs.
    bare = text[:_last_validation_end(text)]
    log = parse(write_log(tmp_path, "bare", bare))
    assert (log.status, log.failure_kind) == ("incomplete", "infrastructure")
    assert "no sign that training ended" in log.reason
    # The same cut with the plan known: every planned epoch was validated, so the figures are whole.
    planned = parse(tmp_path / "bare.out", expected_epochs=3)
    assert planned.status == "ok" and planned.notes and figures(planned) == figures(log)


def test_epoch_finished_without_validation_is_incomplete(tmp_path):
    text = _ok_text()
    i = text.rindex("Top1Accuracy is Accuracy(")
    start, end = text.rindex("\n", 0, i) + 1, text.index("\n", i) + 1
    log = parse(write_log(tmp_path, "nv", text[:start] + text[end:]))
    assert log.status == "incomplete" and log.reason == "epoch 3 finished but was not validated"
    assert log.epochs_completed == 3 and log.epochs_validated == 2


def test_crlf_gives_the_same_figures(tmp_path):
    text = _ok_text()
    a = parse(write_log(tmp_path, "lf", text), full=True)
    b = parse(write_log(tmp_path, "crlf", text.replace("\n", "\r\n")), full=True)
    assert b.status == "ok" and figures(a) == figures(b)
    assert a.iterations == b.iterations and a.validations == b.validations


def test_real_standalone_log_has_its_app_id():
    log = parse(FIXTURES / "cluster-lenet-1ep.out.gz")
    assert log.status == "ok" and log.app_id == "app-20261123151058-0000"
    assert parse(FIXTURES / "lenet-lr2.5-3ep.out.gz").app_id is None  # local mode prints none


def test_standalone_app_id_is_read(tmp_path):
    text = _ok_text()
    i = text.index("Submitted application")
    line = ("2026-11-23 15:04:30 INFO  StandaloneSchedulerBackend:57 - Connected to Spark cluster with app ID "
            "app-20261123150430-0007\n")
    log = parse(write_log(tmp_path, "sa", text[:i] + line + text[i:].split("\n", 1)[1]))
    assert log.app_id == "app-20261123150430-0007"


def test_log4j_on_stderr_is_read_from_the_err(tmp_path):
    text = _ok_text()
    out = write_log(tmp_path, "swap", "jobs.train: lenet trained 256 digits\n", err=text)
    log = parse(out)
    assert log.status == "ok" and figures(log) == {k: reference(text)[k] for k in figures(log)}
    assert parse(out, full=True).summary() == log.summary()


@pytest.mark.parametrize("tail", [200, 4096])
@pytest.mark.parametrize("name", ALL_LOGS)
def test_small_tail_windows_grow_to_the_same_answer(monkeypatch, name, tail):
    monkeypatch.setattr(scan_mod, "TAIL0", tail)
    monkeypatch.setattr(scan_mod, "HEAD0", tail)
    path = FIXTURES / f"{name}.out.gz"
    assert parse(path).summary() == parse(path, full=True).summary()


def test_long_error_spam_after_the_last_event(tmp_path, monkeypatch):
    text = fixture_text("lenet-killed") + "\tat org.apache.Foo.bar(Foo.scala:1)\n" * 20000 + (
        "2026-11-23 15:06:41 ERROR TaskSchedulerImpl:73 - Lost executor 3 on 10.0.0.9: worker lost\n")
    log = parse(write_log(tmp_path, "spam", text))
    assert (log.status, log.failure_kind) == ("failed", "infrastructure")
    assert log.reason.startswith("Lost executor 3")
    assert parse(tmp_path / "spam.out", full=True).summary() == log.summary()


SHUTDOWN = "2026-11-23 15:06:42 INFO  ShutdownHookManager:57 - Shutdown hook called\n"


@pytest.mark.parametrize("tail, kind, reason", [
    ("py4j.protocol.Py4JJavaError: An error occurred while calling o97.optimize.\n", "job",
     "py4j.protocol.Py4JJavaError: An error occurred while calling o97.optimize."),
    ("2026-11-23 15:06:41 ERROR SignalUtils:73 - RECEIVED SIGNAL TERM\n", "infrastructure", "RECEIVED SIGNAL TERM"),
    ("2026-11-23 15:06:41 ERROR StandaloneSchedulerBackend:73 - Application has been killed. Reason: Master removed "
     "our application: FAILED\n", "infrastructure", "Application has been killed. Reason: Master removed our application: FAILED"),
    ("2026-11-23 15:06:41 ERROR StandaloneSchedulerBackend:73 - Application has been killed. Reason: All masters are "
     "unresponsive! Giving up.\n", "infrastructure", "Application has been killed. Reason: All masters are unresponsive! Giving up."),
    ('Exception in thread "main" java.lang.OutOfMemoryError: GC overhead limit exceeded\n', "job",
     "java.lang.OutOfMemoryError: GC overhead limit exceeded"),
    ("jobs.train: error: argument --epochs: must be > 0, got '0'\n", "job", "jobs.train: error: argument --epochs: must be > 0, got '0'"),
    ("Killed\n", "infrastructure", "Killed"),
    ("2026-11-23 15:06:41 WARN  TransportClientFactory:69 - Connection refused: localhost/127.0.0.1:7077\n",
     "infrastructure", "Connection refused: localhost/127.0.0.1:7077"),
    ("2026-11-23 15:06:41 ERROR Executor:94 - Exception in task 0.0 in stage 50.0 (TID 28)\n", "job",
     "ERROR Executor:94 - Exception in task 0.0 in stage 50.0 (TID 28)"),
])
def test_each_failure_marker_after_the_last_event(tmp_path, tail, kind, reason):
    log = parse(write_log(tmp_path, "m", fixture_text("lenet-killed") + tail + SHUTDOWN))
    assert (log.status, log.failure_kind, log.reason) == ("failed", kind, reason)


def test_errors_before_the_last_event_were_survived(tmp_path):
    text = _ok_text()
    i = text.index("[Epoch 2 ")
    i = text.rindex("\n", 0, i) + 1
    lost = "2026-11-23 15:04:40 ERROR TaskSchedulerImpl:73 - Lost executor 1 on 10.0.0.7: worker lost\n"
    log = parse(write_log(tmp_path, "survived", text[:i] + lost + text[i:]))
    assert log.status == "ok" and figures(log) == {k: reference(text)[k] for k in figures(log)}


@pytest.mark.parametrize("line, app_id", [
    ("INFO  EventLoggingListener:57 - Logging events to file:/tmp/spark-events/local-1763910000123", "local-1763910000123"),
    ("INFO  Client:57 - Submitted application application_1763910000123_0042", "application_1763910000123_0042"),
    ("INFO  SparkContext:57 - Submitted application: myapp-20261123150430-0007 lr=1", None),
])
def test_other_app_id_lines(tmp_path, line, app_id):
    text = _ok_text()
    i = text.index("Submitted application")
    i = text.rindex("\n", 0, i) + 1
    log = parse(write_log(tmp_path, "id", text[:i] + "2026-11-23 15:04:30 " + line + "\n" + text[i:]))
    assert log.app_id == app_id


@pytest.mark.parametrize("first", [0, 1, 2])
def test_the_earliest_app_id_line_wins_whichever_needle_it_has(first):
    from logparse.scan import _app_id

    lines = [b"INFO StandaloneSchedulerBackend: Connected to Spark cluster with app ID app-20261123150430-0007",
             b"INFO EventLoggingListener: Logging events to file:/tmp/e/local-1763910000123",
             b"INFO Client: Submitted application application_1763910000123_0042"]
    ids = ["app-20261123150430-0007", "local-1763910000123", "application_1763910000123_0042"]
    order = [first] + [i for i in range(3) if i != first]
    part = b"noise\n" * 50 + b"\n".join(lines[i] for i in order) + b"\n"
    assert _app_id(part) == ids[first]


def test_cut_inside_the_only_validation_line_is_not_ok_even_without_head_clues(tmp_path):
    """No "creating: createTop1Accuracy" in the head, the plan known: a log cut inside its first validation line
    (epoch 1's "Validate model..." removed too) must not pass as an unvalidated, finished run."""
    text = "\n".join(l for l in _ok_text().split("\n") if "creating: " not in l and "Validate model" not in l)
    cut = text[:text.index("accuracy: 0.140625") + 10]
    log = parse(write_log(tmp_path, "c", cut), expected_epochs=1)
    assert log.status == "incomplete" and log.reason.startswith("epoch 1 finished but was not validated"), log.reason
