"""Text and CSV renderings of an ANOVA result (JSON is ``AnovaResult.to_dict`` / ``Analysis.to_dict``)."""

from __future__ import annotations

import math

from models.anova.result import AnovaResult


def num(v: float | None, fmt: str = "{:.4g}") -> str:
    """A number for a table cell; ``-`` for None, NaN and inf."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return fmt.format(v)


def format_table(result: AnovaResult) -> str:
    """The ANOVA rows as an aligned text table."""
    head = ["term", "df", "sum_sq", "mean_sq", "F", "p", "%var", "effect", "coef"]
    body = [
        [r.term, num(r.df, "{:g}"), num(r.sum_sq), num(r.mean_sq), num(r.F), num(r.p, "{:.3g}"),
         num(r.pct_variation, "{:.2f}"), num(r.effect), num(r.coefficient)]
        for r in result.rows
    ]
    widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        for row in [head] + body
    ]
    return "\n".join(lines)


def format_summary(result: AnovaResult) -> str:
    """The model, R^2 figures, aliases left out, Lenth's PSE and notes, one line each."""
    s = result.summary
    lines = [
        f"model: {s.formula}   (Type {s.typ} sums of squares, {s.coding})",
        f"n = {s.n} jobs at {s.design_points} design points ({'replicated' if s.replicated else 'unreplicated'}); "
        f"residual df = {s.df_resid:g}",
        f"R^2 = {num(s.r_squared, '{:.4f}')}   adjusted R^2 = {num(s.adj_r_squared, '{:.4f}')}   "
        f"predicted R^2 = {num(s.pred_r_squared, '{:.4f}')} (PRESS = {num(s.press)})",
    ]
    if s.boxcox_lambda is not None:
        lines.append(f"Box-Cox lambda = {s.boxcox_lambda:.4f}")
    for a in s.aliased:
        lines.append(f"left out (aliased): {a.term} = {' + '.join(a.aliased_with) or 'intercept'}")
    if result.lenth:
        le = result.lenth
        lines.append(
            f"Lenth: PSE = {le.pse:.4g} on {le.df:.3g} df; margin of error = {le.margin_of_error:.4g}, "
            f"simultaneous = {le.simultaneous_margin_of_error:.4g}; active: {', '.join(le.active) or 'none'}"
        )
    lines += [f"note: {n}" for n in s.notes]
    return "\n".join(lines)


def format_csv(result: AnovaResult) -> str:
    """The ANOVA rows as CSV (term first)."""
    return result.table().reset_index().to_csv(index=False)
