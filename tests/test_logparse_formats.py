"""The formats users have: BigDL 0.x, DLlib 2.x, Distri- and LocalOptimizer, Spark logs elsewhere, Spark 3 layouts,
.gz, CRLF, several validation methods and post-training ``Evaluated result`` lines; and the ok rule on each.

Figures are checked against ``ref()``, a plain line-by-line reading with str.split (no regex), written
for these tests independently of logparse's byte patterns.
"""

from __future__ import annotations

import gzip

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse import Status, parse
from logparse.records import FailureKind
from tests.test_logparse import FIXTURES, write_log


def text_of(name: str) -> str:
    return gzip.decompress((FIXTURES / f"{name}.out.gz").read_bytes()).decode()


def ref(text: str) -> dict:
    """Last Top1 accuracy and its wall clock, epochs completed, first batch and rate, Evaluated results."""
    acc = wall = batch = lr = None
    epochs, evaluated, metrics = 0, {}, {}
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("Evaluated result: "):
            value, _total, method = (p.split(": ")[1] for p in line.split(", "))
            evaluated[method] = float(value)
        if "[Epoch " not in line or "[Wall Clock " not in line:
            continue
        body = line.split("s] ", 1)[1]
        epoch = int(line.split("[Epoch ")[1].split(" ")[0])
        done, size = (int(x) for x in line.split("[Epoch ")[1].split(" ")[1].split("]")[0].split("/"))
        if body.startswith("Trained ") or body.startswith("loss is "):
            if batch is None:
                if body.startswith("Trained "):
                    batch = int(float(body.split(" ")[1]))
                else:
                    batch = done  # the first LocalOptimizer iteration has trained exactly one batch
                lr = float(body.split("Current learning rate is ")[1].split(". ")[0])
            if body.startswith("loss is ") and done >= size:
                epochs = epoch
        elif body.startswith("Epoch finished."):
            epochs = epoch
        elif " is Accuracy(" in body or " is (" in body:
            name = body.split(" is ")[0]
            if " is Accuracy(" in body:
                metrics[name] = float(body.split("accuracy: ")[1].rstrip(")"))
            else:
                metrics[name] = float(body.split("Average Loss: ")[1].rstrip(")"))
            if name == "Top1Accuracy":
                acc, wall = metrics[name], float(line.split("[Wall Clock ")[1].split("s]")[0])
    return dict(accuracy=acc, wall_clock_s=wall, epochs_completed=epochs, batch_size=batch, learning_rate=lr,
                evaluated=evaluated, metrics=metrics)


# name -> (status, failure_kind, epochs the job was asked for or None when the log does not say)
CASES = {
    "dllib-local-optimizer": (Status.OK, None, 2),            # LocalOptimizer, 3 methods, evaluate after
    "dllib-eval-4methods": (Status.OK, None, 2),              # DistriOptimizer, Top1/Top5/Loss/MAE, checkpoints
    "dllib-error-after-training": (Status.OK, None, 1),       # save failed after optimize() returned: note
    "dllib-killed-mid-epoch": (Status.INCOMPLETE, FailureKind.INFRASTRUCTURE, 1),
    "dllib-spark-logs-elsewhere": (Status.OK, None, 2),        # only BigDL's and the program's lines in .out
    "bigdl0-distri-evaluated": (Status.OK, None, 2),          # BigDL 0.x layout, no Spark shutdown lines
    "bigdl0-crlf": (Status.OK, None, 2),
    "bigdl0-killed": (Status.INCOMPLETE, FailureKind.INFRASTRUCTURE, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_format_status_and_figures(name):
    status, kind, _ = CASES[name]
    text, log = text_of(name), parse(FIXTURES / f"{name}.out.gz")
    assert (log.status, log.failure_kind) == (status, kind), log.reason
    r = ref(text)
    assert (log.accuracy, log.wall_clock_s, log.epochs_completed, log.batch_size, log.learning_rate) == (
        r["accuracy"], r["wall_clock_s"], r["epochs_completed"], r["batch_size"], r["learning_rate"])
    assert {m.name: m.value for m in log.final_metrics} == (r["metrics"] if log.accuracy is not None else {})
    summary = log.summary()
    for method, value in r["evaluated"].items():
        assert summary[f"evaluated_{method.lower()}"] == value
    assert parse(FIXTURES / f"{name}.out.gz", full=True).summary() == summary


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_plan_agrees_with_the_log(name):
    status, _, planned = CASES[name]
    assert parse(FIXTURES / f"{name}.out.gz", expected_epochs=planned).status == status
    if status == Status.OK:  # one epoch more than the job ran: training did not finish
        log = parse(FIXTURES / f"{name}.out.gz", expected_epochs=planned + 1)
        if name == "dllib-error-after-training":  # the error after training stopped it short of the plan
            assert log.status == Status.FAILED
        else:
            assert log.status == Status.INCOMPLETE and log.reason.startswith(f"{planned} of {planned + 1} planned")


def test_evaluated_results_are_their_own_fields_beside_the_last_validation():
    log = parse(FIXTURES / "dllib-local-optimizer.out.gz")
    s = log.summary()
    assert (s["evaluated_top1accuracy"], s["evaluated_top5accuracy"]) == (0.546875, 0.875)
    assert s["evaluated_loss"] == 1.4498366117477417 and s["metric_Loss"] == 1.4498366
    assert log.evaluated == (("Top1Accuracy", 0.546875, 128), ("Top5Accuracy", 0.875, 128),
                             ("Loss", 1.4498366117477417, 128))


def test_local_optimizer_iterations_are_read_in_full():
    log = parse(FIXTURES / "dllib-local-optimizer.out.gz", full=True)
    assert len(log.iterations) == 8 and all(i.records == 64 for i in log.iterations)
    assert [i.epoch_records for i in log.iterations[:4]] == [64, 128, 192, 256]
    assert log.epochs == () and len(log.validations) == 2  # LocalOptimizer prints no "Epoch finished"
    assert [m.name for m in log.validations[-1].metrics] == ["Top1Accuracy", "Top5Accuracy", "Loss"]


def test_error_after_training_is_noted():
    log = parse(FIXTURES / "dllib-error-after-training.out.gz")
    assert log.status == Status.OK and any("Mkdirs failed to create /proc/no-such-dir" in n for n in log.notes)


def test_spark_logs_elsewhere_read_with_their_err():
    log = parse(FIXTURES / "dllib-spark-logs-elsewhere.out.gz")
    assert b"Running Spark version" not in gzip.decompress((FIXTURES / "dllib-spark-logs-elsewhere.out.gz").read_bytes())
    assert log.status == Status.OK and log.planned_epochs is None and log.epochs_completed == 2


def test_bigdl0_log_ends_without_spark_shutdown_yet_is_ok():
    text = text_of("bigdl0-distri-evaluated")
    assert "Shutdown hook called" not in text and "Stopped SparkContext" not in text
    assert "com.intel.analytics.bigdl.optim" in text and "2019-11-25 02:06:11 INFO  DistriOptimizer$:474 - [Epoch 2" in text
    assert parse(FIXTURES / "bigdl0-distri-evaluated.out.gz").status == Status.OK


def spark3_layout(text: str) -> str:
    """Spark's log4j-defaults layout (2.x and 3.x): ``25/11/23 15:04:08 INFO SparkContext: Running ...``."""
    out = []
    for line in text.split("\n"):
        if line[:2] == "20" and line[4:5] == "-" and " - " in line:
            date, time_, level = line[2:10].replace("-", "/"), line[11:19], line[20:25].strip()
            cls, msg = line[26:].split(" - ", 1)
            line = f"{date} {time_} {level} {cls.split(':')[0]}: {msg}"
        out.append(line)
    return "\n".join(out)


def test_spark3_layout_and_an_error_line_in_it(tmp_path):
    text = spark3_layout(text_of("lenet-lr2.5-3ep"))
    assert "INFO SparkContext: Running Spark version 3.1.3" in text
    assert parse(write_log(tmp_path, "s3", text)).status == Status.OK
    killed = text_of("lenet-killed")
    lost = "23/11/23 15:06:41 ERROR TaskSchedulerImpl: Lost executor 1 on 10.0.0.7: worker lost\n"
    log = parse(write_log(tmp_path, "s3k", spark3_layout(killed) + lost))
    assert (log.status, log.failure_kind) == (Status.FAILED, FailureKind.INFRASTRUCTURE)
    assert log.reason.startswith("Lost executor 1 on 10.0.0.7")


FINISHED = ["lenet-lr2.5-3ep", "birnn-small-1ep", "dllib-local-optimizer", "dllib-eval-4methods",
            "dllib-spark-logs-elsewhere", "bigdl0-distri-evaluated"]
RAW = {n: text_of(n).encode() for n in FINISHED}


def training_span(raw: bytes) -> tuple[int, int]:
    """From the first iteration line's start to the end of the last training line (the final validation)."""
    first = raw.index(b"[Epoch ")
    last = max(raw.rfind(b"Top1Accuracy is Accuracy("), raw.rfind(b"Epoch finished"))
    return raw.rfind(b"\n", 0, first) + 1, raw.index(b"\n", last)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FINISHED), frac=st.floats(0, 1, exclude_max=True), plan=st.booleans(),
       crlf=st.booleans())
def test_any_prefix_cut_inside_training_is_never_ok(tmp_path, name, frac, plan, crlf):
    raw = RAW[name]
    start, end = training_span(raw)
    k = start + int(frac * (end - start))  # a cut anywhere before the final validation line is whole
    data = raw[:k]
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    p = tmp_path / "cut.out"
    p.write_bytes(data)
    log = parse(p, expected_epochs=CASES.get(name, (0, 0, None))[2] if plan and name in CASES else None)
    assert log.status != Status.OK, (name, k, log.reason)
    assert parse(p, full=True).status == log.status


def test_planned_epochs_from_the_arguments_spark_submit_verbose_echoes(tmp_path):
    """A real `spark-submit --verbose` stderr (childArgs [--model lenet --epochs 3]) beside a log cut right after
    its final validation: the plan decides what the log alone cannot."""
    verbose = (FIXTURES / "spark-submit-verbose.stderr").read_text()
    assert "  childArgs               [--model lenet --epochs 3]" in verbose
    text = text_of("dllib-spark-logs-elsewhere")  # 2 epochs; no Spark line, no app name in the .out
    cut = text[:text.index("\n", text.rindex("Top1Accuracy is Accuracy(")) + 1]
    alone = parse(write_log(tmp_path, "alone", cut))
    assert alone.status == Status.INCOMPLETE and alone.planned_epochs is None
    three = parse(write_log(tmp_path, "three", cut, err=verbose))
    assert (three.status, three.planned_epochs) == (Status.INCOMPLETE, 3)
    assert three.reason.startswith("2 of 3 planned epochs done")
    two = parse(write_log(tmp_path, "two", cut, err=verbose.replace("--epochs 3", "--epochs 2")))
    assert (two.status, two.planned_epochs) == (Status.OK, 2) and two.notes
