"""``sparkdl COMMAND ...`` (the console script) and ``python -m sparkdl COMMAND ...``.

Each command runs the same ``main`` as its ``python -m`` form (:mod:`sparkdl.commands` lists them), with
the same exit codes (:func:`sparkdl.cli.run_cli`). ``sparkdl --help`` lists the commands, one line each;
``sparkdl COMMAND --help`` is the command's own help.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from sparkdl.cli import run_cli
from sparkdl.commands import COMMANDS, Command, find
from sparkdl.errors import EXIT_INPUT, EXIT_OK


def usage() -> str:
    width = max(len(c.name) for c in COMMANDS)
    lines = ["usage: sparkdl COMMAND [OPTIONS]   (sparkdl COMMAND --help: the command's options)", "",
             "Experiments, not guesses: design, run and model training campaigns on Spark.", "", "commands:"]
    lines += [f"  {c.name:<{width}}  {c.summary}  (python -m {c.module.removesuffix('.__main__')})" for c in COMMANDS]
    return "\n".join(lines)


def load(command: Command):  # type: ignore[no-untyped-def]
    """The command's ``main(argv) -> int``, imported now."""
    return importlib.import_module(command.module).main


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``argv`` (default: ``sys.argv[1:]``) to a command; returns its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return EXIT_OK if args else EXIT_INPUT
    command = find(args[0])
    if command is None:
        name = repr(args[0][:60]) + ("..." if len(args[0]) > 60 else "")  # escaped and cut: one short line
        print(f"error: no command {name}: use one of {', '.join(c.name for c in COMMANDS)} "
              "(sparkdl --help)", file=sys.stderr)
        return EXIT_INPUT
    return run_cli(load(command), args[1:])


def console() -> None:
    """The ``sparkdl`` console script (setup.cfg's entry point)."""
    sys.exit(main())


if __name__ == "__main__":
    console()
