"""One summary per model result, rendered three ways (statsmodels' ``Summary``: ``as_text``, ``as_csv``, ``as_json``).

A result (an ANOVA, a response surface, a desirability compromise, a prediction comparison, a queueing model) makes
its :class:`Summary` once: the text lines a person reads, its main table (the CSV: one header, one row per line of
the table) and its document (the JSON: the result's ``to_dict()``). Rendering never recomputes: the three are
views of the same numbers, so the CSV's and the JSON's numbers are the text's, unrounded.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sparkdl.numbers import finite, json_safe

def csv_cell(value: object) -> str:
    """A value as a CSV cell: numbers unrounded (``repr``), empty for None, NaN and the infinities."""
    if value is None:
        return ""
    kind = str(getattr(getattr(value, "dtype", None), "kind", ""))
    if isinstance(value, bool) or kind == "b":
        return str(bool(value))
    if isinstance(value, int) or kind in ("i", "u"):
        return str(int(value))  # type: ignore[call-overload]
    if isinstance(value, float) or kind == "f":
        number = finite(value)
        return "" if number is None else repr(number)
    return str(value)


def num(value: float | None, fmt: str = "{:.4g}") -> str:
    """A number for a text table, formatted with ``fmt``; ``-`` for None, NaN and the infinities."""
    if value is None or (not isinstance(value, int) and finite(value) is None):
        return "-"
    return fmt.format(value)


def p_text(p: float | None) -> str:
    """A p-value for a text table: 3 significant digits, ``1.2e-05`` below 1e-4; ``-`` when there is none."""
    if p is None or finite(p) is None:
        return "-"
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


@dataclass(frozen=True)
class Summary:
    """The text, the main table and the document of one result."""

    lines: tuple[str, ...]
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    doc: Mapping[str, Any] = field(default_factory=dict)

    def as_text(self) -> str:
        return "\n".join(self.lines)

    def as_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows([csv_cell(v) for v in row] for row in self.rows)
        return out.getvalue()

    def as_json(self) -> str:
        return json.dumps(json_safe(dict(self.doc)), indent=2, allow_nan=False)

    def render(self, fmt: str) -> str:
        """``fmt`` one of :data:`sparkdl.options.FORMATS` (text, json, csv)."""
        if fmt == "json":
            return self.as_json()
        if fmt == "csv":
            return self.as_csv().rstrip("\n")
        return self.as_text()


def table(columns: Sequence[str], records: Sequence[Mapping[str, object]]) -> tuple[tuple[str, ...],
                                                                                   tuple[tuple[object, ...], ...]]:
    """Columns and rows of records (dicts), in the columns' order."""
    return tuple(columns), tuple(tuple(r.get(c) for c in columns) for r in records)
