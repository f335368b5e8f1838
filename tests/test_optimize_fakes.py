"""Test doubles for optimize/: a backend and a runner that write BigDL-like logs instead of running Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Sequence

from cluster.sparkenv import SparkEnv
from harness.runner import Completed
from sparkdl.runspec import RunSpec

LOG = """2026-11-23 15:04:08 INFO  SparkContext:57 - Submitted application: {model} lr={lr} batch={batch} epochs={epochs}
2026-11-23 15:04:10 INFO  StandaloneSchedulerBackend:57 - Connected to Spark cluster with app ID app-20261123150410-{n:04d}
26-11-23 15:04:36 [Thread-5] INFO  DistriOptimizer$:432 - [Epoch 1 64/256][Iteration 1][Wall Clock 1.5s] Trained {batch}.0 records in 1.5 seconds. Throughput is 42.1 records/second. Loss is 2.30. Sequential53eda5ac's hyper parameters: Current learning rate is {used}. Current dampening is 1.7976931348623157E308.
"""
EPOCH = """26-11-23 15:04:44 [Thread-5] INFO  DistriOptimizer$:474 - [Epoch {e} 256/256][Iteration 4][Wall Clock {wall}s] Epoch finished. Wall clock time is {ms} ms
26-11-23 15:04:44 [Thread-5] INFO  DistriOptimizer$:112 - [Epoch {e} 256/256][Iteration 4][Wall Clock {wall}s] Validate model...
26-11-23 15:04:44 [Thread-5] INFO  DistriOptimizer$:184 - [Epoch {e} 256/256][Iteration 4][Wall Clock {wall}s] Top1Accuracy is Accuracy(correct: {correct}, count: 10000000, accuracy: {acc})
"""


def epoch_text(e: int, wall: float, ms: float, acc: float) -> str:
    """One epoch's end and validation lines; correct/count equals the accuracy, as BigDL prints it."""
    return EPOCH.format(e=e, wall=wall, ms=ms, acc=acc, correct=round(acc * 10_000_000))


END = "jobs.train: {model} trained 256 digits for {epochs} epoch(s) in 20.4 s (validated on 128)\n"

#: (lr, batch, epochs, seed) -> (wall clock seconds, accuracy)
Outcome = Callable[[float, int, int, int], tuple[float, float]]


def fake_env() -> SparkEnv:
    p = Path("/nonexistent")
    return SparkEnv(python=p, java_home=p, spark_home=p, class_path=(p / "a.jar", p / "b.jar"))


def _arg(argv: Sequence[str], name: str) -> str:
    return argv[list(argv).index(name) + 1]


class FakeRunner:
    """Writes the log a job would; ``lie`` maps an asked learning rate to the one the log shows."""

    def __init__(self, outcome: Outcome, lie: Mapping[float, float] | None = None, fail: set[float] | None = None):
        self.outcome, self.lie, self.fail = outcome, dict(lie or {}), set(fail or ())
        self.argvs: list[list[str]] = []

    def run(self, argv, env, out: Path, err: Path, timeout, on_start=None) -> Completed:
        # on_start (the pid hook) is not called: there is no process, and a recorded pid could be killed on resume
        self.argvs.append(list(argv))
        lr, batch = float(_arg(argv, "--learning-rate")), int(_arg(argv, "--batch-size"))
        epochs, seed, model = int(_arg(argv, "--epochs")), int(_arg(argv, "--seed")), _arg(argv, "--model")
        err.write_text("")
        text = LOG.format(model=model, lr=lr, batch=batch, epochs=epochs, n=len(self.argvs),
                          used=self.lie.get(lr, lr))
        if lr in self.fail:
            out.write_text(text + "Exception in thread main java.lang.OutOfMemoryError: Java heap space\n")
            return Completed(tuple(argv), 1, 1.0)
        wall, acc = self.outcome(lr, batch, epochs, seed)
        for e in range(1, epochs + 1):
            text += epoch_text(e=e, wall=wall * e / epochs, ms=wall * 1000 / epochs, acc=acc)
        out.write_text(text + END.format(model=model, epochs=epochs))
        return Completed(tuple(argv), 0, wall + 5.0)


class FakeBackend:
    master_url = "spark://127.0.0.1:7077"

    def __init__(self) -> None:
        self.opened: list[RunSpec] = []
        self.prepared: list[RunSpec] = []
        self.closed = False

    def open(self, specs, runtime="bigdl"):
        self.opened = list(specs)

    def check(self, spec):
        return []

    def prepare(self, spec):
        self.prepared.append(spec)

    def describe(self):
        return {"backend": "fake"}

    def find_app(self, name):
        return None

    def close(self):
        self.closed = True


#: (lr, batch, epoch, seed) -> (wall clock at that epoch, accuracy at that epoch)
EpochOutcome = Callable[[float, int, int, int], tuple[float, float]]


class WatchingFakeRunner:
    """Writes a job's log epoch by epoch and, like ProcessRunner, asks ``watch`` after each: a reason stops it.

    ``elapsed_s`` is the wall clock of the last epoch written plus 5 s of start-up."""

    def __init__(self, outcome: EpochOutcome) -> None:
        self.outcome = outcome
        self.watch = None
        self.argvs: list[list[str]] = []
        self.stopped: list[str] = []

    def run(self, argv, env, out: Path, err: Path, timeout, on_start=None) -> Completed:
        from harness.runner import write_prune_line

        self.argvs.append(list(argv))
        lr, batch = float(_arg(argv, "--learning-rate")), int(_arg(argv, "--batch-size"))
        epochs, seed, model = int(_arg(argv, "--epochs")), int(_arg(argv, "--seed")), _arg(argv, "--model")
        err.write_text("")
        out.write_text(LOG.format(model=model, lr=lr, batch=batch, epochs=epochs, n=len(self.argvs), used=lr))
        wall = 0.0
        for e in range(1, epochs + 1):
            wall, acc = self.outcome(lr, batch, e, seed)
            with open(out, "a") as f:
                f.write(epoch_text(e=e, wall=wall, ms=wall * 1000 / e, acc=acc))
            reason = self.watch(out) if self.watch is not None else None
            if reason:
                self.stopped.append(reason)
                write_prune_line(out, reason)
                return Completed(tuple(argv), -15, wall + 5.0, stopped=reason)
        with open(out, "a") as f:
            f.write(END.format(model=model, epochs=epochs))
        return Completed(tuple(argv), 0, wall + 5.0)
