"""The runtimes jobs run in: list them, prepare (install) one, check them.

    sparkdl runtime list [--format json] [FILE.toml ...]
    sparkdl runtime prepare NAME|FILE.toml
    sparkdl runtime doctor [NAME|FILE.toml ...]
    sparkdl runtime lock NAME|FILE.toml [--out FILE]

A runtime (see :mod:`cluster.runtime`) is a named, locked environment: a Spark version (from its
pyspark package), a Java version, Python packages and its own JVM defaults. Built in: ``bigdl``
(BigDL 2.4 on Spark 3.1.3 and Java 11) and ``spark4`` (Spark 4, Java 21 or 17, numpy 2). A job
names its runtime (``runtime = "..."`` in its description); a design column ``runtime`` makes it a
factor. A campaign prepares the runtimes its rows need by itself; ``prepare`` does it ahead.

The parser, ``main`` and what the command prints; ``doctor``'s checks are :func:`harness.runtime.doctor`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from collections.abc import Sequence

from cluster import runtime as runtimes
from cluster.runtime import Runtime
from harness.runtime import doctor
from sparkdl.cli import run_cli
from sparkdl.errors import EXIT_CLUSTER, EXIT_OK
from sparkdl.options import CommandParser, add_format, add_out


def _runtimes(names: Sequence[str]) -> list[Runtime]:
    return [runtimes.resolve(n) for n in (names or runtimes.builtin_names())]


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl runtime", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="every runtime: name, Spark, Java, Python, prepared")
    ls.add_argument("files", nargs="*", help="runtime TOML files to list besides the built-in ones")
    add_format(ls, ("text", "json"))
    prep = sub.add_parser("prepare", help="install a runtime's environment from its lock (once)")
    prep.add_argument("runtime", nargs="+", help="a built-in name or a runtime TOML file")
    prep.add_argument("--no-compile", action="store_true",
                      help="install only, leaving the Python modules to be compiled by the next prepare")
    doc = sub.add_parser("doctor", help="check prepared runtimes: Java, Python, Spark versions")
    doc.add_argument("runtime", nargs="*", help="default: every built-in runtime")
    lk = sub.add_parser("lock", help="resolve a runtime's requirements into its lock file")
    lk.add_argument("runtime", help="a built-in name or a runtime TOML file")
    add_out(lk, "the lock file to write (default: the runtime's own)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Exit 0; 4 when a runtime cannot be prepared or a doctor check fails."""
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    if args.command == "list":
        rows = [runtimes.describe(r) for r in _runtimes(())] + [runtimes.describe(runtimes.resolve(f))
                                                                 for f in args.files]
        if args.format == "json":
            print(json.dumps(rows, indent=2))
        else:
            print(f"{'name':<10} {'spark':<7} {'java':<9} {'python':<6} {'prepared':<8} description")
            for r in rows:
                print(f"{r['name']:<10} {r['spark_version']:<7} {r['java_version']:<9} {r['python']:<6} "
                      f"{'yes' if r['prepared'] else 'no':<8} {r['description']}")
        return EXIT_OK
    if args.command == "prepare":
        for name in args.runtime:
            done = runtimes.prepare(runtimes.resolve(name), progress=say, compile_modules=not args.no_compile)
            print(f"{done.runtime.name}: {done.path}" + (f" (built in {done.seconds:.1f} s with {done.installer})"
                                                          if done.seconds else " (already prepared)"))
        return EXIT_OK
    if args.command == "lock":
        if args.out is not None:
            runtimes.check_lock_out(args.out)  # before the runtime is resolved and uv is run
        rt = runtimes.resolve(args.runtime)
        out = args.out or rt.lock or Path(f"{rt.name}.lock")
        print(runtimes.lock(rt, out, progress=say))
        return EXIT_OK
    lines = [line for rt in _runtimes(args.runtime) for line in doctor(rt, required=bool(args.runtime))]
    for line in lines:
        print(line.text())
    return EXIT_OK if all(line.ok for line in lines) else EXIT_CLUSTER


if __name__ == "__main__":
    sys.exit(run_cli(main))
