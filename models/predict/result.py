"""The result of a model comparison (:func:`models.predict.compare.compare`): its rows, ``to_dict`` and one
:class:`~models.summary.Summary` (the text table, the rows as CSV, the document as JSON)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from models.predict.ceiling import NoiseCeiling
from models.predict.generic import PowerLawFit
from models.predict.scaleout import Advice, ScaleOut
from models.summary import Summary


@dataclass(frozen=True)
class ComparisonRow:
    """One model on one split; ``error`` is set (and the metrics are NaN) when the fit failed."""

    model: str
    split: str
    n_train: int
    n_test: int
    r2: float
    mape: float
    mse: float
    fit_seconds: float
    error: str | None = None
    #: R^2 / noise_ceiling_r2 (NaN when no ceiling is known).
    r2_share_of_ceiling: float = float("nan")
    #: Share of the test rows inside their CV+ interval at ``interval_level`` (NaN: no intervals).
    coverage: float = float("nan")
    interval_level: float = float("nan")
    mean_interval_width: float = float("nan")
    warning: str | None = None
    #: Why the training rows cannot determine the model (a scaling curve), when they cannot: no point estimate.
    not_identified: str | None = None

    @property
    def extrapolates(self) -> bool:
        """False for a tree model on the extrapolate split (it repeats the edge of its training range)."""
        return not (self.split == "extrapolate" and (self.warning or "").startswith("cannot extrapolate"))

    def text(self) -> str:
        """The row of the text table: R^2 also as a share of the ceiling, coverage, ``!`` for a warning."""
        head = f"{self.model:<9} {self.split:<12} {self.n_train:>7} {self.n_test:>6}"
        if self.error:
            return f"{head}  failed: {self.error}"
        if self.not_identified:
            return f"{head}  {self.not_identified}"
        if not math.isfinite(self.r2_share_of_ceiling):
            share = f"{'-':>7}"
        else:
            share = f"{100 * self.r2_share_of_ceiling:>6.0f}%" if self.r2 >= 0 else f"{'<0':>7}"
        cover = f"{100 * self.coverage:>7.0f}%" if math.isfinite(self.coverage) else f"{'-':>8}"
        return (f"{head} {self.r2:>8.3f} {share} {100 * self.mape:>7.1f}% {self.mse:>11.4g} {cover} "
                f"{self.fit_seconds:>7.2f}{'  !' if self.warning else ''}")


#: The CSV's columns: one row per model and split (the fields of :class:`ComparisonRow`).
COLUMNS: tuple[str, ...] = tuple(ComparisonRow.__dataclass_fields__)


@dataclass(frozen=True)
class Comparison:
    """All rows, each split's description, the generic model's fit per split, and the noise ceiling."""

    target: str
    rows: tuple[ComparisonRow, ...]
    splits: dict[str, str]
    generic_fits: dict[str, PowerLawFit] = field(default_factory=dict)
    ceiling: NoiseCeiling | None = None
    scaleout: ScaleOut | None = None
    #: Why there is no scale-out analysis on the extrapolate split (None when there is one, or no such split).
    scaleout_note: str | None = None
    #: The scale-out at ``--at`` on the whole table, and the next run to make (``--next``).
    at: ScaleOut | None = None
    advice: Advice | None = None

    def ranking(self, split: str) -> list[ComparisonRow]:
        """The rows of ``split`` that have an estimate, best MAPE first; on the extrapolate split the models that
        cannot extrapolate come after every model that can, whatever their MAPE."""
        rows = [r for r in self.rows if r.split == split and not r.error and not r.not_identified
                and math.isfinite(r.mape)]
        return sorted(rows, key=lambda r: (not r.extrapolates, r.mape))

    def ranking_line(self, split: str) -> str | None:
        rows = self.ranking(split)
        if not rows:
            return None
        listed = ", ".join(f"{i}. {r.model} {100 * r.mape:.1f} %" + ("" if r.extrapolates else " (cannot extrapolate)")
                           for i, r in enumerate(rows, 1))
        tail = "; trees last: they cannot extrapolate" if split == "extrapolate" else ""
        return f"ranking on the {split} split (MAPE on its held-out rows{tail}): {listed}"

    @property
    def warnings(self) -> list[str]:
        """'model on the split split: warning' for every flagged row."""
        return [f"{r.model} on the {r.split} split: {r.warning}" for r in self.rows if r.warning]

    def readings(self) -> dict[str, list[str]]:
        """The generic model's plain-language notes per split, withheld for a degenerate fit (the fit's own
        problems) or a split where it scored R^2 < 0."""
        r2 = {r.split: r.r2 for r in self.rows if r.model == "generic"}
        out = {}
        for kind, fit in self.generic_fits.items():
            if not fit.degenerate and kind in r2 and r2[kind] < 0:
                out[kind] = [f"reading withheld: R^2 {r2[kind]:.3g} < 0 on this split, the formula does not describe "
                             "the held-out rows"]
            else:
                out[kind] = fit.scaling_notes()
        return out

    def text(self, n_rows: int) -> str:
        """The noise ceiling, the comparison as an aligned table (R^2 also as a share of the ceiling, interval
        coverage, ! for a warning), the warnings, then the generic model's fitted formula and its reading;
        ``n_rows``: the rows the models were compared on."""
        lines = [f"target {self.target}, {n_rows} rows"]
        lines += [f"  {kind} split: {description}" for kind, description in self.splits.items()]
        if self.ceiling is not None:
            lines.append(f"  {self.ceiling.describe()}")
        levels = {r.interval_level for r in self.rows if math.isfinite(r.interval_level)}
        cover = f"cov@{100 * levels.pop():.0f}%" if len(levels) == 1 else "coverage"
        header = (f"{'model':<9} {'split':<12} {'n_train':>7} {'n_test':>6} {'R^2':>8} {'%ceil':>7} {'MAPE':>8} "
                  f"{'MSE':>11} {cover:>8} {'fit_s':>7}")
        lines += ["", header, "-" * len(header)]
        lines += [r.text() for r in self.rows]
        ranked = [line for kind in self.splits if (line := self.ranking_line(kind))]
        if ranked:
            lines += [""] + ranked
        if self.warnings:
            lines += ["", "warnings (! above):"] + [f"  {w}" for w in self.warnings]
        notes = self.readings()
        for kind, fit in self.generic_fits.items():
            how = (f"{fit.iterations} DE generations" if fit.search == "de"
                   else f"normal-form exponents, {fit.iterations} coordinate sweeps, {fit.evaluations} CV evaluations")
            lines += ["", f"generic model, {kind} split ({how}, {fit.fit_seconds:.2f} s):", f"  {fit.formula()}"]
            lines += [f"  {note}" for note in notes[kind]]
            if fit.dropped:
                lines.append(f"  constant in training, left out: {', '.join(fit.dropped)}")
        for analysis in (self.scaleout, self.at):
            if analysis is not None:
                lines += [""] + analysis.text()
        if self.scaleout_note:
            lines += ["", self.scaleout_note]
        if self.advice is not None:
            lines += [""] + self.advice.text()
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The comparison as a document (NaN stays NaN here: the renderings make it null)."""
        ceiling = self.ceiling
        notes = self.readings()
        return {
            "target": self.target,
            "noise_ceiling_r2": ceiling.r2 if ceiling is not None else None,
            "noise_ceiling": None if ceiling is None else {
                **asdict(ceiling), "known": ceiling.known, "text": ceiling.describe(),
            },
            "splits": self.splits,
            "rows": [asdict(r) for r in self.rows],
            "warnings": self.warnings,
            "ranking": {kind: [r.model for r in self.ranking(kind)] for kind in self.splits},
            "scaleout": None if self.scaleout is None else self.scaleout.to_dict(),
            "scaleout_note": self.scaleout_note,
            "at": None if self.at is None else self.at.to_dict(),
            "next": None if self.advice is None else self.advice.to_dict(),
            "generic": {
                kind: {**asdict(fit), "formula": fit.formula(), "notes": notes[kind], "degenerate": fit.degenerate}
                for kind, fit in self.generic_fits.items()
            },
        }

    def summary(self, n_rows: int) -> Summary:
        """The text (:meth:`text`), the rows as the CSV, :meth:`to_dict` as the JSON."""
        rows = tuple(tuple(getattr(r, c) for c in COLUMNS) for r in self.rows)
        return Summary(tuple(self.text(n_rows).split("\n")), COLUMNS, rows, self.to_dict())
