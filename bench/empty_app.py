"""The floor of a run: a PySpark application that starts a SparkContext (and waits for its executors) and stops.

Runs as written on every runtime: on the BigDL runtime, the runtime's sitecustomize (cluster/site)
aliases the cloudpickle pyspark 3.1.3 needs on Python 3.11; Spark 4 needs nothing.
"""

from pyspark import SparkContext

if __name__ == "__main__":
    SparkContext.getOrCreate().stop()
