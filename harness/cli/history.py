"""Browse a campaign's runs in Spark's own History Server.

    sparkdl history runs/NAME [--port N]

The parser and ``main``: serve until Ctrl-C or SIGTERM (:func:`harness.history.serve` starts the server, prints
its URL and ends it).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from harness.history import serve
from sparkdl.cli import on_interrupt, run_cli
from sparkdl.options import CommandParser, add_campaign


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl history", description=__doc__.split("\n")[0])
    add_campaign(p, "its runs/<key>/ hold the event logs", folder_only=True)
    p.add_argument("--port", type=int, help="port of the History Server's UI (default: a free one)")
    p.add_argument("--timeout", type=float, default=90.0, help="seconds to wait until it lists the runs")
    return p


def _forever() -> None:
    while True:
        time.sleep(3600)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    on_interrupt("History Server stopped")
    serve(args.campaign, args.port, args.timeout, lambda m: print(m, flush=True), _forever)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
