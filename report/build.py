"""Assemble the report: read the campaign, analyse it, and render every section as one HTML page.

Sections, in order: provenance, what the data say, design and aliasing, run status, ANOVA (with
the Pareto and half-normal plots), assumption checks (with the residual plots), effect plots,
queueing, where the time goes, time against accuracy (the Pareto front), response surfaces, any
optional sections (:mod:`report.extras`), the results table and method
notes. A section whose input is missing says why instead of failing the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from report import extras
from report import front as time_accuracy
from report import html as h
from report.analysis import Best, Queueing, analyse_campaign, best_point, point_summary, queueing
from report.campaign import CampaignData, load_campaign
from report.findings import failure_reasons, findings
from report.recover import RecoveredDesign, recover_design
from report.surfaces import render as render_surfaces
from report.timing import time_section
from report.until import until_result, until_section
from models.anova import RESIDUAL
from models.anova.analysis import Analysis
from models.anova.format import shares_lines
from models.errors import MissingColumnError, ModelError
from models.predict.ceiling import NoiseCeiling, noise_ceiling
from models.results import ok_mask, one_time_span

MAX_JOB_ROWS = 200
MAX_FAILED_LOGS = 10
META_ORDER = ("created", "design_path", "design_sha256", "seed", "tool_revision", "python", "runtimes", "pyspark", "bigdl",
              "java_home", "host", "cluster", "data", "executor_memory", "driver_memory", "timeout_s", "retries")
FIGURE_CAPTIONS = {
    "pareto": "Pareto chart of standardized effects (|effect| / standard error, or / Lenth's PSE without residual "
              "df); bars past the dashed line are significant.",
    "half_normal": "Half-normal plot of the absolute effects: effects far above the line through the small ones "
                   "are likely real.",
    "main_effects": "Main effects: mean response at each level of each factor; the dashed line is the grand mean.",
    "interactions": "Interaction plots: non-parallel lines mean the effect of one factor depends on the other.",
    "qq_residuals": "Normal Q-Q plot of the residuals: points off the line mean the residuals are not normal.",
    "residuals_vs_fitted": "Residuals against fitted values: a funnel means the variance grows with the mean.",
}


@dataclass(frozen=True, eq=False)
class Report:
    """The rendered page and the figures behind it."""

    html: str
    campaign: CampaignData
    design: RecoveredDesign
    analysis: Analysis
    summary: pd.DataFrame
    best: Best | None
    queue: Queueing | None
    queue_problem: str | None
    findings: tuple[str, ...]
    response: str
    sections: tuple[str, ...] = field(default_factory=tuple)

    def write(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.html, encoding="utf-8")
        return p


# --- sections --------------------------------------------------------------------------------


def _provenance(c: CampaignData, response: str, generated: str) -> str:
    pairs: list[tuple[str, object]] = [
        ("source", str(c.source)),
        ("results table", f"{c.results_path.name}, {len(c.raw)} row(s), sha256 {c.results_sha256[:16]}"),
        ("response", response),
        ("cost", c.table.cost_name if c.table is not None else (c.cost_problem or "-")),
    ]
    measured = _wall_clock_measured(c)
    if measured:
        pairs.append(("wall_clock_s measured", measured))
    if c.table is not None and c.table.time_span:  # mixed spans: what the analysis did (models.results, rule 2)
        pairs.append(("time analysed", c.table.time_span))
    keys = [k for k in META_ORDER if k in c.meta] + sorted(k for k in c.meta if k not in META_ORDER)
    for k in keys:
        v = c.meta[k]
        if k == "design_sha256" and isinstance(v, str):
            v = v[:16]
        pairs.append((k.replace("_", " "), v if not isinstance(v, (dict, list)) else _compact(v)))
    pairs.append(("report generated", generated))
    body = h.keyvalue(pairs, "provenance")
    if c.meta_problem:
        body += h.notice(c.meta_problem)
    elif not c.is_campaign:
        body += h.para("A plain results table: no campaign records (provenance, attempts, logs) come with it.", "small")
    return body


def _wall_clock_measured(c: CampaignData) -> str | None:
    """Which span each job's wall_clock_s is (sparkdl.times): the training call, or BigDL's own Wall Clock."""
    from sparkdl.times import describe_wall_clock

    if "wall_clock_of" not in c.raw.columns:
        return None
    rows = c.raw.astype(object).where(c.raw.notna(), None).to_dict("records")
    return describe_wall_clock(rows, _manifest_job(c.source))


def _manifest_job(source: Path) -> str | None:
    """The campaign's job as its manifest names it (None for a plain table or an unreadable manifest)."""
    from sparkdl.campaign import CampaignDir
    from sparkdl.errors import CampaignError

    folder = CampaignDir.of(source)
    try:
        manifest = folder.read_manifest() if folder is not None else None
    except CampaignError:
        return None
    return manifest.job if manifest is not None else None


def _compact(v: object) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}={_compact(x)}" for k, x in v.items())
    if isinstance(v, list):
        return ", ".join(_compact(x) for x in v)
    return str(v)


def _design(d: RecoveredDesign, c: CampaignData) -> str:
    parts = [h.para(f"{d.title}. {d.replication_text()}.")]
    if d.factors:
        rows = [[h.tcell(f.letter), h.tcell(f.name), h.tcell(", ".join(h.level(v) for v in f.levels)),
                 h.ncell(len(f.levels))] for f in d.factors]
        parts.append(h.table(["letter", "factor", "levels", "n levels"], rows, table_id="factors",
                             numeric_headers=[False, False, False, True]))
    if d.constants:
        parts.append(h.para("Fixed in every job: " + ", ".join(f"{k} = {h.level(v)}" for k, v in d.constants) + "."))
    if c.measurements:
        parts.append(h.para("Set aside as measurements, not factors (too many distinct values): "
                            + ", ".join(c.measurements) + "."))
    if d.lines and d.kind in ("full factorial", "fractional factorial"):
        parts.append(h.pre("\n".join(d.lines)))
    elif d.lines:
        parts += [h.para(line[0].upper() + line[1:] + ".") for line in d.lines]
    if d.names and len(c.frame):
        analysed = c.frame[list(d.names)].drop_duplicates().shape[0]
        if analysed < d.n_points:
            parts.append(h.notice(f"Only {analysed} of the {d.n_points} design points have a usable job; the ANOVA "
                                  "works with those, so some terms above may not be estimable."))
    return "\n".join(parts)


def _status(c: CampaignData) -> str:
    raw = c.raw
    if "status" not in raw.columns:
        return h.para(f"The table has no status column: all {len(raw)} rows are taken as finished jobs.")
    counts = raw["status"].astype(str).value_counts()
    order = ["ok", "failed", "incomplete"] + sorted(s for s in counts.index if s not in ("ok", "failed", "incomplete"))
    rows = [[h.tcell(s), h.ncell(int(counts.get(s, 0)))] for s in order if s in counts.index or s in ("ok", "failed",
                                                                                                       "incomplete")]
    rows.append([h.Cell("total", raw_html="<strong>total</strong>"), h.ncell(len(raw))])
    parts = [h.table(["status", "jobs"], rows, table_id="status-counts", numeric_headers=[False, True])]
    reasons = failure_reasons(raw)
    if reasons:
        bad = raw[~ok_mask(raw)]
        key = bad["reason"].fillna("(no reason recorded)").astype(str) if "reason" in bad.columns else None
        kinds = bad["failure_kind"].fillna("").astype(str) if "failure_kind" in bad.columns else None
        rrows = []
        for s, r, n in reasons:
            sel = bad[(bad["status"].astype(str) == s) & (key == r)] if key is not None else bad
            runs = ", ".join(_key(row) for _, row in sel.head(12).iterrows()) + (" ..." if len(sel) > 12 else "")
            kind = ", ".join(sorted(set(kinds[sel.index]) - {""})) if kinds is not None else ""
            rrows.append([h.tcell(s), h.tcell(kind or "-"), h.tcell(r), h.ncell(n), h.tcell(runs)])
        parts.append("<h3>Failure reasons</h3>")
        parts.append(h.table(["status", "kind", "reason", "jobs", "runs"], rrows, table_id="failure-reasons",
                             numeric_headers=[False, False, False, True, False]))
        tails = []
        opened = " open" if len(bad) <= 3 else ""
        for _, row in bad.head(MAX_FAILED_LOGS).iterrows():
            if "run" not in row or "replicate" not in row:
                break
            tail = c.log_tail(row["run"], row["replicate"], log=row.get("log"))
            if tail:
                where = tail[0] if "/" in tail[0] else f"logs/{tail[0]}"
                tails.append(f"<details{opened}><summary>run {h.esc(_key(row))}: last lines of {h.esc(where)}"
                             f"</summary>{h.pre(tail[1])}</details>")
        if tails:
            parts.append("<h3>Logs of failed runs</h3>" + "".join(tails))
    if c.attempts is not None and len(c.attempts):
        a = c.attempts
        retried = int((a.groupby(["run", "replicate"]).size() > 1).sum())
        interrupted = int((a["status"].astype(str) == "interrupted").sum()) if "status" in a.columns else 0
        parts.append(h.para(f"{len(a)} attempt(s) recorded for {a[['run', 'replicate']].drop_duplicates().shape[0]} "
                            f"run(s); {retried} run(s) needed more than one attempt; {interrupted} attempt(s) were "
                            "interrupted by a harness stop.", "small"))
    return "\n".join(parts)


def _key(row: pd.Series) -> str:
    if "run" in row and "replicate" in row:
        return f"{h.level(row['run'])}-{h.level(row['replicate'])}"
    return str(row.name)


def _results(c: CampaignData, d: RecoveredDesign, summary: pd.DataFrame) -> str:
    parts = []
    raw = c.raw
    if len(raw) <= MAX_JOB_ROWS:
        cols = [x for x in ("run", "replicate") if x in raw.columns] + list(d.names)
        cols += [x for x in ("status", "wall_clock_s", "accuracy", "cost") if x in raw.columns]
        numeric = [pd.api.types.is_numeric_dtype(raw[x]) for x in cols]
        rows = []
        for r in raw[cols].itertuples(index=False):
            rows.append([h.ncell(v) if n else h.tcell("" if pd.isna(v) else v) for v, n in zip(r, numeric)])
        parts.append(h.table(cols, rows, table_id="jobs", caption=f"every job ({len(raw)}), in file order",
                             numeric_headers=numeric))
    else:
        parts.append(h.para(f"{len(raw)} jobs: too many to list; each design point is summarized below "
                            f"(jobs with status ok and a finite cost only)."))
    if not summary.empty and (len(raw) > MAX_JOB_ROWS or len(summary) < len(c.frame)):
        cols = list(summary.columns)
        numeric = [pd.api.types.is_numeric_dtype(summary[x]) for x in cols]
        rows = [[h.ncell(v) if n and x not in d.names else h.tcell(h.level(v))
                 for v, n, x in zip(r, numeric, cols)] for r in summary.itertuples(index=False)]
        parts.append(h.table(cols, rows, table_id="points",
                             caption="per design point: number of usable jobs, mean and standard deviation",
                             numeric_headers=[n and x not in d.names for n, x in zip(numeric, cols)]))
    elif summary.empty and len(raw) > MAX_JOB_ROWS:
        parts.append(h.notice("No usable jobs to summarize."))
    return "\n".join(parts)


def _ceiling(frame: pd.DataFrame, response: str, factors: Sequence[str]) -> NoiseCeiling | None:
    """The response's noise ceiling over the design points (None when it cannot be computed)."""
    try:
        return noise_ceiling(frame, response, [f for f in factors if f in frame.columns])
    except ModelError:
        return None


def _ceiling_line(ceiling: NoiseCeiling | None, r_squared: float) -> str | None:
    if ceiling is None:
        return None
    if not ceiling.known:
        return "noise ceiling: not known (no design point was replicated): replicate some to learn how much is noise"
    share = ceiling.share(r_squared)
    return (f"noise ceiling: R^2 of the cell means = {h.num(ceiling.r2)} over {ceiling.n_replicated_cells} replicated "
            f"design point(s) (no model of these factors fits better); this model's R^2 is "
            f"{h.pct(100 * share) + ' %' if math.isfinite(share) else '-'} of it; replicate CV {h.pct(100 * ceiling.replicate_cv)} %")


def _anova(a: Analysis, ceiling: NoiseCeiling | None = None) -> str:
    if a.anova is None:
        return h.notice(a.unavailable or "No ANOVA was fitted.")
    r, s = a.anova, a.anova.summary
    parts = [_split_plot(a) if a.split_plot is not None else "",
             h.para(f"Model: {s.formula}"), h.para(f"Why this model: {a.choice.reason}." if a.choice else ""),]
    saturated = s.df_resid <= 0
    rows = []
    for row in r.rows:
        flat = row.term == RESIDUAL and row.df == 0
        rows.append([
            h.tcell(row.term), h.ncell(row.df), h.ncell(0.0 if flat else row.sum_sq),
            h.ncell(row.mean_sq), h.ncell(row.F), h.ncell(row.p, h.pval),
            h.Cell(h.pct(0.0 if flat else row.pct_variation), True, 0.0 if flat else _f(row.pct_variation),
                   raw_html=h.esc(h.pct(0.0 if flat else row.pct_variation)) + h.bar(0.0 if flat else row.pct_variation)),
            h.ncell(row.effect), h.ncell(row.coefficient),
        ])
    headers = ["term", "df", "sum of squares", "mean square", "F", "p", "% of variation", "effect", "coefficient"]
    caption = (f"Type {s.typ} sums of squares; % of variation = SS / total SS; effect and coefficient in coded "
               "units (-1/+1) for two-level numeric terms")
    sh = r.shares if r.shares is not None and r.shares.computed and not r.shares.orthogonal else None
    if sh is not None:
        for cells, row in zip(rows, r.rows):
            cells.append(h.ncell(sh.residual_pct if row.term == RESIDUAL else sh.share(row.term), h.pct))
        headers.append("LMG share %")
        caption += ("; the design is not orthogonal, so the SS shares overlap and do not partition the total: the "
                    "LMG share is each term's average gain in R^2 over all orders of entry, and these add up")
    parts.append(h.table(headers, rows, table_id="anova", numeric_headers=[False] + [True] * (len(headers) - 1),
                         caption=caption))
    items = [
        f"n = {s.n} jobs at {s.design_points} design points ({'replicated' if s.replicated else 'unreplicated'}); "
        f"model df = {h.num(s.df_model)}, residual df = {h.num(s.df_resid)}",
        f"R^2 = {h.num(s.r_squared)}; adjusted R^2 = {h.num(s.adj_r_squared)}; predicted R^2 = "
        f"{h.num(s.pred_r_squared)} (PRESS = {h.num(s.press)}); root MSE = {h.num(s.root_mse)}",
        *([line] if (line := _ceiling_line(ceiling, s.r_squared)) else []),
        f"coding: {s.coding}",
    ]
    for al in s.aliased:
        items.append(f"left out (aliased): {al.term} = {' + '.join(al.aliased_with) or 'intercept'}")
    items += shares_lines(r)
    if r.lenth is not None:
        le = r.lenth
        items.append(f"Lenth: PSE = {h.num(le.pse)} on {h.num(le.df, 3)} df; margin of error = "
                     f"{h.num(le.margin_of_error)}, simultaneous = {h.num(le.simultaneous_margin_of_error)}; active: "
                     f"{', '.join(le.active) or 'none'}")
    items += [f"note: {n}" for n in s.notes]
    parts.append(h.bullets(items))
    if saturated:
        parts.append(h.notice("No residual degrees of freedom: F and p cannot be computed. Replicate the design "
                              "points or run more of them to test the effects."))
    parts.append(_figures(a, EFFECT_FIGURES, pair=True))
    return "\n".join(p for p in parts if p)


def _split_plot(a: Analysis) -> str:
    """The split-plot ANOVA: each term tested in its stratum, both error strata and the variance components."""
    sp = a.split_plot
    assert sp is not None
    wp = sp.whole_plots
    parts = [h.para(f"The runs ran in {wp.count} whole plots (whole-plot factors: {', '.join(wp.factors) or 'none'}): "
                    "the cluster was set once per whole plot, so these factors are tested against the variation "
                    "between whole plots, not against the run-to-run residual. Model: "
                    f"{sp.formula}, with a random intercept per whole plot, fitted by REML.")]
    rows = [[h.tcell(r.term), h.tcell(r.stratum), h.ncell(float(r.df_num)),
             h.ncell(None if r.df_den is None else float(r.df_den)), h.ncell(r.F), h.ncell(r.p, h.pval)]
            for r in sp.rows]
    parts.append(h.table(["term", "stratum", "df", "denominator df", "F", "p"], rows, table_id="split-plot",
                         numeric_headers=[False, False, True, True, True, True],
                         caption=f"Type III Wald F tests; denominator df by the containment method ({sp.df_method})"))
    items = [f"{s.name}: df = {s.df}, mean square = {h.num(s.mean_sq)}" for s in sp.strata]
    items.append("variance components (REML): " + ", ".join(
        f"{v.name} {h.num(v.variance)}" + ("" if not math.isfinite(v.share) else f" ({h.pct(100 * v.share)}%)")
        for v in sp.variance_components))
    items += [f"cannot be tested: {u}" for u in sp.untestable]
    items += [f"note: {n}" for n in sp.notes]
    parts.append(h.bullets(items))
    parts.append(h.para("The ordinary ANOVA below treats the runs as fully randomized: its sums of squares and "
                        "effects describe the data, but its F and p for the whole-plot factors are not valid "
                        "tests; the table above is.", "small"))
    return "\n".join(parts)


def _drift(a: Analysis) -> str:
    d = a.drift
    if d is None:
        return h.notice(a.unavailable or "Drift was not checked: no model was fitted.")
    parts = [h.bullets(d.to_text().splitlines())]
    if "residuals_vs_run_order" in a.figures:
        parts.append(h.figure(a.figures["residuals_vs_run_order"], "residuals vs run order",
                              "The ANOVA's residuals against each run's start: a trend is drift the design did not "
                              "randomize away."))
    return "\n".join(parts)


def _f(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _verdict(holds: bool | None) -> h.Cell:
    word = {True: "holds", False: "violated", None: "not tested"}[holds]
    cls = {True: "verdict-holds", False: "verdict-violated", None: "verdict-not"}[holds]
    return h.Cell(word, raw_html=f'<span class="{cls}">{word}</span>')


def _checks(a: Analysis) -> str:
    if a.diagnostics is None:
        return h.notice("No model was fitted, so there are no residuals to check.")
    d = a.diagnostics
    parts = [h.para(f"Each test's null hypothesis is the assumption: p < {d.alpha:g} means the assumption is "
                    "violated; a larger p means no evidence against it.")]
    rows = [[h.tcell(c.name), h.tcell(c.assumption), h.ncell(c.statistic), h.ncell(c.p, h.pval), _verdict(c.holds),
             h.tcell(c.meaning)] for c in d.checks]
    parts.append(h.table(["check", "assumption", "statistic", "p", "verdict", "what it means"], rows,
                         table_id="checks", numeric_headers=[False, False, True, True, False, False]))
    parts.append(_figures(a, RESIDUAL_FIGURES, pair=True))
    if d.vif:
        vrows = [[h.tcell(v.term), h.ncell(v.vif), h.ncell(v.vif_coded)] for v in d.vif]
        parts.append(h.table(["model column", "VIF as fitted", "VIF coded + centred"], vrows, table_id="vif",
                             caption="variance inflation factors, computed with a constant",
                             numeric_headers=[False, True, True]))
    if d.remedies:
        parts.append("<h3>Remedies</h3>" + h.bullets([f"sparkdl anova ... {r}" for r in d.remedies]))
    cmp_ = a.log_comparison
    if cmp_ is not None:
        parts.append(f"<h3>What analysing {h.esc(cmp_.after)} changes</h3>")
        crow = [[h.tcell("R^2"), h.ncell(cmp_.r_squared[0]), h.tcell(""), h.ncell(cmp_.r_squared[1]), h.tcell("")]]
        for b, af in cmp_.checks:
            if not (math.isfinite(b.p) or math.isfinite(af.p)):
                continue
            crow.append([h.tcell(f"{b.name} p" if b.name == af.name else f"{b.name} / {af.name} p"),
                         h.ncell(b.p, h.pval), _verdict(b.holds), h.ncell(af.p, h.pval), _verdict(af.holds)])
        parts.append(h.table(["", cmp_.before, "", cmp_.after, ""], crow, table_id="log-checks",
                             numeric_headers=[False, True, False, True, False]))
        trows = [[h.tcell(t.term), h.ncell(t.pct_before, h.pct), h.ncell(t.p_before, h.pval),
                  h.ncell(t.pct_after, h.pct), h.ncell(t.p_after, h.pval)] for t in cmp_.terms]
        parts.append(h.table(["term", f"% var {cmp_.before}", "p", f"% var {cmp_.after}", "p"], trows,
                             table_id="log-terms", numeric_headers=[False, True, True, True, True]))
    if a.kruskal:
        krows = [[h.tcell(k.factor), h.ncell(k.levels), h.ncell(k.H), h.ncell(k.df), h.ncell(k.p, h.pval)]
                 for k in a.kruskal]
        parts.append("<h3>Kruskal-Wallis per factor</h3>" + h.para(
            "A rank test free of the normality assumption; each factor alone, the others ignored."))
        parts.append(h.table(["factor", "levels", "H", "df", "p"], krows, table_id="kruskal",
                             numeric_headers=[False, True, True, True, True]))
    return "\n".join(parts)


EFFECT_FIGURES = ("pareto", "half_normal")
RESIDUAL_FIGURES = ("qq_residuals", "residuals_vs_fitted")
FACTOR_FIGURES = ("main_effects", "interactions")


def _figures(a: Analysis, names: tuple[str, ...], pair: bool) -> str:
    if names == RESIDUAL_FIGURES and a.anova is not None and a.anova.summary.df_resid <= 0:
        return h.para("No residual plots: with no residual degrees of freedom the residuals are zero by "
                      "construction.", "small")
    figs = [h.figure(a.figures[n], n.replace("_", " "), FIGURE_CAPTIONS.get(n, n)) for n in names if n in a.figures]
    return h.figure_row(figs) if pair else "\n".join(figs)


def _plots(a: Analysis) -> str:
    if not a.figures:
        return h.notice(a.unavailable or "; ".join(a.notes) or "No plots: no model was fitted.")
    parts = [h.para("The effect and residual plots are shown with the ANOVA table and the assumption checks "
                    "above; these show the mean response by factor level.", "small"),
             _figures(a, FACTOR_FIGURES, pair=False)]
    parts += [h.para(n, "small") for n in a.notes]
    return "\n".join(parts)


def _queueing(q: Queueing | None, problem: str | None) -> str:
    if q is None:
        return h.notice(problem or "No job sizes.")
    s = q.sizes
    unit = "s" if s.quantity == "time" else "cost units"
    what = ("the wall clock of each usable job, in seconds" if s.quantity == "time" else
            "Marinos 2021's cost T / (100 A)^2 of each job (the table has no wall clock), in cost units")
    parts = [h.para(f"Job size = {what}: {s.count} jobs, mean {h.num(s.mean)} {unit}, squared coefficient of "
                    f"variation (scv) {h.num(s.scv, 3)}, so the service rate of one server is mu = 1 / mean = "
                    f"{h.num(s.service_rate)} jobs per {'second' if s.quantity == 'time' else 'cost unit'}."),
             h.para("Jobs are assumed to arrive as a Poisson stream at the rate that gives each utilization; "
                    "M/M/k further assumes exponential job sizes (scv 1, as Marinos 2021 does), M/G/k uses the "
                    "measured scv (exact Pollaczek-Khinchine for k = 1, Lee-Longton approximation above). "
                    "Times are in the job-size unit.", "small")]
    rows = []
    for u, plans in q.plans:
        for p in plans:
            m, g = p.markovian, p.general
            rows.append([h.ncell(u), h.ncell(p.servers), h.ncell(m.arrival_rate), h.ncell(m.p_wait), h.ncell(m.EN),
                         h.ncell(m.ETq), h.ncell(m.ET), h.ncell(g.EN), h.ncell(g.ET)])
    parts.append(h.table(["utilization", "servers k", "arrival rate", "P(wait) M/M/k", "E[N] M/M/k",
                          "E[Tq] M/M/k", "E[T] M/M/k", "E[N] M/G/k", "E[T] M/G/k"], rows, table_id="queueing",
                         numeric_headers=[True] * 9))
    return "\n".join(parts)


def _method(c: CampaignData, a: Analysis) -> str:
    items = [
        "Cost: " + (c.table.cost_name if c.table is not None else "not computed")
        + " with T the wall clock in seconds and A the accuracy as a fraction (Marinos 2021's cost is T / (A*100)^2).",
        "Only jobs with status ok and a finite cost are analysed; the others are counted under Run status.",
        "ANOVA: ordinary least squares with factors as numbers (text factors as categories), Type II sums of "
        "squares; the model is the largest of (main effects + estimable two-factor interactions) and (main "
        "effects only) that leaves residual degrees of freedom.",
        "Assumption checks read the right way round: a small p rejects the assumption. Equal variances are "
        "tested on the response grouped by design point (Bartlett if the residuals look normal, else Levene "
        "with the median); VIFs are judged with coded, centred factors.",
        "Queue metrics use the mean job size as the service time (Marinos 2021 used the mean cost); they are "
        "what-if figures for a shared cluster, not measurements.",
    ]
    return h.bullets(items, "small")


def _finite_response(frame: pd.DataFrame, response: str) -> pd.DataFrame:
    """Rows whose response is a finite number (the cost is finite already; another response may not be)."""
    if response not in frame.columns:
        return frame
    y = pd.to_numeric(frame[response], errors="coerce")
    return frame[y.notna() & y.abs().lt(float("inf"))].reset_index(drop=True)


# --- assembly --------------------------------------------------------------------------------


def _no_rows(campaign: CampaignData) -> str:
    """Why no job is analysed, e.g. "0 of 16 rows are ok (10 failed, 6 incomplete)"."""
    if campaign.table is None:
        return f"0 of {len(campaign.raw)} rows are ok: no usable jobs"
    try:
        campaign.table.require_rows()
    except ModelError as exc:
        return f"no usable jobs: {exc}"
    return "no usable jobs"


def build_report(path: str | Path, response: str = "cost", cost: str | None = None, alpha: float = 0.05,
                 generated: str | None = None, plots: bool = True, factors: Sequence[str] | None = None,
                 target_accuracy: float | None = None) -> Report:
    """Read, analyse and render the campaign at ``path`` (a directory or a results CSV).

    ``generated`` overrides the generation timestamp (for reproducible output); ``plots=False``
    skips drawing the figures, the slow part; ``target_accuracy`` is the accuracy the
    time-against-accuracy section finds the fastest run for (default: the best observed).
    """
    campaign = load_campaign(path, response=response, cost=cost, factors=factors)
    if response != "cost" and response not in campaign.raw.columns:  # as models.anova: a misspelt column is bad input
        raise MissingColumnError(f"--response {response!r} is not a column of the results table; pick one of "
                                 f"{', '.join(map(str, campaign.raw.columns))[:600]}")
    design = recover_design(campaign.raw, campaign.candidates)
    frame = campaign.frame
    if campaign.table is None and response == "cost":
        analysis = Analysis(unavailable=f"no cost could be computed: {campaign.cost_problem}")
    elif frame.empty:
        analysis = Analysis(unavailable=_no_rows(campaign))
    else:
        reference = campaign.table.reference if campaign.table is not None else None
        if reference is not None and response in reference.columns:
            reference = _finite_response(reference, response)
        analysis = analyse_campaign(_finite_response(frame, response), response, design.names, alpha, plots,
                                    reference)
    summary = point_summary(frame, design.names)
    best = best_point(summary, design.names, "cost" if "cost" in frame.columns else response)
    q = queueing(frame, str(campaign.results_path)) if len(frame) else "no usable jobs, so no job sizes"
    queue, queue_problem = (q, None) if isinstance(q, Queueing) else (None, q)
    sentences = findings(campaign, design, analysis, best, queue)
    stamp = generated or datetime.now(timezone.utc).isoformat(timespec="seconds")
    name = campaign.source.name if campaign.is_campaign else campaign.source.stem
    sections = [
        ("provenance", "Provenance", _provenance(campaign, response, stamp)),
        ("findings", "What the data say", h.bullets(sentences, "findings")),
        ("design", "Design and aliasing", _design(design, campaign)),
        ("status", "Run status", _status(campaign)),
        ("anova", "ANOVA", _anova(analysis, _ceiling(_finite_response(frame, response), response, design.names)
                                  if response in frame.columns and len(frame) else None)),
        ("checks", "Assumption checks", _checks(analysis)),
        ("drift", "Drift over run order", _drift(analysis)),
        ("plots", "Effect plots", _plots(analysis)),
        ("queueing", "Queueing", _queueing(queue, queue_problem)),
        ("time", "Where the time goes",
         time_section(campaign.raw, campaign.source if campaign.is_campaign else None, design.names)),
    ]
    front = time_accuracy.render(one_time_span(campaign.raw)[0], plots, target_accuracy,  # None without time, accuracy
                                 campaign.source if campaign.is_campaign else None, tuple(design.names))
    if front is not None:
        sections.append(("front", "Time against accuracy", front))
    surfaces = render_surfaces(campaign.raw, design, plots)  # None unless the design allows quadratic surfaces
    if surfaces is not None:
        sections.append(("surfaces", "Response surfaces and desirability", surfaces))
    for section, file in extras.present(campaign.source if campaign.is_campaign else None):
        sections.append((f"extra-{section.key}", section.title, extras.render(section, file)))
    until = until_result(campaign.source if campaign.is_campaign else None)
    if until is not None:
        sections.append(("until", "Replicate until sure", until_section(until)))
    sections.append(("results", "Results", _results(campaign, design, summary)))
    sections.append(("method", "Method notes", _method(campaign, analysis)))
    subtitle = f"{design.title}; {len(campaign.frame)} of {len(campaign.raw)} jobs analysed; response: {response}"
    page = h.page(f"Campaign report: {name}", subtitle, sections)
    return Report(page, campaign, design, analysis, summary, best, queue, queue_problem, tuple(sentences), response,
                  tuple(s[0] for s in sections))
