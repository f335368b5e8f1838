"""Text and CSV renderings of an ANOVA result (JSON is ``AnovaResult.to_dict`` / ``Analysis.to_dict``) and of a
split-plot ANOVA (JSON is ``SplitPlotResult.to_dict``); :func:`anova_summary` and :func:`split_plot_summary` hold
the three together as one :class:`~models.summary.Summary`, as every model result of the package has."""

from __future__ import annotations

from models.anova.result import RESIDUAL, AnovaResult
from models.anova.splitplot_result import DF_METHOD_TEXT, TESTS_TEXT, SplitPlotResult
from models.summary import Summary, num, p_text


def shares_differ(result: AnovaResult) -> bool:
    """True when the design is not orthogonal and LMG shares were computed: show them beside the SS shares."""
    return result.shares is not None and result.shares.computed and not result.shares.orthogonal


def format_table(result: AnovaResult) -> str:
    """The ANOVA rows as an aligned text table; with an ``%LMG`` column when the design is not orthogonal."""
    lmg = shares_differ(result)
    head = ["term", "df", "sum_sq", "mean_sq", "F", "p", "%SS(overlap)" if lmg else "%var", "effect", "coef"]
    body = [
        [r.term, num(r.df, "{:g}"), num(r.sum_sq), num(r.mean_sq), num(r.F), num(r.p, "{:.3g}"),
         num(r.pct_variation, "{:.2f}"), num(r.effect), num(r.coefficient)]
        for r in result.rows
    ]
    if lmg:
        assert result.shares is not None
        head.insert(7, "%LMG")
        for row, r in zip(body, result.rows):
            share = result.shares.residual_pct if r.term == RESIDUAL else result.shares.share(r.term)
            row.insert(7, num(share, "{:.2f}"))
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
    lines += shares_lines(result)
    return "\n".join(lines)


def shares_lines(result: AnovaResult) -> list[str]:
    """What the SS shares mean here: the plain statement that they do not partition the total, and LMG's."""
    sh = result.shares
    if sh is None or sh.orthogonal:
        return []
    if not sh.computed:
        return [f"shares: SS shares add up to {sh.ss_total_pct:.1f} % (terms and residual); LMG shares {sh.reason}"]
    if sh.typ == 1:
        head = (f"shares: the design is not orthogonal, so Type 1 SS shares add up to {sh.ss_total_pct:.1f} % but "
                "depend on the order of the terms")
    else:
        head = (f"shares: the design is not orthogonal, so Type {sh.typ} SS shares do not partition the total: "
                f"with the residual they add up to {sh.ss_total_pct:.1f} % ({sh.ss_miss_pct:+.1f} points)")
    return [head + "; LMG shares, each term's average gain in R^2 over all orders of entry (interactions after "
            f"their main effects, {sh.orders} orders), do partition it: the terms' LMG shares add up to R^2 = "
            f"{100 * sh.r_squared:.2f} %, and with the residual's {sh.residual_pct:.2f} % to 100 %"]


def format_csv(result: AnovaResult) -> str:
    """The ANOVA rows as CSV (term first), with an ``lmg_pct`` column when the design is not orthogonal."""
    table = result.table().reset_index()
    if shares_differ(result):
        assert result.shares is not None
        sh = result.shares
        table["lmg_pct"] = [sh.residual_pct if t == RESIDUAL else sh.share(t) for t in table["term"]]
    return table.to_csv(index=False)


def format_split_plot(result: SplitPlotResult) -> str:
    """A split-plot ANOVA as text: the whole plots, the term tests by stratum, both error strata, the
    variance components, the untestable terms (one line each) and the notes."""
    wp = result.whole_plots
    lo, hi = wp.sizes
    size = f"{lo}" if lo == hi else f"{lo} to {hi}"
    lines = [
        f"split-plot ANOVA: {result.n} runs in {wp.count} whole plots of {size} runs (whole plot = {wp.source}); "
        f"whole-plot factors: {', '.join(wp.factors) or 'none'}"
        + (f"; blocks: {wp.block} (fixed)" if wp.block else ""),
        f"model: {result.formula}, with a random intercept per whole plot, fitted by REML",
        f"tests: {TESTS_TEXT}",
        f"denominator df: {DF_METHOD_TEXT}",
        "",
    ]
    head = ["term", "stratum", "df", "den df", "F", "p"]
    body = [[r.term, r.stratum, f"{r.df_num}", "-" if r.df_den is None else f"{r.df_den}", num(r.F),
             p_text(r.p)] for r in result.rows]
    widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]
    lines += ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
              for row in [head] + body]
    lines += ["", "error strata:"]
    for s in result.strata:
        lines.append(f"  {s.name}: df = {s.df}, SS = {num(s.sum_sq)}, MS = {num(s.mean_sq)}")
    parts = [f"{v.name} {num(v.variance)} ({num(100 * v.share, '{:.1f}')} %)" for v in result.variance_components]
    lines.append("variance components (REML): " + ", ".join(parts))
    lines += [f"cannot be tested: {u}" for u in result.untestable]
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


def format_split_plot_csv(result: SplitPlotResult) -> str:
    """The split-plot term tests as CSV (term first); untestable terms have empty F and p."""
    import csv
    import io

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["term", "stratum", "role", "df_num", "df_den", "F", "p", "note"])
    for r in result.rows:
        w.writerow([r.term, r.stratum, r.role, r.df_num, "" if r.df_den is None else r.df_den,
                    "" if r.F is None else repr(r.F), "" if r.p is None else repr(r.p), r.note or ""])
    return out.getvalue()


def anova_summary(result: AnovaResult) -> Summary:
    """The ANOVA table and the model's figures (text), the rows as the CSV (:func:`format_csv`'s columns), and
    ``to_dict()`` as the JSON."""
    table = result.table().reset_index()
    if shares_differ(result):
        assert result.shares is not None
        sh = result.shares
        table["lmg_pct"] = [sh.residual_pct if t == RESIDUAL else sh.share(t) for t in table["term"]]
    rows = tuple(tuple(r) for r in table.itertuples(index=False, name=None))
    lines = (format_table(result), "", format_summary(result))
    return Summary(tuple("\n".join(lines).split("\n")), tuple(table.columns), rows, result.to_dict())


def split_plot_summary(result: SplitPlotResult) -> Summary:
    """The split-plot ANOVA as text (:func:`format_split_plot`), its term tests as the CSV, ``to_dict()`` as JSON."""
    rows = tuple((r.term, r.stratum, r.role, r.df_num, r.df_den, r.F, r.p, r.note or "") for r in result.rows)
    return Summary(tuple(format_split_plot(result).split("\n")),
                   ("term", "stratum", "role", "df_num", "df_den", "F", "p", "note"), rows, result.to_dict())
