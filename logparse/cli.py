"""python -m logparse PATH... : one row per log (CSV or JSON), or one per epoch with --epochs.

Exit codes: 0 every log ok; 3 some logs not ok (failed or incomplete); 2 bad input (a path that
does not exist, a file that cannot be read, an option out of range). A file that cannot be read
gets its own row (status ``failed``, the reason saying why) and one ``error:`` line on stderr; the
other logs are still read and printed.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Sequence, TextIO

from logparse.errors import LogParseError, OptionError
from logparse.parser import collect_logs, parse
from logparse.records import SUMMARY_FIELDS, JobLog, Status
from sparkdl.errors import EXIT_INPUT, EXIT_OK, EXIT_RUNS_FAILED


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter asks shutil for the terminal width, and shutil imports bz2 and lzma: a
    fixed width keeps them out of every start-up (this CLI is timed against grep)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=100)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m logparse", formatter_class=_Formatter,
        description="Final figures and status of BigDL job logs (.out, .out.gz; the .err beside each is read "
                    "when needed). Exit 0 all ok, 3 some not ok, 2 bad input.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files, or directories searched for *.out[.gz]")
    p.add_argument("--format", choices=("csv", "json"), default="csv", help="output format (default csv)")
    p.add_argument("--epochs", action="store_true", help="one row per epoch (parses every line)")
    p.add_argument("--full", action="store_true", help="parse every line even without --epochs")
    p.add_argument("--expected-epochs", type=int, metavar="N",
                   help="epochs each job was asked for: fewer make a log incomplete, and reaching them is enough "
                        "to call training finished")
    p.add_argument("--losses", action="store_true",
                   help="also fail ok runs during which Spark lost an executor or worker, as the harness does "
                        "(reads every byte of each ok log: slower)")
    p.add_argument("--min-replications", type=int, metavar="N",
                   help="warn on stderr for each design point with fewer than N ok logs")
    p.add_argument("--point-pattern", metavar="REGEX",
                   help="regex on the path whose first group names the design point (default: the log's directory)")
    return p


def _write(rows: list[dict[str, object]], fmt: str, out: TextIO) -> None:
    if fmt == "json":
        import json
        import math
        clean = [{k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}
                 for row in rows]
        json.dump(clean, out, indent=1, allow_nan=False)  # strict JSON: NaN and infinities become null
        out.write("\n")
        return
    import csv
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    w = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    w.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)


def error_row(path: str, message: str) -> dict[str, object]:
    """The row of a file that could not be read: every summary column, status failed, the reason why."""
    row: dict[str, object] = dict.fromkeys(SUMMARY_FIELDS)
    row.update(path=path, status=str(Status.FAILED), reason=f"cannot read the log: {message}", epochs_completed=0)
    return row


def _judged(log: JobLog, losses: bool) -> JobLog:
    if not losses or log.status != Status.OK:
        return log
    from dataclasses import replace

    from logparse.judgement import Planned, judge
    from logparse.losses import resource_losses

    j = judge(log, Planned(), losses=resource_losses(log.path))
    return replace(log, status=j.status, reason=j.reason, failure_kind=j.failure_kind, notes=j.notes)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from logparse.replications import compile_point_pattern, short_points

    pattern = compile_point_pattern(args.point_pattern)
    if args.min_replications is not None:
        short_points([], args.min_replications)  # validates the option before any work
    if args.expected_epochs is not None and args.expected_epochs < 1:
        raise OptionError(f"--expected-epochs must be >= 1, got {args.expected_epochs}")
    full = args.epochs or args.full
    found = collect_logs(args.paths)
    paths, problems = found.paths, found.problems
    logs: list[JobLog] = []
    rows: list[dict[str, object]] = []
    bad = len(problems)
    for message in problems:
        err.write(f"error: {message}\n")
    for p in paths:
        try:
            log = _judged(parse(p, full=full, expected_epochs=args.expected_epochs), args.losses)
        except LogParseError as e:
            bad += 1
            err.write(f"error: {e}\n")
            rows.append(error_row(str(p), str(e)))
            continue
        logs.append(log)
        if args.epochs:
            from logparse.epochs import epoch_summaries
            rows.extend(asdict(e) for e in epoch_summaries(log))
        else:
            rows.append(log.summary())
    _write(rows, args.format, out)
    if args.min_replications is not None:
        for c in short_points(logs, args.min_replications, pattern):
            err.write(f"warning: design point {c.point}: {c.ok} ok log(s) of {args.min_replications} required "
                      f"({c.failed} failed, {c.incomplete} incomplete)\n")
    if bad:
        return EXIT_INPUT
    return EXIT_OK if all(log.status == Status.OK for log in logs) else EXIT_RUNS_FAILED


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(None if argv is None else list(argv))
    return run(args, sys.stdout, sys.stderr)
