"""Errors raised by harness/: each message names the field and the fix, in one line."""

from sparkdl.errors import CampaignBusyError, CampaignError, ToolError  # noqa: F401  (the campaign folder's errors)



class HarnessError(ToolError):
    """Base class for every error the harness raises on its own account."""


class DesignError(HarnessError):
    """A factors file, generator or design option is invalid."""


class DesignFileError(HarnessError):
    """A design CSV has bad columns or values; ``problems`` holds one line per bad row."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        head = f"{path}: {len(problems)} problem(s); nothing was submitted"
        super().__init__("\n".join([head, *problems]))


class CapacityError(HarnessError):
    """A run needs more workers, cores or memory than the cluster offers."""
