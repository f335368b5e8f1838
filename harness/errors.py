"""Errors raised by harness/: each message names the field and the fix, in one line."""


class HarnessError(Exception):
    """Base class for every error the harness raises on its own account."""


class DesignError(HarnessError):
    """A factors file, generator or design option is invalid."""
