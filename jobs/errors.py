"""Errors raised by jobs/ before Spark starts (bad arguments, unreadable data)."""

from sparkdl.errors import ToolError


class JobError(ToolError):
    """Base class for every error a job raises on its own account."""


class DataError(JobError):
    """The MNIST data cannot be found or read."""
