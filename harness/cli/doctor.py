"""Check that this machine can run the project: ``sparkdl doctor``.

The parser and ``main``: one line per check of :func:`harness.doctor.run_checks` with OK or a one-line fix;
exit 4 if any failed.
"""

from __future__ import annotations

import sys

from harness.doctor import run_checks
from sparkdl.cli import run_cli
from sparkdl.errors import EXIT_CLUSTER, EXIT_OK
from sparkdl.options import CommandParser


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(prog="sparkdl doctor", description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1", help="the address the local cluster will bind (default 127.0.0.1)")
    p.add_argument("--ports", default="7077,8080", help="ports the local cluster will need")
    args = p.parse_args(argv)
    checks = run_checks(args.host, tuple(int(x) for x in args.ports.split(",") if x))
    for c in checks:
        print(f"{'OK  ' if c.ok else 'FAIL'} {c.name:18} {c.detail}")
    return EXIT_OK if all(c.ok for c in checks) else EXIT_CLUSTER


if __name__ == "__main__":
    sys.exit(run_cli(main))
