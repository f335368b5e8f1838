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

from pathlib import Path
from typing import Mapping

from logparse.epochlines import read_times

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
#: Columns this module writes for a run (a job's figure of these names is not the harness's).
HARNESS_TIMES = ("startup_s", "wall_clock_of")


def bigdl_times(out_log: Path, wall_clock_s: float | None) -> dict[str, object]:
    """A BigDL run's times: ``fit_s`` from the job's ``sparkdl-times`` line, ``train_loop_s`` = the log's Wall Clock."""
    times: dict[str, object] = dict(read_times(out_log))
    if wall_clock_s is not None:
        times["train_loop_s"] = wall_clock_s
    times["wall_clock_of"] = "bigdl-wall-clock"
    return times


def wall_clock_of(figures: Mapping[str, object]) -> str | None:
    """``fit`` when a job's ``wall_clock_s`` is its ``fit_s``, ``job`` when it is another span, None without one."""
    wall, fit = figures.get("wall_clock_s"), figures.get("fit_s")
    if wall is None:
        return None
    return "fit" if fit is not None and float(fit) == float(wall) else "job"  # type: ignore[arg-type]


def startup_s(phase_submit_s: object) -> float | None:
    """Submit to the SparkContext up: the event log's application start less the harness's submit instant."""
    return None if phase_submit_s is None else round(float(phase_submit_s), 3)  # type: ignore[arg-type]


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
