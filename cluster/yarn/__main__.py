"""``python -m cluster.yarn prepare``: fetch Hadoop's jars into the checksummed cache and compile the HDFS launcher
(what ``make hadoop`` runs, and ``sparkdl cluster start --yarn`` on first use)."""

import sys

from cluster.yarn import hadoop
from sparkdl.cli import run_cli


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args != ["prepare"]:
        print("usage: python -m cluster.yarn prepare", file=sys.stderr)
        return 2
    done = hadoop.prepare(progress=lambda m: print(m, flush=True))
    print(f"hadoop {hadoop.VERSION}: {done.home} (Java {done.java_home})")
    return 0


sys.exit(run_cli(main))
