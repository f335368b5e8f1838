"""What a plan reads: the design (a design CSV, a results CSV or a campaign folder) and its pilot.

A table that holds the response is a pilot: its analysed rows (status ok, see
:mod:`models.results`) are the current design, and give the noise and the run times. A table
without it is a design only (``harness.design`` output): its rows are the runs planned, and the
noise is given (``--cv``) or read from a separate ``--pilot``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from models.errors import PlanError
from models.power.compute import WHOLE_PLOT_COLUMN
from models.results import (ACCURACY_COLUMN, COST_COLUMN, TIME_COLUMN, build_table, choose_factors, factor_notes,
                            read_csv, set_aside_note)


@dataclass(frozen=True, eq=False)
class PlanInput:
    """The design's rows and factors, and the pilot's analysed rows (None when there is no pilot)."""

    design: pd.DataFrame
    factors: tuple[str, ...]
    source: str
    pilot: pd.DataFrame | None
    pilot_source: str | None
    notices: tuple[str, ...] = ()


def has_response(frame: pd.DataFrame, response: str) -> bool:
    """True when the table holds the response (or, for ``cost``, the columns it is computed from)."""
    if response in frame.columns:
        return True
    return response == COST_COLUMN and TIME_COLUMN in frame.columns and ACCURACY_COLUMN in frame.columns


def _pilot(path: str | Path, frame: pd.DataFrame, csv: Path, factors: Sequence[str] | None,
           response: str) -> tuple[pd.DataFrame, tuple[str, ...], tuple[str, ...]]:
    choice = choose_factors(frame.drop(columns=[WHOLE_PLOT_COLUMN], errors="ignore"), factors, csv, response)
    table = build_table(frame, factors=choice.factors, response=response, source=str(csv), csv_path=csv,
                        compute_cost=response == COST_COLUMN)
    table.require_rows()
    notes = [f"pilot {path}: {table.describe_dropped()}", *factor_notes(choice)]
    if (aside := set_aside_note(table.n_read, table.dropped)) is not None:
        notes.append(aside)
    return table.frame, choice.factors, tuple(notes)


def read_inputs(path: str | Path, *, response: str, factors: Sequence[str] | None = None,
                pilot: str | Path | None = None) -> PlanInput:
    """The design and its pilot (see the module docstring)."""
    csv, frame = read_csv(path)
    if has_response(frame, response):
        if pilot is not None:
            raise PlanError(f"{path} holds {response!r} already (it is a pilot): give it alone, or --pilot with a "
                            "design CSV")
        rows, facs, notes = _pilot(path, frame, csv, factors, response)
        return PlanInput(rows, facs, str(csv), rows, str(csv), notes)
    choice = choose_factors(frame.drop(columns=[WHOLE_PLOT_COLUMN], errors="ignore"), factors, csv, response)
    notes = factor_notes(choice)
    if not len(frame):
        raise PlanError(f"{path} has no rows: a design needs one row per run")
    if pilot is None:
        return PlanInput(frame, choice.factors, str(csv), None, None, notes)
    pcsv, pframe = read_csv(pilot)
    if not has_response(pframe, response):
        raise PlanError(f"--pilot {pilot} has no {response!r} column: pick its response with --response")
    missing = [f for f in choice.factors if f not in pframe.columns]
    if missing:
        raise PlanError(f"--pilot {pilot} lacks the design's factor column(s) {missing}")
    rows, _, pnotes = _pilot(pilot, pframe, pcsv, choice.factors, response)
    return PlanInput(frame, choice.factors, str(csv), rows, str(pcsv), notes + pnotes)
