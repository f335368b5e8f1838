"""The one bounded parser of numbers read from files (results tables, campaign records): no 400-digit
integers, non-finite values only where a field allows them.

Python's ``int("9" * 400)`` builds a 400-digit integer that then overflows every float conversion
(``OverflowError`` in numpy, pandas, statsmodels), and ``int("9" * 5000)`` raises ValueError; ``float``
accepts ``inf``, ``nan``, ``1_0`` and fullwidth digits. :func:`number` reads ASCII decimal text of at most
:data:`MAX_CHARS` characters, integers of at most :data:`MAX_INT_DIGITS` digits, and refuses ``inf`` and
``nan`` unless asked; every refusal is a :class:`NumberError` (a ``ValueError``) whose message says what is
wrong with the text, for the caller to name the field and the file.
"""

from __future__ import annotations

import math
import re

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
