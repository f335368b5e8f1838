"""Errors raised by jobs/ before Spark starts (bad arguments, unreadable data)."""


class JobError(Exception):
    """Base class for every error a job raises on its own account."""


class DataError(JobError):
    """The MNIST data cannot be found or read."""
