"""Optional report sections: result files that other tools may leave in a campaign directory.

A section appears only when its file exists. To add one, register an :class:`ExtraSection`::

    register(ExtraSection("bs_search", "Batch-size search", "bs_search.csv",
                          "What the batch-size search tried.", x="batch_size", log_x=True))

It renders the file's best row (lowest value of the first ``measures`` column present), a plot
of that measure against ``x`` when both columns exist, and the table itself (first
``MAX_ROWS`` rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from report import html as h

MAX_ROWS = 100
MEASURES = ("cost", "normalized_time", "objective", "wall_clock_s")


@dataclass(frozen=True)
class ExtraSection:
    """A CSV in the campaign directory and how to show it."""

    key: str
    title: str
    filename: str
    intro: str
    x: str | None = None
    log_x: bool = False
    log_y: bool = True
    measures: tuple[str, ...] = MEASURES
    chosen: str | None = None  # a 0/1 column marking the row the tool chose
    image: str | None = None  # a PNG the tool wrote beside the CSV, shown instead of a drawn plot


REGISTRY: list[ExtraSection] = [
    ExtraSection("lr_search", "Learning-rate search", "lr_search.csv",
                 "Each row is one learning rate tried by the search (sparkdl lr), in the order "
                 "tried, with the cost measured over its replications.", x="learning_rate", log_x=True,
                 measures=("mean_cost",) + MEASURES, chosen="best", image="lr_search.png"),
]


def register(section: ExtraSection) -> None:
    """Add a section (or replace the one with the same key)."""
    REGISTRY[:] = [s for s in REGISTRY if s.key != section.key] + [section]


def present(directory: Path | None) -> list[tuple[ExtraSection, Path]]:
    """The registered sections whose file is in ``directory``."""
    if directory is None or not directory.is_dir():
        return []
    return [(s, directory / s.filename) for s in REGISTRY if (directory / s.filename).is_file()]


def _plot(frame: pd.DataFrame, section: ExtraSection, measure: str) -> Figure | None:
    if section.x is None or section.x not in frame.columns:
        return None
    x = pd.to_numeric(frame[section.x], errors="coerce").to_numpy(dtype=float)
    y = pd.to_numeric(frame[measure], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return None
    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.scatter(x[ok], y[ok], color="tab:blue", zorder=3)
    i = int(np.argmin(np.where(ok, y, np.inf)))
    ax.scatter([x[i]], [y[i]], color="tab:red", s=60, zorder=4, label=f"lowest: {section.x} = {x[i]:g}")
    if section.log_x and np.all(x[ok] > 0):
        ax.set_xscale("log")
    if section.log_y and np.all(y[ok] > 0):
        ax.set_yscale("log")
    ax.set_xlabel(section.x)
    ax.set_ylabel(measure)
    ax.legend(loc="best")
    ax.set_title(section.title)
    return fig


def render(section: ExtraSection, path: Path) -> str:
    """The section's body HTML; an unreadable file becomes a notice, not an error."""
    try:
        frame = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        return h.notice(f"{path.name} could not be read ({exc}); this section is empty")
    parts = [h.para(section.intro), h.para(f"From {path.name}: {len(frame)} row(s).", "small")]
    measure = next((m for m in section.measures if m in frame.columns), None)
    if measure is not None and pd.to_numeric(frame[measure], errors="coerce").notna().any():
        values = pd.to_numeric(frame[measure], errors="coerce")
        lowest = values.idxmin()
        shown = [c for c in frame.columns if c != section.chosen]

        def describe(row: pd.Series) -> str:
            return ", ".join(f"{c} = {h.level(row[c])}" for c in shown)

        marked = []
        if section.chosen in frame.columns:
            marked = list(frame.index[pd.to_numeric(frame[section.chosen], errors="coerce") == 1])
        if marked == [lowest]:
            parts.append(h.para(f"Chosen by the tool, and the lowest {measure}: {describe(frame.loc[lowest])}."))
        else:
            parts.append(h.para(f"Lowest {measure}: {describe(frame.loc[lowest])}."))
            parts += [h.para(f"Chosen by the tool: {describe(frame.loc[i])}.") for i in marked]
        png = path.with_name(section.image) if section.image else None
        if png is not None and png.is_file():
            parts.append(h.image_file(png, section.title, f"{png.name}, as written by the tool."))
        else:
            fig = _plot(frame, section, measure)
            if fig is not None:
                parts.append(h.figure(fig, f"{measure} against {section.x}",
                                      f"{measure} of every configuration tried, against {section.x}; the lowest "
                                      "in red."))
    shown = frame.head(MAX_ROWS)
    numeric = [pd.api.types.is_numeric_dtype(shown[c]) for c in shown.columns]
    rows = [[h.ncell(v) if n else h.tcell(v) for v, n in zip(r, numeric)] for r in shown.itertuples(index=False)]
    caption = None if len(frame) <= MAX_ROWS else f"first {MAX_ROWS} of {len(frame)} rows"
    parts.append(h.table(list(shown.columns), rows, table_id=f"extra-{section.key}", caption=caption,
                         numeric_headers=numeric))
    return "\n".join(parts)
