"""The one base error of the tool, and the exit codes every command uses.

Each stage has its own base class (``HarnessError``, ``ClusterError``, ``LogParseError``,
``ModelError``, ``OptimizeError``, ``JobError``), all derived from :class:`ToolError`. An error
carries its exit code, so the CLI layer (:func:`sparkdl.cli.run_cli`) maps every error the same
way in every command. Messages are one line (or one line then one line per problem) that say
what is wrong and how to fix it.
"""

from __future__ import annotations

#: Exit codes, listed once (the README copies this table).
EXIT_OK = 0
EXIT_INTERNAL = 1      # a bug: an unexpected exception (its traceback is saved to a file)
EXIT_INPUT = 2         # bad input: a file, an option, a design row, a busy campaign folder
EXIT_RUNS_FAILED = 3   # the work finished, but some runs (or logs) are not ok
EXIT_CLUSTER = 4       # the cluster or the environment cannot do the work (Java, ports, workers)
EXIT_SIGHUP = 129      # 128 + SIGHUP
EXIT_SIGINT = 130      # 128 + SIGINT (Ctrl-C)
EXIT_SIGTERM = 143     # 128 + SIGTERM

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success: every run (or log) ok"),
    (EXIT_INTERNAL, "internal error: a bug; one line, the traceback saved to a file named in it"),
    (EXIT_INPUT, "bad input: a design, results table, option or file; or the campaign folder is in use"),
    (EXIT_RUNS_FAILED, "finished, but some runs or logs are not ok (their reasons are printed)"),
    (EXIT_CLUSTER, "the cluster or environment cannot do the work (Java, ports, workers, SSH)"),
    (EXIT_SIGHUP, "stopped by SIGHUP: finished work kept, the cluster this command started stopped"),
    (EXIT_SIGINT, "stopped by Ctrl-C (SIGINT): same"),
    (EXIT_SIGTERM, "stopped by SIGTERM: same"),
)


class ToolError(Exception):
    """Base class of every error the tool raises on its own account; ``exit_code`` says how a CLI exits."""

    exit_code: int = EXIT_INPUT


class CampaignError(ToolError):
    """The campaign directory cannot be used (e.g. it holds another design): :mod:`sparkdl.campaign`."""


class CampaignBusyError(CampaignError):
    """Another live process holds the campaign folder's lock."""


class CostError(ToolError):
    """A cost specification or cost expression is invalid (unknown name, unsafe or malformed): :mod:`sparkdl.cost`."""
