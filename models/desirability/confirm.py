"""A confirmation-runs design: replicates at the recommended setting, in harness.submit's format.

The columns are the campaign's design columns: those its ``manifest.json`` declares (any job),
else the built-in BigDL jobs' columns (``sparkdl.runspec.REQUIRED`` and ``OPTIONAL``) found in the
results table. The factors take the recommended values, every other design column its single
value in the ok jobs (a column with several values that is not a factor
is an error: say which value to use by adding it to the factors). A batch size is rounded to a
multiple of the job's total cores (nodes x executors x executor_cores), as BigDL requires.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd

from models.errors import DesirabilityError
from sparkdl.campaign import CampaignDir
from sparkdl.errors import CampaignError
from sparkdl.runspec import OPTIONAL, REQUIRED

CORE_COLUMNS = ("nodes", "executors", "executor_cores")


@dataclass(frozen=True)
class ConfirmationDesign:
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    notes: tuple[str, ...]

    def write(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(self.columns)
            w.writerows(self.rows)
        return p


def _cell(v: object) -> object:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def steps_of(frame: pd.DataFrame) -> dict[str, int]:
    """``{"batch_size": total cores}`` when the ok jobs all ran on one core count, else ``{}``."""
    if not all(c in frame.columns for c in CORE_COLUMNS):
        return {}
    cores = frame[list(CORE_COLUMNS)].apply(pd.to_numeric, errors="coerce").prod(axis=1).dropna().unique()
    return {"batch_size": int(cores[0])} if len(cores) == 1 else {}


def design_columns(results: str | Path) -> tuple[str, ...] | None:
    """The design columns a campaign's manifest declares, or None (a plain CSV or an older campaign)."""
    campaign = CampaignDir.of(results)
    try:
        manifest = campaign.read_manifest() if campaign is not None else None
    except CampaignError:
        return None
    return manifest.factors if manifest is not None else None


def confirmation_design(frame: pd.DataFrame, setting: dict[str, float], jobs: int,
                        columns: Sequence[str] | None = None) -> ConfirmationDesign:
    """``jobs`` replicates (run 1, replicate 1..jobs) at ``setting`` with the table's fixed design columns.

    ``columns``: the design's columns (e.g. from :func:`design_columns`); default the built-in jobs'.
    """
    if jobs < 1:
        raise DesirabilityError(f"--confirmation-jobs must be >= 1, got {jobs}")
    values: dict[str, object] = {}
    notes = []
    legacy = columns is None
    for col in (REQUIRED + OPTIONAL if legacy else tuple(columns)):  # type: ignore[arg-type]
        if col in ("run", "replicate"):
            continue
        if col in setting:
            values[col] = setting[col]
        elif col in frame.columns:
            distinct = frame[col].dropna().unique()
            if len(distinct) != 1:
                raise DesirabilityError(
                    f"design column {col!r} takes {len(distinct)} values in the ok jobs but is not a factor; "
                    f"add it to --factors or analyse one value at a time")
            values[col] = distinct[0].item() if hasattr(distinct[0], "item") else distinct[0]
    missing = [c for c in (REQUIRED if legacy else columns) if c not in values]  # type: ignore[union-attr]
    if missing:
        raise DesirabilityError(f"cannot write a confirmation design: column(s) {', '.join(missing)} are not in the "
                                "results table (it is not a harness campaign)")
    missing = [c for c in CORE_COLUMNS if c not in values]
    if missing:
        raise DesirabilityError(f"cannot write a confirmation design: no {', '.join(missing)} column; harness.submit "
                                "needs the cluster factors nodes, executors, executor_cores")
    if "batch_size" in values:
        cores = 1
        for c in CORE_COLUMNS:
            cores *= int(values[c])  # type: ignore[call-overload]
        batch = float(values["batch_size"])  # type: ignore[arg-type]
        fixed = max(cores, int(math.floor(batch / cores + 0.5)) * cores)  # halves round up
        if fixed != batch:
            notes.append(f"batch_size {batch:g} -> {fixed} (a multiple of the {cores} total cores, as BigDL requires)")
        values["batch_size"] = fixed
    for c in (*CORE_COLUMNS, "epochs"):
        if c in values:
            values[c] = int(round(float(values[c])))  # type: ignore[arg-type]
    cols = ("run", "replicate", *values)
    rows = tuple((1, r, *(_cell(v) for v in values.values())) for r in range(1, jobs + 1))
    return ConfirmationDesign(cols, rows, tuple(notes))
