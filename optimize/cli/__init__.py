"""The command lines of optimize's commands, one module each (``sparkdl pareto`` is :mod:`optimize.cli.pareto`).

Each module holds the command's parser, its ``main(argv) -> int`` and what it prints; the computing is in the
library module of the same name (:mod:`optimize.pareto`, :mod:`optimize.lr`, ...), which imports no argparse.
"""
