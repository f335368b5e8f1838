"""sparkdl logparse PATH... : one row per log (a text table, JSON or CSV), or one per epoch with --per-epoch.

Exit codes: 0 every log ok; 3 some logs not ok (failed or incomplete); 2 bad input (a path that
does not exist, a file that cannot be read, an option out of range, a folder with no log: one line and
no table). A file that cannot be read gets its own row (status ``failed``, the reason saying why) and
one ``error:`` line on stderr; the other logs are still read and printed. The log of a campaign's job
that reports JSON is reported as the campaign recorded it (:mod:`logparse.campaign`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from io import TextIOBase
from types import SimpleNamespace

from logparse.errors import LogNotFoundError, LogParseError, OptionError
from logparse.parser import collect_logs, parse
from logparse.records import SUMMARY_FIELDS, JobLog, Status
from sparkdl.errors import EXIT_INPUT, EXIT_OK, EXIT_RUNS_FAILED

#: sparkdl.options.FORMATS (not imported: argparse and pathlib are not part of this command's start-up).
FORMATS = ("text", "json", "csv")


def build_parser() -> argparse.ArgumentParser:
    """The reference parser: --help, usage errors and anything :func:`parse_args`'s fast path leaves to it."""
    import argparse

    from sparkdl.options import CommandParser

    class Formatter(argparse.HelpFormatter):
        """argparse's formatter asks shutil for the terminal width (shutil imports bz2 and lzma)."""

        def __init__(self, prog: str) -> None:
            super().__init__(prog, width=100)

    p = CommandParser(
        prog="sparkdl logparse", formatter_class=Formatter,
        description="Final figures and status of training jobs' logs (.out, .out.gz; the .err beside each is read "
                    "when needed). Exit 0 all ok, 3 some not ok, 2 bad input.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files, or directories searched for *.out[.gz]")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="output format: text, json, csv (default text); text shows the main figures, json and csv "
                        "every field")
    p.add_argument("--per-epoch", dest="epochs", action="store_true", help="one row per epoch (parses every line)")
    from sparkdl.options import renamed

    renamed(p, "--epochs", "--per-epoch", nargs=0)
    p.add_argument("--full", action="store_true", help="parse every line even without --per-epoch")
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


# The options and their defaults, as build_parser() declares them: (dest, kind) with kind "flag", "int",
# "str" or a tuple of choices.
_OPTIONS = {"--format": ("format", FORMATS), "--per-epoch": ("epochs", "flag"), "--full": ("full", "flag"),
            "--expected-epochs": ("expected_epochs", "int"), "--losses": ("losses", "flag"),
            "--min-replications": ("min_replications", "int"), "--point-pattern": ("point_pattern", "str")}
_DEFAULTS = {"format": "text", "epochs": False, "full": False, "expected_epochs": None, "losses": False,
             "min_replications": None, "point_pattern": None}


def parse_args(argv: Sequence[str]) -> SimpleNamespace:
    """The options, as :func:`build_parser` would parse them.

    A fast path reads the plain forms (``--opt value``, ``--opt=value``, flags, paths) without
    argparse, whose import and first parser cost ~3 ms of every start-up (this CLI is timed
    against grep); anything else (``--help``, ``--``, an abbreviation, a bad value, no path) goes to
    argparse itself, so help and usage errors are argparse's own (tests/test_logparse_cli.py checks
    both paths agree)."""
    fast = _parse_plain(list(argv))
    if fast is not None:
        return fast
    return SimpleNamespace(**vars(build_parser().parse_args(list(argv))))


def _parse_plain(argv: list[str]) -> SimpleNamespace | None:
    values: dict[str, object] = dict(_DEFAULTS)
    paths: list[str] = []
    after_paths = False  # an option followed the paths: argparse takes no second run of paths
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            if after_paths:
                return None
            paths.append(arg)
            continue
        after_paths = bool(paths)
        name, eq, value = arg.partition("=")
        if name not in _OPTIONS:
            return None
        dest, kind = _OPTIONS[name]
        if kind == "flag":
            if eq:
                return None
            values[dest] = True
            continue
        if not eq:
            if i >= len(argv) or argv[i].startswith("-"):
                return None
            value, i = argv[i], i + 1
        if kind == "int":
            try:
                values[dest] = int(value)  # what argparse's type=int does
            except ValueError:
                return None
        elif isinstance(kind, tuple) and value not in kind:
            return None
        else:
            values[dest] = value
    if not paths:
        return None
    return SimpleNamespace(paths=paths, **values)


#: The columns of the text table of one row per log (json and csv have every field).
TEXT_COLUMNS = ("path", "status", "epochs_completed", "wall_clock_s", "accuracy", "reason")


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("\n", " ")


def _write_text(rows: list[dict[str, object]], out: TextIOBase) -> None:
    """An aligned table: the main figures of each log (every column of per-epoch rows)."""
    present: dict[str, None] = {}
    for row in rows:
        present.update(dict.fromkeys(row))
    names = [c for c in TEXT_COLUMNS if c in present] if "status" in present else list(present)
    cells = [names] + [[_cell(row.get(k)) for k in names] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(names))]
    for r in cells:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")


def _write(rows: list[dict[str, object]], fmt: str, out: TextIOBase) -> None:
    if fmt == "text":
        _write_text(rows, out)
        return
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
    names = list(columns)
    w = csv.writer(out, lineterminator="\n")  # csv writes None as "" (what DictWriter's rows did by hand)
    w.writerow(names)
    w.writerows([row.get(k) for k in names] for row in rows)


def error_row(path: str, message: str) -> dict[str, object]:
    """The row of a file that could not be read: every summary column, status failed, the reason why."""
    row: dict[str, object] = dict.fromkeys(SUMMARY_FIELDS)
    row.update(path=path, status=str(Status.FAILED), reason=f"cannot read the log: {message}", epochs_completed=0)
    return row


def _judged(log: JobLog, losses: bool) -> JobLog:
    if not losses or log.status != Status.OK:
        return log
    from logparse.judgement import Planned, judge
    from logparse.losses import resource_losses

    j = judge(log, Planned(), losses=resource_losses(log.path))
    return log._replace(status=j.status, reason=j.reason, failure_kind=j.failure_kind, notes=j.notes)


def run(args: SimpleNamespace, out: TextIOBase, err: TextIOBase) -> int:
    pattern = None
    if args.min_replications is not None or args.point_pattern is not None:  # imported only when asked
        from logparse.replications import compile_point_pattern, short_points

        pattern = compile_point_pattern(args.point_pattern)
        if args.min_replications is not None:
            short_points([], args.min_replications)  # validates the option before any work
    if args.expected_epochs is not None and args.expected_epochs < 1:
        raise OptionError(f"--expected-epochs must be >= 1, got {args.expected_epochs}")
    full = args.epochs or args.full
    found = collect_logs(args.paths)
    paths, problems = found.paths, found.problems
    if not paths and not problems:
        raise LogNotFoundError(f"no log in {', '.join(args.paths)} (*.out or *.out.gz, searched recursively): "
                               "pass the folder that holds the jobs' .out files")
    logs: list[JobLog] = []
    rows: list[dict[str, object]] = []
    bad = len(problems)
    for message in problems:
        err.write(f"error: {message}\n")
    if not paths:
        return EXIT_INPUT  # nothing readable: the lines above say why, and no empty table follows
    campaigns = None
    for p in paths:
        try:
            log = parse(p, full=full, expected_epochs=args.expected_epochs)
        except LogParseError as e:
            bad += 1
            err.write(f"error: {e}\n")
            rows.append(error_row(str(p), str(e)))
            continue
        if log.iterations_completed is None and log.epochs_validated is None and not log.epochs_completed:
            from logparse import campaign  # no BigDL line: a json job of a campaign has its record

            campaigns = campaigns or campaign.Campaigns()
            try:
                row = campaigns.record(p)
                recorded = None if row is None else campaign.recorded_log(p, row)
            except LogParseError as e:  # an unreadable manifest or results.csv, a figure no run can have
                bad += 1
                err.write(f"error: {e}\n")
                rows.append(error_row(str(p), str(e)))
                continue
            if recorded is not None:
                log = recorded
                logs.append(log)
                rows.extend(campaign.epoch_rows(p) if args.epochs else [log.summary()])
                continue
        log = _judged(log, args.losses)
        logs.append(log)
        if args.epochs:
            from dataclasses import asdict

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
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run(args, sys.stdout, sys.stderr)
