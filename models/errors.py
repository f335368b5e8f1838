"""Errors raised by the models package: one base class, ``ModelError``, and its subclasses."""

from __future__ import annotations

from sparkdl.errors import CostError, ToolError  # noqa: F401  (the cost formula's error: sparkdl.cost)


class ModelError(ToolError):
    """Base class for every error raised by models/."""


# --- models.predict ---------------------------------------------------------------------------


class MissingColumnError(ModelError):
    """A column the model needs is not in the table."""


class TooFewRowsError(ModelError):
    """The table has too few rows for the requested fit (e.g. fewer than the CV folds need)."""


class InvalidTableError(ModelError):
    """The table's values cannot be used (non-numeric target, NaN, non-positive power-law input)."""


class NotFittedError(ModelError):
    """predict() or evaluate() was called before fit()."""


class NotIdentifiedError(ModelError):
    """The training rows cannot determine a model's coefficients (too few levels of the scale, a singular design)."""


class FitError(ModelError):
    """A fit that got valid input failed at run time (the optimizer or solver did not succeed)."""


# --- models.results / sparkdl.cost / models.anova --------------------------------------------


class ResultsNotFoundError(ModelError):
    """The results path is neither a CSV file nor a campaign directory holding results.csv."""


class CostInputsMissingError(MissingColumnError):
    """No cost column, and the columns a cost is computed from (wall clock, accuracy) are missing."""


class FormulaError(ModelError):
    """A model formula names unknown columns, cannot be parsed, or is not estimable on the data."""


# --- models.queueing --------------------------------------------------------------------------


class QueueParameterError(ModelError):
    """A queue parameter is invalid (non-positive rate, fewer than one server, negative scv)."""


class ConcurrencyUnknownError(ModelError):
    """A campaign does not say how many jobs ran at once (njobs), which the CPU + disk model needs."""


class UnstableQueueError(ModelError):
    """The offered load reaches the capacity (rho >= 1): the queue grows without bound."""


class AnalysisOptionError(ModelError):
    """Analysis options conflict with each other or with the data (e.g. --robust with --typ 1)."""


# --- models.rsm / models.desirability ---------------------------------------------------------


class SurfaceError(ModelError):
    """A second-order surface cannot be fitted: unknown or non-numeric column, too few levels or points."""


class DesirabilityError(ModelError):
    """A desirability goal is malformed (unknown goal, limits in the wrong order, non-positive weight)."""


# --- models.power -----------------------------------------------------------------------------


class PlanError(ModelError):
    """A power or sample-size plan cannot be made from these inputs (no noise, a bad effect, no residual df)."""
