"""The harness's side of the time vocabulary (:mod:`sparkdl.times`): a BigDL run's times, and which span a job's
``wall_clock_s`` is."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from logparse.epochlines import read_times

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
