"""Which terms a model has: the default right-hand side, alias groups and Type III contrasts.

Default terms: every main effect, then each two-factor interaction that adds full rank to the
model matrix (so for a resolution IV design one of each aliased pair is kept and the others are
listed in :attr:`DefaultTerms.aliased`; a resolution V+ design keeps all). Alias groups such as
``"nodes:executors = epochs:batch_size"`` choose which member of a group is named.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import pandas as pd

from models.anova.design import INTERCEPT, code_factors, estimable_terms, factor_term, model_matrix, term_parts
from models.anova.result import Alias, DefaultTerms
from models.errors import AnalysisOptionError, FormulaError


def parse_aliases(groups: Iterable[str | Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    """Alias groups from strings like ``"a:b = c:d"`` or from sequences of term names."""
    out = []
    for g in groups:
        members = [m.strip() for m in g.split("=")] if isinstance(g, str) else [str(m).strip() for m in g]
        members = [m for m in members if m]
        if len(members) < 2:
            raise AnalysisOptionError(f"alias group {g!r} needs two or more terms, e.g. 'a:b = c:d'")
        out.append(tuple(members))
    return tuple(out)


def _canonical(term: str, order: dict[str, int]) -> str:
    return ":".join(sorted(term_parts(term), key=lambda p: order.get(p, len(order))))


def _bare(term: str, order: dict[str, int]) -> str:
    return _canonical(term.replace("C(", "").replace(")", ""), order)


def default_terms(
    frame: pd.DataFrame,
    factors: Sequence[str],
    aliases: Iterable[str | Sequence[str]] = (),
) -> DefaultTerms:
    """All main effects plus every two-factor interaction estimable alongside them."""
    if not factors:
        raise FormulaError("no factors: the table has no column that varies besides the response")
    order = {f: i for i, f in enumerate(factors)}
    mains = [factor_term(f, frame) for f in factors]
    pairs = [
        f"{factor_term(a, frame)}:{factor_term(b, frame)}"
        for i, a in enumerate(factors)
        for b in factors[i + 1 :]
    ]
    # Alias groups only set priority: the first-listed member of each group is tried before the
    # other interactions, so it is the one kept when the rank test finds the group aliased.
    firsts = {_canonical(g[0], order) for g in parse_aliases(aliases)}
    ordered = [t for t in pairs if _bare(t, order) in firsts] + [t for t in pairs if _bare(t, order) not in firsts]
    points = code_factors(frame[list(factors)].drop_duplicates(), factors)
    split = estimable_terms(model_matrix(" + ".join(mains + pairs), points), [INTERCEPT, *mains, *ordered])
    for term, _ in split.aliased:
        if term in mains:
            raise FormulaError(
                f"main effect {term!r} is not estimable from this design (confounded with other "
                "factors); drop that factor or give --terms"
            )
    kept = [t for t in mains + pairs if t in split.kept]
    aliased = sorted((Alias(t, p) for t, p in split.aliased), key=lambda a: pairs.index(a.term))
    return DefaultTerms(" + ".join(kept), tuple(kept), tuple(aliased))


def sum_coding(rhs: str, categorical: Iterable[str]) -> str:
    """Give C(x) and bare categorical names sum-to-zero contrasts (for Type III)."""
    out = re.sub(r"C\(\s*([A-Za-z_]\w*)\s*\)", r"C(\1, Sum)", rhs)
    for name in categorical:
        out = re.sub(rf"(?<![\w.(]){re.escape(name)}(?![\w(])(?!\s*,)", f"C({name}, Sum)", out)
    return out


def named_columns(rhs: str, columns: Iterable[str]) -> tuple[str, ...]:
    """The ``columns`` a right-hand side mentions, in column order (the factors of user terms)."""
    names = set(re.findall(r"[A-Za-z_]\w*", rhs))
    return tuple(c for c in columns if c in names)
