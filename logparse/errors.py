"""Errors raised by logparse: one base class, ``LogParseError``, and its subclasses.

A log's *content* never raises: anything a job can write is reported as the JobLog's
status and reason. These errors are about the caller's input (a missing file, a bad option).
"""

from __future__ import annotations

from sparkdl.errors import ToolError


class LogParseError(ToolError):
    """Base class for every error raised by logparse."""


class LogNotFoundError(LogParseError):
    """The path given does not exist or is not a regular file."""


class LogReadError(LogParseError):
    """The file exists but the operating system refused to read it (permissions, I/O error)."""


class OptionError(LogParseError):
    """An option passed to parse() or the CLI is out of range."""


class LogTooLargeError(LogParseError):
    """A log too large to read whole (or a .gz that expands beyond the cap)."""
