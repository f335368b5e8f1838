"""Errors raised by optimize/: each message names the field and the fix, in one line."""

from sparkdl.errors import EXIT_RUNS_FAILED, ToolError


class OptimizeError(ToolError):
    """Base class for every error the optimizers raise on their own account."""


class SearchOptionError(OptimizeError):
    """A search option is invalid (e.g. a non-positive start or fewer than one replication)."""


class ObjectiveError(OptimizeError):
    """The objective failed or returned something that is not a cost (NaN, a non-number)."""


class JobFailedError(ObjectiveError):
    """A real job behind the objective did not finish ok; the message names the run, its reason and log."""

    exit_code = EXIT_RUNS_FAILED


class LearningRateMismatchError(ObjectiveError):
    """A job ran with another learning rate than the one asked (read back from its own log)."""

    exit_code = EXIT_RUNS_FAILED


class CampaignDataError(OptimizeError):
    """A campaign table cannot train the models an optimizer needs (missing columns, too few rows)."""
