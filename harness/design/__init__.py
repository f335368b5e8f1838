"""Experimental designs: fractional and full factorials, Box-Behnken, central composite, and their run order.

>>> from harness.design import make_factors, fractional, parse_generators
>>> fs = make_factors({n: [1, 4] for n in ["a", "b", "c", "d", "e", "f"]})
>>> d = fractional(fs, parse_generators("F=ABCDE", fs))
>>> d.n_runs, d.resolution, str(d.defining_relation[0])
(32, 6, 'ABCDEF')
"""

from harness.design._base import AliasChain, Design, Generator, Word
from harness.design.boxbehnken import box_behnken
from harness.design.ccd import CentralComposite, central_composite
from harness.design.factors import Factor, FactorSet, load_factors, make_factors
from harness.design.fractional import fractional, parse_generators
from harness.design.full import full_factorial
from harness.design.resolution import Search, by_resolution, search_generators
from harness.design.schedule import Job, Schedule, schedule
from harness.design.summary import describe, describe_schedule

__all__ = [
    "AliasChain",
    "CentralComposite",
    "Design",
    "Factor",
    "FactorSet",
    "Generator",
    "Job",
    "Schedule",
    "Search",
    "Word",
    "box_behnken",
    "by_resolution",
    "central_composite",
    "describe",
    "describe_schedule",
    "fractional",
    "full_factorial",
    "load_factors",
    "make_factors",
    "parse_generators",
    "schedule",
    "search_generators",
]
