"""Applied at start-up to every Python process of a job (driver and executors); see cluster/sparkenv.py.

pyspark 3.1.3's bundled cloudpickle cannot pickle Python 3.11 functions (``PicklingError: Could
not serialize object: IndexError: tuple index out of range``). The installed cloudpickle is
aliased as ``pyspark.cloudpickle`` before anything imports pyspark, so a user's script runs as
written. This directory is put first on ``PYTHONPATH`` of spark-submit and of the executors
(``spark.executorEnv.PYTHONPATH``) by :meth:`cluster.sparkenv.SparkEnv.environ`.
It imports nothing from the project, and does nothing when cloudpickle is missing.
"""

import sys

if "pyspark" not in sys.modules:
    try:
        import cloudpickle
    except ImportError:
        pass
    else:
        sys.modules["pyspark.cloudpickle"] = cloudpickle
