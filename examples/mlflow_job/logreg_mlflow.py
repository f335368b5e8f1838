"""A user's own PySpark job that logs to MLflow, as written: logistic regression on scikit-learn's 8x8 digits.

Nothing here comes from sparkdl-lab, and nothing names a tracker, an experiment or a run: MLflow's
client reads them from the environment (MLFLOW_TRACKING_URI, MLFLOW_RUN_ID), which the harness
sets for a job with results = "mlflow". Run alone, the same script logs to MLflow's default store.
"""

import argparse
import time

import mlflow
import mlflow.pyspark.ml
from pyspark.ml.classification import LogisticRegression
from pyspark.ml.evaluation import MulticlassClassificationEvaluator
from pyspark.ml.linalg import Vectors
from pyspark.sql import SparkSession
from sklearn.datasets import load_digits

p = argparse.ArgumentParser()
p.add_argument("--max-iter", type=int, required=True)
p.add_argument("--reg-param", type=float, required=True)
args = p.parse_args()

mlflow.pyspark.ml.autolog(log_models=False)  # the estimator's params, and the evaluator's metric after fit
spark = SparkSession.builder.getOrCreate()
digits = load_digits()
rows = [(Vectors.dense(x / 16.0), float(y)) for x, y in zip(digits.data, digits.target)]
train, test = spark.createDataFrame(rows, ["features", "label"]).randomSplit([0.8, 0.2], seed=1)
with mlflow.start_run():
    started = time.monotonic()
    model = LogisticRegression(maxIter=args.max_iter, regParam=args.reg_param).fit(train)
    mlflow.log_metric("fit_s", time.monotonic() - started)
    for step, loss in enumerate(model.summary.objectiveHistory):
        mlflow.log_metric("loss", loss, step=step)
    accuracy = MulticlassClassificationEvaluator(metricName="accuracy").evaluate(model.transform(test))
    mlflow.log_metric("accuracy", accuracy)
spark.stop()
