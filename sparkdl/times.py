"""One time vocabulary for every job: which span each time column of results.csv measures.

==================  ==============================================================  ===============================
column              span                                                            measured by
==================  ==============================================================  ===============================
elapsed_s           spark-submit started to spark-submit exited                     the harness, every run
startup_s           submitted to the SparkContext up (the application's start)      the event log (local cluster,
                                                                                    fixed master)
fit_s               the training call, from its start to a model the program holds  the job (a built-in job's
                                                                                    metrics or its times line)
train_loop_s        inside the epochs, where the framework measures it              the framework (BigDL's Wall
                                                                                    Clock, torch's rank 0)
spark_jobs_span_s   the application's first Spark job to its last                   the event log
==================  ==============================================================  ===============================

``wall_clock_s``, the column the cost uses, is ``fit_s`` for every built-in job that is not BigDL
(mlp, torch-lenet, xgboost): the training call as the user waits for it, so a framework factor
compares like with like. For BigDL jobs it stays the log's own Wall Clock (what the papers and
other teams' logs report), which is also their ``train_loop_s``. ``wall_clock_of`` says which span
each run's ``wall_clock_s`` is: ``fit``, ``bigdl-wall-clock`` or ``job`` (a job's own figure that
is not its ``fit_s``).
"""

from __future__ import annotations

from typing import Mapping

#: The time columns, in the order of the docs' table, with what each measures.
TIME_COLUMNS: Mapping[str, str] = {
    "elapsed_s": "submit to exit",
    "startup_s": "submit to the SparkContext up",
    "fit_s": "the training call, from its start to a model the program holds",
    "train_loop_s": "inside the epochs, where the framework measures it",
    "spark_jobs_span_s": "the application's first Spark job to its last (event log)",
}
#: What a run's ``wall_clock_s`` measured (its ``wall_clock_of`` column).
WALL_CLOCK_OF: Mapping[str, str] = {
    "fit": "the training call (fit_s)",
    "bigdl-wall-clock": "BigDL's own Wall Clock in its log (train_loop_s)",
    "job": "the job's own wall_clock_s (not its fit_s)",
}


def describe_wall_clock(rows: list[Mapping[str, object]], job: str | None = None) -> str | None:
    """Which span ``wall_clock_s`` measured, per job, for a report: ``"lenet: BigDL's own Wall Clock ...; ..."``.

    ``rows`` are results.csv rows (a row's job: its ``model`` column, else ``job``); None when no row says.
    """
    spans: dict[str, set[str]] = {}
    for row in rows:
        of = row.get("wall_clock_of")
        if not isinstance(of, str) or not of:
            continue
        name = row.get("model")
        name = str(name) if isinstance(name, str) and name else (job or "the job")
        spans.setdefault(name, set()).add(of)
    if not spans:
        return None
    return "; ".join(f"{name}: {', '.join(WALL_CLOCK_OF.get(s, s) for s in sorted(kinds))}"
                     for name, kinds in sorted(spans.items()))
