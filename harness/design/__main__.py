"""``sparkdl design``: make a design from a factors file and write its jobs as CSV.

    sparkdl design --factors examples/marinos2021/factors.toml --kind fractional \\
        --generators F=ABCDE --replications 10 --seed 42 --out design.csv
    sparkdl design --factors f.toml --kind ccd --axial face-centred --center-points 3 \\
        --seed 1 --out design.csv
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from harness.design._base import Design
from harness.design.boxbehnken import box_behnken
from harness.design.ccd import central_composite
from harness.design.factors import FactorSet, load_factors
from harness.design.fractional import fractional, parse_generators
from harness.design.full import full_factorial
from harness.design.resolution import search_generators
from harness.design.schedule import schedule
from harness.design.summary import describe, describe_schedule
from harness.errors import DesignError
from sparkdl.runspec import MAX_DESIGN_ROWS
from sparkdl.cli import run_cli
from sparkdl.options import CommandParser, add_out, add_seed, renamed

KINDS = ("fractional", "full", "box-behnken", "ccd")
AUTO, NONE = "auto", "none"
#: Factors that cost the cluster to change: ``nodes`` a rescale (workers started or stopped), ``runtime`` and
#: ``jvm`` a restart. Executors, cores, epochs, learning rate and batch size are spark-submit arguments, free
#: to change between jobs.
HARD_TO_CHANGE = ("nodes", "runtime", "jvm")


def whole_plot_factors(choice: str, design: Design, randomize: bool) -> tuple[str, ...]:
    """The hard-to-change factors of a split-plot order: ``auto`` the varying ones of :data:`HARD_TO_CHANGE`
    (only for a randomized order: ``--no-randomize`` asks for standard order), ``none`` none, else those named."""
    if choice == NONE:
        return ()
    varying = {f.name for f in design.factors.factors if len(f.levels) > 1}
    if choice == AUTO:
        return tuple(n for n in HARD_TO_CHANGE if n in varying) if randomize else ()
    names = tuple(dict.fromkeys(n.strip() for n in choice.split(",") if n.strip()))
    if not names:
        raise DesignError(f"--hard-to-change {choice!r}: name factors, e.g. nodes,runtime, or none")
    for name in names:
        design.factors.by_name(name)  # an unknown name is a DesignError naming the factors
    constant = [n for n in names if n not in varying]
    if constant:
        raise DesignError(f"--hard-to-change {constant[0]}: it has one level, so it never changes; leave it out")
    return names


def check_whole_plot_generators(design: Design, names: tuple[str, ...]) -> None:
    """Refuse a fraction that aliases a subplot main effect with a whole-plot effect (a defining word with
    exactly one subplot letter), as when a whole-plot factor is generated from subplot factors."""
    if not names or not design.defining_relation:
        return
    letter = {f.name: f.letter for f in design.factors.factors}
    whole = {letter[n] for n in names}
    for gen in design.generators:
        if gen.letter in whole and not set(gen.word) <= whole:
            raise DesignError(f"generator {gen} makes hard-to-change factor {gen.letter} from subplot factors: take "
                              f"the generators of the hard-to-change factors ({', '.join(names)}) from hard-to-change "
                              "factors only (as FrF2 does), or list the factor earlier so that it is not generated")
    for word in design.defining_relation:
        sub = [ch for ch in word.letters if ch not in whole]
        if len(sub) == 1:
            wp = "".join(ch for ch in word.letters if ch in whole)
            raise DesignError(f"the fraction's word {word} aliases subplot effect {sub[0]} with whole-plot effect {wp}: "
                              f"take the generators of the hard-to-change factors ({', '.join(names)}) from "
                              "hard-to-change factors only, and give each other generator a subplot letter")


class _Parser(CommandParser):
    def error(self, message: str) -> None:  # one line and exit code 2, like DesignError
        raise DesignError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="sparkdl design", description="Make an experimental design and its run order.")
    p.add_argument("--factors", required=True, help="TOML factors file ([factors.NAME] levels = [...])")
    p.add_argument("--kind", required=True, choices=KINDS,
                   help="full factorial, fractional factorial, Box-Behnken or central composite (ccd)")
    p.add_argument("--generators", help='fractional: generators, e.g. "F=ABCDE" or "D=AB E=AC"')
    p.add_argument("--resolution", type=int, help="fractional: smallest design of at least this resolution")
    p.add_argument("--center-points", type=int, default=3, help="box-behnken, ccd: center runs (default 3)")
    p.add_argument("--axial",
                   help="ccd: axial distance: rotatable (default), orthogonal, face-centred, or a number")
    renamed(p, "--alpha", "--axial")
    p.add_argument("--inscribed", action="store_true",
                   help="ccd: the given levels are the axial points and the cube lies inside (default: the cube)")
    p.add_argument("--replications", type=int, default=1, help="jobs per design point (default 1)")
    add_seed(p, "the random run order (required unless --no-randomize)", default=None)
    p.add_argument("--no-randomize", action="store_true", help="keep standard order")
    p.add_argument("--hard-to-change", metavar="NAMES", default=AUTO,
                   help="factors that cost a cluster rescale or restart, comma-separated: they become the whole-plot "
                        "factors of a split-plot design, each replicate with its own whole plots (default auto: "
                        "nodes, runtime and jvm when they vary and the order is randomized; none: complete "
                        "randomization)")
    renamed(p, "--block-on", "--hard-to-change")
    add_out(p, "the design CSV to write: one row per job, in execution order", required=True)
    return p


def hard_to_change(args: argparse.Namespace, factors: FactorSet) -> tuple[str, ...]:
    """The whole-plot factors a generator search must respect (before the design exists)."""
    if args.no_randomize and args.hard_to_change == AUTO or args.hard_to_change == NONE:
        return ()
    if args.hard_to_change == AUTO:
        return tuple(f.name for f in factors.factors if f.name in HARD_TO_CHANGE and len(f.levels) > 1)
    return tuple(n.strip() for n in args.hard_to_change.split(",") if n.strip())


def make_design(args: argparse.Namespace, factors: FactorSet) -> tuple[Design, list[str]]:
    """The design the options ask for and notes on how it was found; bad options raise DesignError."""
    if args.kind != "fractional" and (args.generators or args.resolution is not None):
        raise DesignError(f"--generators and --resolution apply to --kind fractional, not {args.kind}")
    if args.kind != "ccd" and (args.inscribed or args.axial is not None):
        raise DesignError(f"--axial and --inscribed apply to --kind ccd, not {args.kind}")
    if args.kind == "full":
        return full_factorial(factors), []
    if args.kind == "ccd":
        return central_composite(factors, args.axial or "rotatable", args.center_points, args.inscribed), []
    if args.kind == "box-behnken":
        return box_behnken(factors, args.center_points), []
    if (args.generators is None) == (args.resolution is None):
        raise DesignError("--kind fractional needs exactly one of --generators or --resolution")
    if args.generators is not None:
        return fractional(factors, parse_generators(args.generators, factors)), []
    found = search_generators(factors, args.resolution, whole_plot=hard_to_change(args, factors))
    design = fractional(factors, found.generators) if found.generators else full_factorial(factors)
    how = "minimum aberration"
    if not found.minimum_aberration:
        how = "search budget reached: not checked for minimum aberration"
    return design, [f"searched: the fewest runs with resolution >= {args.resolution} ({how})"]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 <= args.center_points <= MAX_DESIGN_ROWS:
        raise DesignError(f"--center-points {args.center_points}: give 0 to {MAX_DESIGN_ROWS}")
    factors = load_factors(args.factors)
    design, notes = make_design(args, factors)
    names = whole_plot_factors(args.hard_to_change, design, not args.no_randomize)
    check_whole_plot_generators(design, names)
    plan = schedule(design, args.replications, args.seed, not args.no_randomize, names)
    try:
        plan.write_csv(args.out)
    except OSError as exc:
        raise DesignError(f"cannot write {args.out}: {exc.strerror}: choose another --out") from None
    print("\n".join(notes + describe(design) + describe_schedule(plan) + [f"wrote {args.out}"]))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
