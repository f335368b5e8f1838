"""harness: experimental designs, job descriptions, the campaign runner and its crash-safe store (`sparkdl submit`),
ingest of existing logs, runtimes, the doctor, and the export to MLflow. The command lines of ingest, history,
runtime and doctor are in ``cli`` (``cli/ingest.py``, ...); submit, mlflow and design (``design/__main__.py``) are
command modules themselves."""
