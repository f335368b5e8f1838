"""The report's "Where the time goes" section: phases per run, host use over time, GC and CPU across the design.

Reads the ``phase_*``, ``spark_*`` and ``host_*`` columns of results.csv and a run's
``runs/<key>/host_samples.csv``. Shows the campaign's efficiency (training time over campaign
wall time), a stacked bar of phases per run, utilization over time of one run with its phase
boundaries, the ANOVA of the GC share and of CPU utilization across the design, and Albo Martínez 2021's
CPU queue with the measured utilization instead of the assumed zero.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from harness.phases import DESCRIPTIONS, PHASES
from report import html as h
from harness.sampler import SAMPLES_TABLE, read_samples
from models.anova import RESIDUAL
from models.anova.analysis import analyse
from models.errors import ModelError
from models.queueing.formulas import mm1

COLORS = ("#9e9e9e", "#bdbdbd", "#ffb74d", "#43a047", "#81c784", "#90caf9", "#e0e0e0")
RESPONSES = (("spark_gc_share", "GC share (JVM GC time / executor run time)"),
             ("host_cpu_busy_mean", "CPU utilization (mean % busy over the run)"))


def phase_frame(raw: pd.DataFrame) -> pd.DataFrame:
    """Runs that have phases, one row each, indexed by run key."""
    cols = [f"phase_{p}_s" for p in PHASES]
    if not set(cols) <= set(raw.columns):
        return pd.DataFrame()
    frame = raw.dropna(subset=["phase_training_s"]).copy()
    frame.index = [f"{int(r)}-{int(p)}" for r, p in zip(frame["run"], frame["replicate"])]
    return frame


def campaign_wall_s(raw: pd.DataFrame) -> float | None:
    """First run's start to last run's end (ISO timestamps in results.csv)."""
    if not {"start", "end"} <= set(raw.columns) or raw.empty:
        return None
    start = pd.to_datetime(raw["start"], utc=True, format="ISO8601")
    end = pd.to_datetime(raw["end"], utc=True, format="ISO8601")
    return float((end.max() - start.min()).total_seconds())


def stacked_bars(frame: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(7.5, 0.45 * len(frame) + 1.4))
    ax = fig.add_subplot()
    left = np.zeros(len(frame))
    y = np.arange(len(frame))
    for phase, color in zip(PHASES, COLORS):
        width = frame[f"phase_{phase}_s"].fillna(0).to_numpy(dtype=float)
        ax.barh(y, width, left=left, color=color, label=phase, edgecolor="white", linewidth=0.5)
        left += width
    ax.set_yticks(y, list(frame.index))
    ax.invert_yaxis()
    ax.set_xlabel("seconds from submit")
    ax.legend(ncol=len(PHASES), fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def utilization_figure(samples_csv: Path, row: pd.Series) -> Figure:
    samples = read_samples(samples_csv)
    t0 = samples[0].time - samples[0].interval_s
    t = [s.time - t0 for s in samples]
    fig = Figure(figsize=(7.5, 3.2))
    ax = fig.add_subplot()
    ax.plot(t, [s.cpu_busy_pct for s in samples], label="CPU busy % (all cores)", color="#1e88e5")
    ax.plot(t, [s.iowait_pct for s in samples], label="iowait %", color="#e53935")
    ax.set_ylim(0, 110)
    ax.set_xlabel("seconds from submit")
    ax.set_ylabel("%")
    ax2 = ax.twinx()
    ax2.plot(t, [s.jvm_cpu_pct / 100 for s in samples], label="executors: cores used", color="#43a047", ls="--")
    ax2.set_ylabel("cores used by executors")
    edge = 0.0
    for phase, color in zip(PHASES, COLORS):
        v = row.get(f"phase_{phase}_s")
        if v is None or pd.isna(v):
            continue
        ax.axvspan(edge, edge + float(v), color=color, alpha=0.25, lw=0)
        if float(v) > 0.04 * float(row.get("phase_total_s") or 1):
            ax.text(edge + float(v) / 2, 103, phase, fontsize=6, ha="center", va="bottom")
        edge += float(v)
    lines = ax.get_legend_handles_labels()
    more = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="center left")
    fig.tight_layout()
    return fig


def _anova_table(frame: pd.DataFrame, response: str, factors: Sequence[str]) -> str:
    usable = frame.dropna(subset=[response])
    if len(usable) < 3:
        return h.para(f"{response}: too few runs with this figure for an ANOVA ({len(usable)}).")
    if usable[response].astype(float).nunique() < 2:
        return h.para(f"{response} is {float(usable[response].iloc[0]):g} in every run: nothing varies to analyse "
                      "(for CPU busy at 100 %, the host was saturated throughout).")
    varying = [f for f in factors if usable[f].nunique(dropna=True) > 1]
    if not varying:
        return h.para(f"{response}: no factor varies among these runs.")
    try:
        a = analyse(usable, response, varying, plots=False)
    except ModelError as e:
        return h.para(f"{response}: the ANOVA could not be fitted: {e}")
    if a.anova is None:
        return h.para(f"{response}: {a.unavailable}")
    rows = [(h.tcell(r.term), h.ncell(r.df, lambda v: f"{v:g}"), h.ncell(r.F), h.ncell(r.p, h.pval),
             h.ncell(r.pct_variation, h.pct)) for r in a.anova.rows]
    sh = a.anova.shares
    if sh is None or not sh.computed or sh.orthogonal:
        return h.table(("term", "df", "F", "p", "% of variation"), rows)
    lmg = [(*row, h.ncell(sh.residual_pct if r.term == RESIDUAL else sh.share(r.term), h.pct))
           for row, r in zip(rows, a.anova.rows)]
    return h.table(("term", "df", "F", "p", "% of variation", "LMG share %"), lmg,
                   caption=f"not orthogonal: the SS shares add up to {h.pct(sh.ss_total_pct)} %; the LMG shares "
                           "(average gain in R^2 over all orders of entry) add up to 100 %")


def cpu_queue_rows(frame: pd.DataFrame) -> list[tuple[str, float, float, float]]:
    """Per run: measured CPU utilization rho, iowait, and the PS slow-down 1/(1 - rho) Albo Martínez 2021 takes as 1."""
    out = []
    for key, r in frame.iterrows():
        busy, iowait = r.get("host_cpu_busy_mean"), r.get("host_iowait_mean")
        if busy is None or pd.isna(busy):
            continue
        rho = min(float(busy) / 100, 0.999)
        # processor sharing has M/M/1's mean response time: with service rate 1, ET is the slow-down
        out.append((str(key), rho, float(iowait or 0.0), mm1(rho, 1.0).ET))
    return out


def time_section(raw: pd.DataFrame, campaign_dir: Path | None, factors: Sequence[str]) -> str:
    """The section's HTML; says what is missing when the campaign has no phase columns."""
    frame = phase_frame(raw)
    if frame.empty:
        return h.para("No phase columns in results.csv: this campaign was run without event logs and host "
                      "sampling: a campaign run by sparkdl submit records both.")
    parts = []
    wall = campaign_wall_s(raw)
    train = float(frame["phase_training_s"].sum())
    val = float(frame["phase_validation_s"].fillna(0).sum())
    if wall:
        parts.append(h.para(f"Training took {train:.1f} s and validation {val:.1f} s of the campaign's "
                            f"{wall:.1f} s wall time: efficiency {100 * train / wall:.1f} %."))
    means = [(h.tcell(p), h.tcell(DESCRIPTIONS[p]), h.ncell(frame[f"phase_{p}_s"].mean(), lambda v: f"{v:.2f}"))
             for p in PHASES]
    parts.append(h.table(("phase", "from - to", "mean s"), means))
    parts.append(h.figure(stacked_bars(frame), "phases per run",
                          "Phases of every run, from submit to spark-submit's exit."))
    if campaign_dir is not None:
        sampled = [k for k in frame.index if (Path(campaign_dir) / "runs" / str(k) / SAMPLES_TABLE).is_file()]
        if sampled:
            chosen = max(sampled, key=lambda k: float(frame.loc[k].get("elapsed_s", 0) or 0))
            samples = Path(campaign_dir) / "runs" / str(chosen) / SAMPLES_TABLE
            if read_samples(samples):
                parts.append(h.figure(utilization_figure(samples, frame.loc[chosen]), f"utilization of run {chosen}",
                                      f"Host utilization during run {chosen} (the longest sampled run), with its "
                                      "phase boundaries."))
    for response, title in RESPONSES:
        if response in frame.columns:
            parts.append(h.para(f"ANOVA of the {title}:"))
            parts.append(_anova_table(frame, response, [f for f in factors if f in frame.columns]))
    queue = cpu_queue_rows(frame)
    if queue:
        parts.append(h.para("Albo Martínez 2021 models the CPU as a processor-sharing queue and takes its utilization as 0 "
                            "(no more tasks than cores), so E[T_cpu] = E[S_cpu]. Measured, a run's CPU was busy "
                            "rho of the time, which stretches each CPU phase by 1 / (1 - rho); the disk queue needs "
                            "iowait, which is near zero when the data are in memory."))
        parts.append(h.table(("run", "measured rho_cpu", "iowait %", "CPU slow-down 1/(1-rho)"),
                             [(h.tcell(k), h.ncell(rho), h.ncell(io, lambda v: f"{v:.2f}"), h.ncell(s))
                              for k, rho, io, s in queue]))
    return "".join(parts)
