"""The results of ``python -m models.queueing``'s commands, each with ``to_dict`` and one
:class:`~models.summary.Summary` (text, its table as CSV, the document as JSON):

=====================  ===============================================================
:class:`QueueMetrics`  one queue (``mm1`` ... ``ggk``): its own ``summary()``
:class:`QueuePlan`     ``from-results``: M/M/k and M/G/k at a utilization, from measured sizes
:class:`FastVsSlow`    ``compare``: one fast server against k slow ones, over a grid
:class:`CpuDiskFit`    ``cpu-disk``: the CPU + disk model fitted to a results table
=====================  ===============================================================
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from models.errors import FitError, UnstableQueueError
from models.queueing.compare import Comparison, break_even_scv, explain
from models.queueing.cpu_disk import CourierJob, CpuDiskModel
from models.queueing.formulas import METRIC_KEYS, QueueMetrics
from models.queueing.job_sizes import UNITS, JobSizes, Plan
from models.queueing.simulate import SimulationResult
from models.summary import Summary


def _metrics_row(m: QueueMetrics) -> dict[str, Any]:
    return {"servers": m.servers, "model": m.model, "arrival_rate": m.arrival_rate,
            "service_rate": m.service_rate, **m.metrics()}


#: The columns of a table of queues: one row per queue.
QUEUE_COLUMNS = ("servers", "model", "arrival_rate", "service_rate", *METRIC_KEYS)


@dataclass(frozen=True)
class QueuePlan:
    """``from-results``: the measured job sizes, and M/M/k and M/G/k for each k at ``utilization``."""

    sizes: JobSizes
    utilization: float
    plans: tuple[Plan, ...]

    @property
    def queues(self) -> tuple[QueueMetrics, ...]:
        return tuple(m for p in self.plans for m in (p.markovian, p.general))

    def to_dict(self) -> dict[str, Any]:
        s = self.sizes
        return {"job_size": {"quantity": s.quantity, "unit": UNITS[s.quantity], "runs": s.count, "mean": s.mean,
                             "scv": s.scv, "service_rate": s.service_rate},
                "utilization": self.utilization, "rows": [_metrics_row(m) for m in self.queues]}

    def text(self) -> list[str]:
        s = self.sizes
        lines = [f"job size = {UNITS[s.quantity]}; {s.count} runs from {s.source}",
                 f"mean {s.mean:.6g} -> service rate mu = 1/mean = {s.service_rate:.6g} per unit; "
                 f"scv {s.scv:.4g}; utilization {self.utilization:g}",
                 "M/M/k assumes exponential sizes (scv 1); M/G/k uses the measured scv (Lee-Longton; exact for k=1)",
                 f"{'k':>3} {'model':7} {'lambda':>10} " + " ".join(f"{key:>10}" for key in METRIC_KEYS)]
        for m in self.queues:
            row = _metrics_row(m)
            lines.append(f"{row['servers']:>3} {row['model']:7} {row['arrival_rate']:>10.5g} "
                         + " ".join(f"{row[key]:>10.5g}" for key in METRIC_KEYS))
        return lines

    def summary(self) -> Summary:
        rows = tuple(tuple(_metrics_row(m)[c] for c in QUEUE_COLUMNS) for m in self.queues)
        return Summary(tuple(self.text()), QUEUE_COLUMNS, rows, self.to_dict())


@dataclass(frozen=True)
class FastVsSlow:
    """``compare``: each cell of the grid, with its simulated mean response times when asked."""

    servers: int
    utilizations: tuple[float, ...]
    cells: tuple[Comparison, ...]
    simulated: tuple[tuple[SimulationResult, SimulationResult] | None, ...]

    COLUMNS = ("utilization", "scv", "ET_fast", "ET_slow", "ratio", "winner", "simulated_ET_fast",
               "simulated_ET_fast_low", "simulated_ET_fast_high", "simulated_ET_slow", "simulated_ET_slow_low",
               "simulated_ET_slow_high")

    def to_dict(self) -> dict[str, Any]:
        cells = []
        for c, sim in zip(self.cells, self.simulated):
            item: dict[str, Any] = {"servers": c.servers, "utilization": c.utilization, "scv": c.scv,
                                    "winner": c.winner, "ratio": c.ratio, "fast": c.fast.metrics(),
                                    "slow": c.slow.metrics()}
            if sim:
                item["simulated_ET"] = {"fast": vars(sim[0].ET), "slow": vars(sim[1].ET)}
            cells.append(item)
        return {"servers": self.servers, "cells": cells,
                "break_even_scv": {f"{rho:g}": break_even_scv(self.servers, rho) for rho in self.utilizations}}

    def text(self) -> list[str]:
        k = self.servers
        simulate = any(s is not None for s in self.simulated)
        lines = [f"one server of rate {k} vs {k} servers of rate 1 (times in units of a slow server's mean job)",
                 f"{'rho':>5} {'scv':>5} {'ET fast':>9} {'ET slow':>9} {'slow/fast':>9}  winner"
                 + ("   simulated ET fast [CI]   simulated ET slow [CI]" if simulate else "")]
        for c, sim in zip(self.cells, self.simulated):
            line = (f"{c.utilization:>5g} {c.scv:>5g} {c.fast.ET:>9.4g} {c.slow.ET:>9.4g} {c.ratio:>9.3f}  "
                    f"{c.winner:6}")
            if sim:
                line += "".join(f"   {s.ET.mean:.4g} [{s.ET.low:.4g}, {s.ET.high:.4g}]" for s in sim)
            lines.append(line)
        lines.append("")
        lines += [explain(c) for c in self.cells]
        lines.append("break-even scv (k slow servers win above it, Lee-Longton): "
                     + ", ".join(f"rho={rho:g}: {break_even_scv(k, rho):.3g}" for rho in self.utilizations))
        return lines

    def summary(self) -> Summary:
        rows = []
        for c, sim in zip(self.cells, self.simulated):
            ests = [x for s in sim for x in (s.ET.mean, s.ET.low, s.ET.high)] if sim else [None] * 6
            rows.append((c.utilization, c.scv, c.fast.ET, c.slow.ET, c.ratio, c.winner, *ests))
        return Summary(tuple(self.text()), self.COLUMNS, tuple(rows), self.to_dict())


@dataclass(frozen=True)
class ConfigFit:
    """One configuration of a CPU + disk fit: its runs' mean response time against the model's, with intervals.

    ``role`` is ``fit`` (its runs fitted the model) or ``test`` (held out: predicted, not fitted). The measured
    interval is the t interval of the runs' mean; the predicted one is the fitted line's confidence interval of
    mu_D mapped through E[T]; the run interval is the prediction interval of one more run's mu_D mapped alike,
    and ``inside`` counts the runs in it. NaN where there are too few runs or residual degrees of freedom.
    """

    config: CourierJob
    runs: int
    measured_ET: float
    predicted_ET: float  # inf when the fitted disk is unstable there
    disk_rho: float  # NaN then
    role: str = "fit"
    measured_low: float = math.nan
    measured_high: float = math.nan
    predicted_low: float = math.nan
    predicted_high: float = math.nan
    run_low: float = math.nan
    run_high: float = math.nan
    inside: int = 0

    def to_dict(self) -> dict[str, Any]:
        c = self.config
        return {"role": self.role, "batch_size": c.batch_size, "cpus": c.cpus, "workers": c.workers,
                "njobs": c.njobs, "processes": c.processes, "epochs": c.epochs, "runs": self.runs,
                "measured_ET": self.measured_ET, "measured_low": self.measured_low,
                "measured_high": self.measured_high, "predicted_ET": self.predicted_ET,
                "predicted_low": self.predicted_low, "predicted_high": self.predicted_high,
                "run_low": self.run_low, "run_high": self.run_high, "inside": self.inside,
                "disk_rho": self.disk_rho}


@dataclass(frozen=True)
class CpuDiskFit:
    """``cpu-disk``: the fitted disk rate and, per configuration, measured against predicted response time."""

    model: CpuDiskModel
    configs: tuple[ConfigFit, ...]
    level: float = 0.9

    COLUMNS = ("role", "batch_size", "cpus", "workers", "njobs", "processes", "epochs", "runs", "measured_ET",
               "measured_low", "measured_high", "predicted_ET", "predicted_low", "predicted_high", "run_low",
               "run_high", "inside", "disk_rho")

    def _mape(self, role: str) -> float:
        finite = [(r.measured_ET, r.predicted_ET) for r in self.configs
                  if r.role == role and math.isfinite(r.predicted_ET)]
        return statistics.fmean(abs(p - m) / m for m, p in finite) if finite else math.nan

    @property
    def mape(self) -> float:
        """Mean absolute percentage error over the fitted configurations the model predicts (NaN: none)."""
        return self._mape("fit")

    @property
    def test_mape(self) -> float:
        """The same over the held-out configurations (NaN: none)."""
        return self._mape("test")

    def to_dict(self) -> dict[str, Any]:
        m = self.model
        se = m.standard_errors
        return {"cpu_service_time": m.cpu_service_time,
                "disk_rate": {"intercept": m.intercept, "per_batch": m.per_batch, "per_process": m.per_process},
                "disk_rate_se": {"intercept": se[0], "per_batch": se[1], "per_process": se[2]},
                "residual_sd": m.residual_sd, "residual_df": m.residual_df, "level": self.level,
                "mape_config_means": self.mape, "mape_test_config_means": self.test_mape,
                "rows": [r.to_dict() for r in self.configs]}

    def text(self) -> list[str]:
        m = self.model
        se = m.standard_errors
        pct = f"{self.level:.0%}"
        lines = [f"fitted disk service rate mu_D = {m.intercept:.4g} + {m.per_batch:.4g} * batch_size "
                 f"+ {m.per_process:.4g} * processes  (per second; cpu_service_time {m.cpu_service_time:g} s)",
                 f"standard errors {se[0]:.3g}, {se[1]:.3g}, {se[2]:.3g}; residual SD of mu_D {m.residual_sd:.4g} "
                 f"on {m.residual_df} df",
                 f"{'role':>4} {'batch':>6} {'cpus':>4} {'workers':>7} {'njobs':>5} {'epochs':>6} {'runs':>4} "
                 f"{'measured ET [' + pct + ' CI]':>24} {'predicted ET [' + pct + ' CI]':>25} "
                 f"{'one run [' + pct + ' PI]':>18} {'inside':>6} {'disk rho':>8}"]

        def span(low: float, high: float) -> str:
            return "[-]" if math.isnan(low) else f"[{low:.4g}, {high:.4g}]"

        for r in self.configs:
            c = r.config
            lines.append(f"{r.role:>4} {c.batch_size:>6} {c.cpus:>4} {c.workers:>7} {c.njobs:>5} {c.epochs:>6} "
                         f"{r.runs:>4} "
                         f"{r.measured_ET:>8.4g} {span(r.measured_low, r.measured_high):>15} "
                         f"{r.predicted_ET:>8.4g} {span(r.predicted_low, r.predicted_high):>16} "
                         f"{span(r.run_low, r.run_high):>18} {f'{r.inside}/{r.runs}':>6} {r.disk_rho:>8.3f}")
        lines.append(f"mean absolute percentage error over configurations (in-sample): {self.mape:.1%}")
        if any(r.role == "test" for r in self.configs):
            lines.append(f"mean absolute percentage error over held-out configurations: {self.test_mape:.1%}")
        return lines

    def summary(self) -> Summary:
        rows = tuple(tuple(r.to_dict()[c] for c in self.COLUMNS) for r in self.configs)
        return Summary(tuple(self.text()), self.COLUMNS, rows, self.to_dict())


def _mean_interval(values: Sequence[float], level: float) -> tuple[float, float]:
    """The t interval of the mean of ``values`` (NaN for fewer than 2)."""
    if len(values) < 2:
        return math.nan, math.nan
    from scipy import stats

    half = stats.t.ppf(0.5 + level / 2, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    mean = statistics.fmean(values)
    return mean - half, mean + half


def cpu_disk_fit(model: CpuDiskModel, configs: Sequence[CourierJob], times: Sequence[float], level: float = 0.9,
                 test_configs: Sequence[CourierJob] = (), test_times: Sequence[float] = ()) -> CpuDiskFit:
    """Each configuration's runs (in the order first seen) against ``model``'s prediction; held-out ones after."""
    out = []
    for role, cs, ts in (("fit", configs, times), ("test", test_configs, test_times)):
        groups: dict[CourierJob, list[float]] = {}
        for config, seconds in zip(cs, ts):
            groups.setdefault(config, []).append(seconds)
        for config, measured in groups.items():
            try:
                p = model.predict(config)
                predicted, disk_rho = p.ET, p.disk_utilization
            except (UnstableQueueError, FitError):
                predicted, disk_rho = math.inf, math.nan
            mean_low, mean_high = model.time_interval(config, level, new_run=False)
            run_low, run_high = model.time_interval(config, level, new_run=True)
            inside = sum(run_low <= t <= run_high for t in measured)
            out.append(ConfigFit(config, len(measured), statistics.fmean(measured), predicted, disk_rho, role,
                                 *_mean_interval(measured, level), mean_low, mean_high, run_low, run_high, inside))
    return CpuDiskFit(model, tuple(out), level)
