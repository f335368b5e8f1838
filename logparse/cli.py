"""python -m logparse PATH... : one row per log (CSV or JSON), or one per epoch with --epochs."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import TextIO

from logparse.errors import LogParseError, LogReadError
from logparse.parser import find_logs, parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m logparse",
        description="Final figures and status of BigDL job logs (.out, .out.gz; the .err beside each is read too).")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files, or directories searched for *.out[.gz]")
    p.add_argument("--format", choices=("csv", "json"), default="csv", help="output format (default csv)")
    p.add_argument("--epochs", action="store_true", help="one row per epoch (parses every line)")
    p.add_argument("--full", action="store_true", help="parse every line even without --epochs")
    p.add_argument("--expected-epochs", type=int, metavar="N",
                   help="epochs each job was asked for: fewer validated epochs make a log incomplete")
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


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from logparse.replications import compile_point_pattern, short_points

    pattern = compile_point_pattern(args.point_pattern)
    if args.min_replications is not None:
        short_points([], args.min_replications)  # validates the option before any work
    full = args.epochs or args.full
    logs = [parse(p, full=full, expected_epochs=args.expected_epochs) for p in find_logs(args.paths)]
    if args.epochs:
        from logparse.epochs import epoch_summaries
        rows = [asdict(e) for log in logs for e in epoch_summaries(log)]
    else:
        rows = [log.summary() for log in logs]
    _write(rows, args.format, out)
    if args.min_replications is not None:
        for c in short_points(logs, args.min_replications, pattern):
            err.write(f"warning: design point {c.point}: {c.ok} ok log(s) of {args.min_replications} required "
                      f"({c.failed} failed, {c.incomplete} incomplete)\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args, sys.stdout, sys.stderr)
    except LogReadError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except LogParseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
