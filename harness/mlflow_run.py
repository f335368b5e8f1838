"""``results = "mlflow"``: the harness makes the design run's MLflow run and hands it to the program.

The program needs nothing from this project: before spark-submit starts, the harness creates one
MLflow run per attempt and puts it in the driver's environment::

    MLFLOW_TRACKING_URI    the campaign's tracker: --mlflow URI, else sqlite:///OUT/mlflow.db
    MLFLOW_EXPERIMENT_ID   the campaign's experiment (with --mlflow: the one the export fills)
    MLFLOW_EXPERIMENT_NAME
    MLFLOW_RUN_ID          the run: mlflow.log_metric, mlflow.start_run() and autolog all log into it

The run is nested under the campaign's run (MLflow's ``mlflow.parentRunId`` tag), in either store:
the run named "campaign" that the export fills (:func:`harness.mlflow_export.campaign_run`).

After the program exited, the run's metrics are read back through MLflow's client: each metric's
latest value becomes a column of results.csv (through the same rules as a json job's figures:
:func:`harness.metrics.parse_metrics`; a name MLflow allows but a column cannot hold, e.g.
``val/acc``, is written ``val_acc``), and every metric logged at more than one step becomes a
per-epoch figure: ``runs/<key>/epochs.csv`` (one row per step) and the campaign's ``epochs.csv``
(:mod:`harness.runepochs`, as for a ``results = "output"`` job's epochs).
A step counts as an epoch as logged; when a program counts its steps from 0, epoch = step + 1.

Without ``--mlflow`` the store is SQLite in the campaign folder (``mlflow.db``, artifacts in
``mlflow-artifacts/``): MLflow's file store is in maintenance mode and refuses to open. The job's
runtime needs MLflow itself (the built-in spark4 runtime has it). With ``--mlflow`` the run is the
design run's run in the campaign's experiment: the live export fills it (design values, the
harness's figures, the logs) instead of making another (:mod:`harness.mlflow_export`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from harness.errors import HarnessError
from harness.metrics import Metrics, parse_metrics
from sparkdl.campaign import CampaignDir
from sparkdl.errors import EXIT_CLUSTER

if TYPE_CHECKING:
    from harness.mlflow_export import LiveExport

LOCAL_STORE = "mlflow.db"
LOCAL_ARTIFACTS = "mlflow-artifacts"
#: The tag that marks a run the harness made for a program (the export fills it instead of replacing it).
PROGRAM = "sparkdl.program_run"
#: The column naming the MLflow run of a run (the export finds the run by it).
RUN_ID_COLUMN = "mlflow_run_id"
_BAD_CHARS = re.compile(r"[^A-Za-z0-9_.]")


class ProgramRunError(HarnessError):
    """The campaign's MLflow cannot make the run a program needs (not installed, tracker down)."""

    exit_code = EXIT_CLUSTER


@dataclass(frozen=True)
class ProgramRun:
    """One attempt's MLflow run, as the program sees it."""

    uri: str
    run_id: str
    experiment_id: str
    experiment_name: str

    def environ(self) -> dict[str, str]:
        """What the driver's environment gets: MLflow's client reads these (fluent API and autolog)."""
        return {"MLFLOW_TRACKING_URI": self.uri, "MLFLOW_RUN_ID": self.run_id,
                "MLFLOW_EXPERIMENT_ID": self.experiment_id, "MLFLOW_EXPERIMENT_NAME": self.experiment_name}


@dataclass(frozen=True)
class ProgramFigures:
    """What a program logged: its figures (the columns), its per-step histories and the rows of its epochs.csv."""

    metrics: Metrics
    histories: Mapping[str, tuple[tuple[int, float], ...]]

    def epoch_rows(self) -> list[dict[str, object]]:
        """One row per step of the metrics logged at more than one step: epoch, step, each metric's value."""
        series = {name: points for name, points in self.histories.items() if len({s for s, _ in points}) > 1}
        if not series:
            return []
        steps = sorted({s for points in series.values() for s, _ in points})
        shift = 1 if steps[0] == 0 else 0
        rows = []
        for step in steps:
            row: dict[str, object] = {"epoch": step + shift, "step": step}
            for name, points in series.items():
                values = [v for s, v in points if s == step]
                row[name] = values[-1] if values else None
            rows.append(row)
        return rows


def column_name(metric: str) -> str:
    """A metric's column: MLflow allows ``/``, ``-``, blanks; a column is letters, digits, ``_`` and ``.``."""
    name = _BAD_CHARS.sub("_", metric)[:64]
    return name if name and not name[0].isdigit() and name[0] != "." else f"m_{name}"[:64]


def local_uri(folder: CampaignDir) -> str:
    """The campaign's own SQLite store (no --mlflow)."""
    return f"sqlite:///{(folder.path / LOCAL_STORE).resolve()}"


class ProgramRuns:
    """Makes the program's runs and reads them back, in one tracker and one experiment."""

    def __init__(self, folder: CampaignDir, tracker: "LiveExport | None" = None,
                 meta: Mapping[str, object] | None = None) -> None:
        from harness.mlflow_export import QUIET, require_mlflow

        for name, value in QUIET.items():
            os.environ.setdefault(name, value)
        mlflow = require_mlflow()
        self.folder, self.tracker = folder, tracker
        self.uri = tracker.uri if tracker is not None else local_uri(folder)
        self.client = tracker.exporter.client if tracker is not None else mlflow.MlflowClient(tracking_uri=self.uri)
        self._meta = dict(meta or {})
        self._experiment: tuple[str, str] | None = None

    def experiment(self) -> tuple[str, str]:
        """(id, name): with --mlflow the export's experiment of this campaign; else one named after the folder."""
        if self._experiment is not None:
            return self._experiment
        if self.tracker is not None:
            from harness.mlflow_export import CampaignFacts, check_reachable

            exporter = self.tracker.exporter
            check_reachable(self.uri)
            self._experiment = exporter.experiment_id(CampaignFacts.read(self.folder, self._meta, exporter.cost))
            return self._experiment
        name = self.folder.path.resolve().name
        found = self.client.get_experiment_by_name(name)
        if found is None:
            artifacts = (self.folder.path / LOCAL_ARTIFACTS).resolve()
            eid = self.client.create_experiment(name, artifact_location=artifacts.as_uri())
        else:
            eid = found.experiment_id
        self._experiment = (str(eid), name)
        return self._experiment

    def parent(self, experiment_id: str) -> str:
        """The id of the campaign's run, the parent of the design runs (made FINISHED when new in the campaign's
        own store: nothing else ends it there; the export ends it in a tracker)."""
        from harness.mlflow_export import campaign_run, epoch_ms

        run = campaign_run(self.client, experiment_id, start_ms=epoch_ms(str(self._meta.get("created") or ""), 0))
        if self.tracker is None and run.info.status == "RUNNING":
            self.client.set_terminated(run.info.run_id, "FINISHED")
        return str(run.info.run_id)

    def open(self, key: str, attempt: int) -> ProgramRun:
        """A new run for one attempt of the design run ``key``, nested under the campaign's run (RUNNING until the
        program or the harness ends it)."""
        from harness.mlflow_export import KEY, KIND, PARENT

        try:
            eid, name = self.experiment()
            run = self.client.create_run(eid, run_name=f"run {key}",
                                         tags={KIND: "run", KEY: key, PROGRAM: "1", "attempt": str(attempt),
                                               PARENT: self.parent(eid)})
        except Exception as e:  # noqa: BLE001 - MLflow's and requests' errors: one line, the campaign stops
            raise ProgramRunError(f"MLflow at {self.uri} could not make the run the job logs to "
                                  f"({str(e).splitlines()[0][:300] if str(e) else type(e).__name__}): "
                                  "start the tracker (or leave --mlflow out for the campaign's own store) and "
                                  "continue with --resume") from None
        return ProgramRun(self.uri, run.info.run_id, eid, name)

    def read(self, run: ProgramRun, reserved: set[str], design: Mapping[str, object]) -> ProgramFigures:
        """The run's metrics as figures (latest values) and histories; a run with none is a problem, not an error."""
        data = self.client.get_run(run.run_id).data
        if not data.metrics:
            return ProgramFigures(Metrics(problem=f"the job logged no metrics to its MLflow run {run.run_id} "
                                                  f"({self.uri}): log them with mlflow.log_metric or autolog"), {})
        latest: dict[str, float] = {}  # MLflow's latest: the value at the largest step, last logged
        histories: dict[str, tuple[tuple[int, float], ...]] = {}
        for metric in sorted(data.metrics):
            name = column_name(metric)
            latest[name] = data.metrics[metric]
            points = sorted((int(m.step), float(m.value)) for m in self.client.get_metric_history(run.run_id, metric))
            if points:
                histories[name] = tuple(points)
        return ProgramFigures(parse_metrics(json.dumps(latest), reserved, design), histories)

    def end(self, run: ProgramRun, ok: bool) -> None:
        """End a run the program left running (it crashed, or never called end_run): FINISHED or FAILED."""
        try:
            info = self.client.get_run(run.run_id).info
            if info.status == "RUNNING" or (not ok and info.status == "FINISHED"):
                self.client.set_terminated(run.run_id, "FINISHED" if ok else "FAILED")
        except Exception:  # noqa: BLE001 - the figures are read; a run's status in MLflow is not worth a failure
            pass

