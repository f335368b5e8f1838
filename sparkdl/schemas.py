"""The declared schema of each kind of config file: types, ranges, choices and limits in one place.

Read through :func:`sparkdl.config.convert` (which maps a mismatch to one input error naming the
file and the key). Cross-field rules are in ``__post_init__`` (msgspec reports their ValueError as
a validation error). Imported lazily: msgspec is not part of ``python -m logparse``'s start-up.
No ``from __future__ import annotations`` here: msgspec reads the annotations as types.
"""

import math
from typing import Annotated, Literal, Optional, Union

import msgspec

#: The most choices a parameter or a search-space factor may list.
MAX_CHOICES = 1_000
#: The longest text in a config file's values (names, help texts).
MAX_TEXT = 1_000
Text = Annotated[str, msgspec.Meta(max_length=MAX_TEXT)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
Choice = Union[str, int, float]


def _finite(name: str, value: Optional[float]) -> None:
    if value is not None and not math.isfinite(value):
        raise ValueError(f"{name} = {value!r}: write a finite number")


class ParamTable(msgspec.Struct, forbid_unknown_fields=True):
    """``[params.NAME]`` of a job description (harness.job): a design column's type and range, or its choices."""

    type: Literal["int", "float", "str", "auto"] = "auto"
    min: Optional[float] = None
    max: Optional[float] = None
    choices: Annotated[list[Choice], msgspec.Meta(max_length=MAX_CHOICES)] = []
    help: Text = ""

    def __post_init__(self) -> None:
        _finite("min", self.min)
        _finite("max", self.max)
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min = {self.min:g} is above max = {self.max:g}: swap them")
        if self.type == "str" and (self.min is not None or self.max is not None):
            raise ValueError("min and max are for numbers: remove them, or give type = \"int\" or \"float\"")
        if self.choices and (self.min is not None or self.max is not None):
            raise ValueError("give choices or min/max, not both")
        if len(set(map(repr, self.choices))) != len(self.choices):
            raise ValueError("choices repeat a value: list each once")
        for c in self.choices:
            if isinstance(c, float):
                _finite("a choice", c)
            if self.type == "str" and not isinstance(c, str):
                raise ValueError(f"choice {c!r} is a number but type = \"str\": quote it")
            if self.type in ("int", "float") and isinstance(c, str):
                raise ValueError(f"choice {c!r} is a text but type = \"{self.type}\": write a number")
            if self.type == "int" and isinstance(c, float):
                raise ValueError(f"choice {c!r} is not a whole number (type = \"int\")")
