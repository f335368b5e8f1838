"""The one bounded parser of numbers read from files (results tables, campaign records): no 400-digit
integers, non-finite values only where a field allows them.

Python's ``int("9" * 400)`` builds a 400-digit integer that then overflows every float conversion
(``OverflowError`` in numpy, pandas, statsmodels), and ``int("9" * 5000)`` raises ValueError; ``float``
accepts ``inf``, ``nan``, ``1_0`` and fullwidth digits. :func:`number` reads ASCII decimal text of at most
:data:`MAX_CHARS` characters, integers of at most :data:`MAX_INT_DIGITS` digits, and refuses ``inf`` and
``nan`` unless asked; every refusal is a :class:`NumberError` (a ``ValueError``) whose message says what is
wrong with the text, for the caller to name the field and the file.

Numbers going out (JSON, tables, MLflow metrics) pass :func:`finite` (one value: a finite float or None) or
:func:`json_safe` (a whole document); cells of a results table come in through :func:`cell`.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: The longest text read as a number (a float's repr is at most 24 characters).
MAX_CHARS = 64
#: The most digits an integer may have (a float holds 15-17 significant digits).
MAX_INT_DIGITS = 18

_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_NONFINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.ASCII | re.IGNORECASE)


class NumberError(ValueError):
    """A text that is not a number the field allows."""


def number(text: str, *, integer: bool = False, allow_nonfinite: bool = False,
           minimum: float | None = None, maximum: float | None = None) -> int | float:
    """``text`` (surrounding spaces dropped) as an int (``integer``) or a float, within the bounds given."""
    s = text.strip() if isinstance(text, str) else ""
    if not s:
        raise NumberError(f"{text!r} is not a number")
    if len(s) > MAX_CHARS:
        raise NumberError(f"a number of {len(s)} characters (at most {MAX_CHARS})")
    if integer:
        if not _INT.fullmatch(s):
            raise NumberError(f"{s!r} is not a whole number in ASCII digits")
        if len(s.lstrip("+-").lstrip("0")) > MAX_INT_DIGITS:
            raise NumberError(f"a whole number of {len(s.lstrip('+-').lstrip('0'))} digits (at most {MAX_INT_DIGITS})")
        value: int | float = int(s)
    elif _FLOAT.fullmatch(s):
        value = float(s)
        if not math.isfinite(value):  # 1e999
            raise NumberError(f"{s!r} is beyond the range of a number (about 1.8e308)")
    elif _NONFINITE.fullmatch(s):
        if not allow_nonfinite:
            raise NumberError(f"{s!r} is not a finite number")
        value = float(s)
    else:
        raise NumberError(f"{s!r} is not a number in ASCII digits")
    if minimum is not None and not value >= minimum:
        raise NumberError(f"{s} is below {minimum:g}")
    if maximum is not None and not value <= maximum:
        raise NumberError(f"{s} is above {maximum:g}")
    return value


def _numpy_kind(value: object) -> str:
    """A numpy scalar's kind (``b`` bool, ``i``/``u`` integer, ``f`` float), else "" (numpy is not imported here)."""
    dtype = getattr(value, "dtype", None)
    return str(getattr(dtype, "kind", "")) if dtype is not None and getattr(value, "shape", None) == () else ""


def finite(value: object) -> float | None:
    """``value`` as a finite float, else None: NaN, the infinities, booleans, text and None are not numbers here
    (numpy's numbers are)."""
    if value is None or isinstance(value, (bool, str, bytes)) or _numpy_kind(value) == "b":
        return None
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


def json_safe(obj: Any) -> Any:
    """A document JSON can hold: NaN and the infinities become None, tuples lists, numpy's scalars Python's
    (booleans stay booleans, whole numbers ints), through dicts, lists and tuples."""
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    kind = _numpy_kind(obj)
    if kind == "b":
        return bool(obj)  # type: ignore[arg-type]
    if kind in ("i", "u"):
        return int(obj)  # type: ignore[call-overload]
    if kind == "f" or (isinstance(obj, float)):
        return finite(obj)
    return obj


def cell(text: str) -> int | float | str | None:
    """One results-table cell as a value: empty is None; whole ASCII digits an int (at most :data:`MAX_INT_DIGITS`
    digits); a decimal or ``inf``/``nan`` a float (``1e999`` is inf, as a CSV reader reads it); any other text the
    text as written. A cell written as a number that :func:`number` cannot hold (400 digits) is a
    :class:`NumberError`, for the caller to name the line and the column."""
    s = text.strip() if isinstance(text, str) else ""
    if not s:
        return None
    if _INT.fullmatch(s):
        return number(s, integer=True)
    if _FLOAT.fullmatch(s):
        if len(s) > MAX_CHARS:
            number(s)  # raises, saying how long it is
        return float(s)
    if _NONFINITE.fullmatch(s):
        return float(s)
    return text
