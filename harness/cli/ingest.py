"""A campaign folder from logs you already have: another team's finished study, named by its settings.

    sparkdl ingest study/ --out runs/study \\
        --fields 'experiment(?P<replicate>\\d+)_(?P<learning_rate>[^_/]+)_(?P<batch_size>\\d+)_(?P<epochs>\\d+)_(?P<nodes>\\d+)_(?P<regularisation>[^_/]+)/'
    sparkdl anova runs/study          # then every analysis reads it as a campaign
    sparkdl report runs/study

The parser, ``main`` and what ``sparkdl ingest`` prints (counts by status, the factors, the commonest reasons
a log is not ok); the logs are read and the folder written by :mod:`harness.ingest`.

Exit 0 every log ok, 3 some not ok (counted by status), 2 bad input (an unmatched log, an unreadable log:
its row says why, the folder is still written), as every command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness.ingest import IngestError, IngestOptions, ingest
from sparkdl.cli import run_cli
from sparkdl.errors import EXIT_INPUT, EXIT_OK, EXIT_RUNS_FAILED
from sparkdl.options import CommandParser, add_out, renamed


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl ingest", description=__doc__.split("\n\n")[0],
                      formatter_class=argparse.RawDescriptionHelpFormatter,
                      epilog="Then: sparkdl anova OUT; sparkdl report OUT; "
                             "sparkdl pareto OUT")
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files, or folders searched for *.out[.gz]")
    p.add_argument("--fields", required=True, metavar="REGEX",
                   help="regex searched in each log's path; each named group (?P<name>...) is a column and a factor "
                        "(replicate/run number the logs; epochs is also the plan)")
    add_out(p, "the campaign folder to make or bring up to date", required=True)
    p.add_argument("--factors", help="comma-separated groups to declare as the factors (default: every group "
                                     "but run/replicate)")
    p.add_argument("--copy", action="store_true", help="copy each log (and its .err) to OUT/logs/<run>-<replicate>.out")
    p.add_argument("--skip-unmatched", action="store_true", help="leave out logs whose path does not match --fields")
    p.add_argument("--per-epoch", dest="epochs", action="store_true",
                   help="also write OUT/epochs.csv, one row per epoch of each log")
    renamed(p, "--epochs", "--per-epoch", nargs=0)
    p.add_argument("--expected-epochs", type=int, metavar="N", help="epochs every job was asked for (default: the "
                                                                    "epochs group, if any)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    factors = None
    if args.factors is not None:
        # argparse gives a list for --factors=-- (it drops the "--"): that names no group either
        text = args.factors if isinstance(args.factors, str) else "--"
        factors = tuple(f.strip() for f in text.split(",") if f.strip())
        if not factors or any(f.startswith("-") for f in factors):
            raise IngestError(f"--factors {text!r} names no group; give e.g. --factors learning_rate,batch_size")
    options = IngestOptions(tuple(args.paths), args.fields, args.out, factors, args.copy, args.skip_unmatched,
                            args.epochs, args.expected_epochs)
    result = ingest(options, say=lambda line: print(line, file=sys.stderr, flush=True))
    counts = ", ".join(f"{n} {s}" for s, n in sorted(result.counts().items()))
    print(f"{len(result.logs)} log(s) in {result.folder.path}: {counts}; this time {result.new} new, "
          f"{result.reread} read again (changed), {result.kept} unchanged"
          + (f", {len(result.skipped)} skipped (unmatched)" if result.skipped else ""))
    print(f"factors (manifest.json): {', '.join(result.factors)}")
    reasons: dict[str, int] = {}
    for x in result.logs:
        if x.outcome["status"] != "ok":
            reasons[str(x.outcome["reason"])] = reasons.get(str(x.outcome["reason"]), 0) + 1
    for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {n} log(s) not ok: {reason}")
    print(f"results: {result.folder.results_csv}; next: sparkdl anova {result.folder.path}")
    if result.unreadable:
        return EXIT_INPUT
    return EXIT_OK if all(x.outcome["status"] == "ok" for x in result.logs) else EXIT_RUNS_FAILED


if __name__ == "__main__":
    sys.exit(run_cli(main))
