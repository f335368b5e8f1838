"""The floor of a run: a PySpark application that starts a SparkContext (and waits for its executors) and stops."""

import sys

import cloudpickle

sys.modules["pyspark.cloudpickle"] = cloudpickle  # as jobs/train.py (cluster.sparkenv.alias_cloudpickle)

from pyspark import SparkContext  # noqa: E402

if __name__ == "__main__":
    SparkContext.getOrCreate().stop()
