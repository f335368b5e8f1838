"""The one rule for what a measurement is, for every reader of runs (models.results' tables, the stopping rules of
``submit --until`` that read one run at a time): a time is a finite number in [0, 1 year], an accuracy a fraction in
[0, 1], a count not negative. :func:`invalid_measurements` says which rows break it and why;
:mod:`models.results` sets them aside and says so in one note (``set_aside_note``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: `submit` starts without the analysis libraries
    import numpy as np
    import pandas as pd

TIME_COLUMN = "wall_clock_s"
FIT_COLUMN = "fit_s"
ACCURACY_COLUMN = "accuracy"
#: No training job of this tool runs longer than a year: a longer wall clock is a broken record.
MAX_WALL_CLOCK_S = 365 * 24 * 3600.0


def _numbers(series: pd.Series) -> np.ndarray:
    import pandas as pd

    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)


#: The times every reader checks (``time``: Albo Martínez 2021's tables); a command's response named ``*_s``/``*_ms``
#: is checked too (:func:`time_columns`).
TIME_COLUMNS: tuple[str, ...] = (TIME_COLUMN, FIT_COLUMN, "elapsed_s", "time")
#: Counts a run records: never negative.
COUNT_COLUMNS: tuple[str, ...] = ("epochs_completed", "attempts")


def time_columns(df: pd.DataFrame, also: Iterable[str | None] = ()) -> list[str]:
    """The columns of ``df`` the validity rule reads as times: :data:`TIME_COLUMNS`, and each of ``also`` (a command's
    response) named like a time (``*_s`` in seconds, ``*_ms`` in milliseconds)."""
    extra = [c for c in also if c and str(c).endswith(("_s", "_ms"))]
    return [c for c in dict.fromkeys([*TIME_COLUMNS, *extra]) if c in df.columns]


def _present_not_number(series: pd.Series) -> np.ndarray:
    """Cells that hold something (not blank) that is not a number: a word in a column of measurements."""
    import numpy as np

    given = series.notna().to_numpy() & (series.astype("string").str.strip().fillna("") != "").to_numpy()
    return given & np.isnan(_numbers(series))


def invalid_measurements(df: pd.DataFrame, also: Iterable[str | None] = ()) -> dict[str, np.ndarray]:
    """The one rule for what a measurement is, as reason -> rows that break it (a blank cell breaks none: a missing
    figure is left to each analysis):

    * a time (:func:`time_columns`) is a finite number in [0, 1 year] (:data:`MAX_WALL_CLOCK_S`);
    * an ``accuracy`` is a fraction in [0, 1];
    * a count (:data:`COUNT_COLUMNS`) is not negative.

    Every command that reads runs sets these rows aside with :func:`models.results.set_aside_invalid` and says so with
    :func:`models.results.set_aside_note`, in the same words.
    """
    import numpy as np

    out: dict[str, np.ndarray] = {}
    with np.errstate(invalid="ignore"):
        for c in time_columns(df, also):
            scale = 1000.0 if str(c).endswith("_ms") else 1.0
            t = _numbers(df[c])
            bad = (~np.isnan(t) & ~((t >= 0) & (t <= MAX_WALL_CLOCK_S * scale))) | _present_not_number(df[c])
            unit = "ms" if scale != 1.0 else "s"
            out[f"{c} not a time in [0, {MAX_WALL_CLOCK_S * scale:.0f}] {unit}"] = bad
        for c in [ACCURACY_COLUMN, *(a for a in also if a and str(a).startswith(ACCURACY_COLUMN) and a != ACCURACY_COLUMN
                                    and a in df.columns)]:
            if c in df.columns:
                a = _numbers(df[c])
                out[f"{c} not a fraction in [0, 1]"] = ((~np.isnan(a) & ~((a >= 0) & (a <= 1)))
                                                        | _present_not_number(df[c]))
        for c in COUNT_COLUMNS:
            if c in df.columns:
                n = _numbers(df[c])
                out[f"{c} a negative or infinite count"] = (~np.isnan(n) & ~((n >= 0) & np.isfinite(n))) \
                    | _present_not_number(df[c])
    return {k: v for k, v in out.items() if v.any()}


def breaks_the_rule(row: Mapping[str, object], also: Iterable[str | None] = ()) -> str | None:
    """The first reason the validity rule (:func:`invalid_measurements`) sets this one run aside, None when it keeps it:
    the rule of the readers that take one run at a time (the stopping rules of ``submit --until``)."""
    import pandas as pd

    return next(iter(invalid_measurements(pd.DataFrame([dict(row)]), also)), None)
