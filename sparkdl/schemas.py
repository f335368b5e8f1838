"""The declared schema of each kind of config file: types, ranges, choices and limits in one place.

Read through :func:`sparkdl.config.convert` (which maps a mismatch to one input error naming the
file and the key). Cross-field rules are in ``__post_init__`` (msgspec reports their ValueError as
a validation error). Imported lazily: msgspec is not part of ``sparkdl logparse``'s start-up.
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


#: The range each search-space factor may take (optimize.search.space): the harness's own limits on a
#: design row (sparkdl.runspec.CLUSTER_RULES) and on the built-in jobs' parameters (jobs/birnn.toml).
SPACE_LIMITS: dict[str, tuple[float, float]] = {
    "nodes": (1, 10_000), "executors": (1, 512), "executor_cores": (1, 1_024), "epochs": (1, 1_000),
    "batch_size": (1, 1_048_576), "learning_rate": (1e-9, 1e4),
}
#: A ``model`` choice: a built-in job's name.
MODEL_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"


class SpaceTable(msgspec.Struct, forbid_unknown_fields=True):
    """One ``[factor]`` table of a search space (optimize.search.space): a range or a list of choices.

    Which factor it is decides the rest (:func:`check_space_factor`): whole numbers for the integer
    factors, every value inside :data:`SPACE_LIMITS`, text choices only for ``model``.
    """

    low: Optional[Union[int, float]] = None
    high: Optional[Union[int, float]] = None
    log: bool = False
    step: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = 1
    choices: Optional[Annotated[list[Choice], msgspec.Meta(min_length=1, max_length=MAX_CHOICES)]] = None


def check_space_factor(name: str, table: SpaceTable, integer: bool) -> None:
    """Raise ValueError naming what is wrong with ``table`` as factor ``name`` (see :class:`SpaceTable`)."""
    import re

    values = list(table.choices) if table.choices is not None else [v for v in (table.low, table.high)
                                                                     if v is not None]
    if name == "model":
        bad = [c for c in values if not isinstance(c, str) or not re.fullmatch(MODEL_NAME, c)]
        if bad:
            raise ValueError(f"choice {bad[0]!r} is not a job's name: write e.g. \"lenet\"")
        return
    lo, hi = SPACE_LIMITS[name]
    for v in values:
        if isinstance(v, str):
            raise ValueError(f"{v!r} is a text: {name} takes numbers")
        if integer and not isinstance(v, int):
            raise ValueError(f"{v!r} is not a whole number: {name} takes whole numbers")
        if not (isinstance(v, (int, float)) and math.isfinite(v) and lo <= v <= hi):
            raise ValueError(f"{v!r} is outside {lo:g}..{hi:g}, the range {name} may take")


Names = Annotated[list[Name], msgspec.Meta(max_length=10_000)]


def _distinct(key: str, names: list[str]) -> None:
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{key} lists {', '.join(twice)} more than once")


Level = Union[Annotated[str, msgspec.Meta(max_length=MAX_TEXT)], int, float, bool, None]
Count = Annotated[int, msgspec.Meta(ge=0, le=10**9)]


class UntilPointDoc(msgspec.Struct, forbid_unknown_fields=True):
    """One design point of a replicate-until-sure campaign: its final interval and why it stopped."""

    run: Annotated[int, msgspec.Meta(ge=1, le=10**9 + 1)]
    replicates: Count
    failed_or_missing: Count
    mean: Optional[float]
    half_width: Optional[float]
    lower: Optional[float]
    upper: Optional[float]
    width: Optional[float]
    met: bool
    reason: Optional[Literal["met", "max", "budget", "failing"]]
    levels: Annotated[dict[Name, Level], msgspec.Meta(max_length=1_000)] = {}


class UntilDoc(msgspec.Struct, forbid_unknown_fields=True):
    """``until`` of a manifest (harness.until.UntilResult.to_dict): the stopping rule and each point's state."""

    rule: Text
    response: Name
    width: Annotated[float, msgspec.Meta(gt=0)]
    relative: bool
    interval: Text
    confidence: Annotated[float, msgspec.Meta(ge=0.5, lt=1)]
    min_replications: Annotated[int, msgspec.Meta(ge=2, le=1_000)]
    max_replications: Annotated[int, msgspec.Meta(ge=2, le=1_000)]
    budget_s: Optional[Annotated[float, msgspec.Meta(gt=0)]]
    stopped: Text
    runs: Count
    cluster_time_s: Annotated[float, msgspec.Meta(ge=0)]
    points: Annotated[list[UntilPointDoc], msgspec.Meta(max_length=100_000)] = []


class ManifestDoc(msgspec.Struct):
    """A campaign's ``manifest.json`` (sparkdl.campaign.Manifest): its factors and responses, each named once."""

    factors: Names
    responses: Names = []
    runtimes: Annotated[list[Text], msgspec.Meta(max_length=1_000)] = []
    job: Optional[Text] = None
    design: Optional[Annotated[str, msgspec.Meta(max_length=4_096)]] = None
    results: Optional[Text] = None  # where the runs' figures come from: bigdl, json, mixed
    source: Optional[Text] = None  # how the folder was made when not by a design (e.g. ingest)
    whole_plot_factors: Names = []  # a split-plot campaign's hard-to-change factors
    whole_plots: Annotated[int, msgspec.Meta(ge=0, le=10**9)] = 0
    reference_run: Optional[Annotated[int, msgspec.Meta(ge=1, le=10**9 + 1)]] = None
    time: Optional[Text] = None  # the column holding the time of the runs' work (wall_clock_s, spark_jobs_span_s)
    until: Optional[UntilDoc] = None  # replicate until sure: the stopping rule and each point's final interval
    version: int = 1

    def __post_init__(self) -> None:
        _distinct("factors", self.factors)  # responses named twice are read once (sparkdl.campaign.Manifest)


#: A template element of a job's ``args`` (a ``{field}`` or literal text), or an optional group of them.
ArgText = Annotated[str, msgspec.Meta(max_length=10_000)]
ArgGroup = Annotated[list[ArgText], msgspec.Meta(min_length=1, max_length=100)]
FileName = Annotated[str, msgspec.Meta(min_length=1, max_length=4_096)]
SparkValue = Union[Annotated[str, msgspec.Meta(max_length=MAX_TEXT)], int, float, bool]


class JobTable(msgspec.Struct, forbid_unknown_fields=True):
    """``[job]`` of a job description (harness.job): the application, its argument template and how it reports."""

    name: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    args: Annotated[list[Union[ArgText, ArgGroup]], msgspec.Meta(max_length=1_000)] = []
    results: Optional[Literal["bigdl", "json", "mlflow", "output", "none"]] = None  # None: "bigdl" for a BigDL app, else "none"
    figures: Annotated[list[Annotated[str, msgspec.Meta(max_length=1_000)]], msgspec.Meta(max_length=50)] = []
    workdir: Optional[FileName] = None
    app: Optional[FileName] = None
    py_files: Annotated[list[FileName], msgspec.Meta(max_length=100)] = []
    jar: Optional[FileName] = None
    main_class: Optional[Annotated[str, msgspec.Meta(max_length=1_000)]] = None
    description: Text = ""
    runtime: Optional[FileName] = None
    jvm: Literal["stock", "tuned"] = "stock"


class JobDoc(msgspec.Struct, forbid_unknown_fields=True):
    """A whole job description: ``[job]``, ``[spark]`` settings and one ``[params.NAME]`` per design column."""

    job: JobTable
    spark: Annotated[dict[Annotated[str, msgspec.Meta(max_length=200)], SparkValue],
                     msgspec.Meta(max_length=1_000)] = {}
    params: Annotated[dict[Annotated[str, msgspec.Meta(max_length=200)], ParamTable],
                      msgspec.Meta(max_length=200)] = {}
    derived: Annotated[dict[Annotated[str, msgspec.Meta(max_length=64)], Annotated[str, msgspec.Meta(max_length=200)]],
                       msgspec.Meta(max_length=50)] = {}
