"""A user's own PySpark job, as written: logistic regression (pyspark.ml) on scikit-learn's 8x8 digits.

Nothing here comes from sparkdl-lab. The harness passes the design's values as arguments (job.toml)
and appends --metrics-out PATH, where the job writes its figures as one JSON object.
"""

import argparse
import json
import time

from pyspark.ml.classification import LogisticRegression
from pyspark.ml.evaluation import MulticlassClassificationEvaluator
from pyspark.ml.linalg import Vectors
from pyspark.sql import SparkSession
from sklearn.datasets import load_digits

p = argparse.ArgumentParser()
p.add_argument("--max-iter", type=int, required=True)
p.add_argument("--reg-param", type=float, required=True)
p.add_argument("--metrics-out", required=True)
args = p.parse_args()

spark = SparkSession.builder.getOrCreate()
digits = load_digits()
rows = [(Vectors.dense(x / 16.0), float(y)) for x, y in zip(digits.data, digits.target)]
train, test = spark.createDataFrame(rows, ["features", "label"]).randomSplit([0.8, 0.2], seed=1)
started = time.monotonic()
model = LogisticRegression(maxIter=args.max_iter, regParam=args.reg_param).fit(train)
trained = time.monotonic()
accuracy = MulticlassClassificationEvaluator(metricName="accuracy").evaluate(model.transform(test))
with open(args.metrics_out, "w") as f:
    json.dump({"accuracy": accuracy, "train_time_s": trained - started,
               "wall_clock_s": time.monotonic() - started,
               "loss_history": list(model.summary.objectiveHistory)}, f)
spark.stop()
