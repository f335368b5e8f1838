"""logparse: the status and figures of a Spark training job's logs (.out/.err): BigDL's log lines, a
job's own JSON result line, Spark 4's structured (JSON) log lines, and Spark's event logs.

    from logparse import parse
    log = parse("runs/point07/rep3.out")          # final figures, tail first
    log.status, log.reason, log.wall_clock_s, log.accuracy
    parse(path, full=True).iterations             # every iteration, epoch and validation

``sparkdl logparse PATH... [--format text|json|csv] [--per-epoch] [--min-replications N]``.
Status rules: ``logparse.status`` (the log) and ``logparse.judgement`` (the run: plan, process, lost executors). Nothing heavy is imported here (no pandas).
"""

from logparse.errors import LogNotFoundError, LogParseError, LogReadError, LogTooLargeError, OptionError
from logparse.parser import find_logs, parse
from logparse.records import EpochEnd, FailureKind, Iteration, JobLog, Metric, Status, Validation

_LAZY = {"judge": "logparse.judgement", "judge_run": "logparse.judgement", "judge_json_run": "logparse.judgement",
         "judge_program_run": "logparse.judgement", "SparkRecord": "logparse.judgement", "Judgement": "logparse.judgement",
         "Planned": "logparse.judgement", "ProcessFacts": "logparse.judgement"}


def __getattr__(name: str):
    """The run-level judge is imported on first use: the CLI's start-up does not need it."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'logparse' has no attribute {name!r}")


__all__ = [
    "parse", "find_logs", "judge", "judge_run", "judge_json_run", "judge_program_run", "SparkRecord", "Judgement", "Planned", "ProcessFacts", "JobLog", "Status", "FailureKind", "Iteration", "EpochEnd", "Validation", "Metric",
    "LogParseError", "LogNotFoundError", "LogReadError", "LogTooLargeError", "OptionError",
]
