"""logparse: figures and status from BigDL job logs (.out/.err).

    from logparse import parse
    log = parse("runs/point07/rep3.out")          # final figures, tail first
    log.status, log.reason, log.wall_clock_s, log.accuracy
    parse(path, full=True).iterations             # every iteration, epoch and validation

``python -m logparse PATH... [--format csv|json] [--epochs] [--min-replications N]``.
Status rules: ``logparse.status`` (the log) and ``logparse.judge`` (the run: plan and process). Nothing heavy is imported here (no pandas).
"""

from logparse.errors import LogNotFoundError, LogParseError, LogReadError, LogTooLargeError, OptionError
from logparse.judge import Judgement, Planned, ProcessFacts, judge, judge_run
from logparse.parser import find_logs, parse
from logparse.records import EpochEnd, FailureKind, Iteration, JobLog, Metric, Status, Validation

__all__ = [
    "parse", "find_logs", "judge", "judge_run", "Judgement", "Planned", "ProcessFacts", "JobLog", "Status", "FailureKind", "Iteration", "EpochEnd", "Validation", "Metric",
    "LogParseError", "LogNotFoundError", "LogReadError", "LogTooLargeError", "OptionError",
]
