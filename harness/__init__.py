"""harness: experimental designs, job descriptions, the campaign runner and its crash-safe store (`sparkdl submit`),
ingest of existing logs, runtimes, the doctor, and the export to MLflow."""
