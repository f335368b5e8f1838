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
    """One configuration of a CPU + disk fit: its runs' mean response time and the model's."""

    config: CourierJob
    runs: int
    measured_ET: float
    predicted_ET: float  # inf when the fitted disk is unstable there
    disk_rho: float  # NaN then

    def to_dict(self) -> dict[str, Any]:
        c = self.config
        return {"batch_size": c.batch_size, "cpus": c.cpus, "workers": c.workers, "njobs": c.njobs,
                "epochs": c.epochs, "runs": self.runs, "measured_ET": self.measured_ET,
                "predicted_ET": self.predicted_ET, "disk_rho": self.disk_rho}


@dataclass(frozen=True)
class CpuDiskFit:
    """``cpu-disk``: the fitted disk rate and, per configuration, measured against predicted response time."""

    model: CpuDiskModel
    configs: tuple[ConfigFit, ...]

    COLUMNS = ("batch_size", "cpus", "workers", "njobs", "epochs", "runs", "measured_ET", "predicted_ET", "disk_rho")

    @property
    def mape(self) -> float:
        """Mean absolute percentage error over the configurations the model predicts (NaN: none)."""
        finite = [(r.measured_ET, r.predicted_ET) for r in self.configs if math.isfinite(r.predicted_ET)]
        return statistics.fmean(abs(p - m) / m for m, p in finite) if finite else math.nan

    def to_dict(self) -> dict[str, Any]:
        m = self.model
        return {"cpu_service_time": m.cpu_service_time,
                "disk_rate": {"intercept": m.intercept, "per_batch": m.per_batch, "per_process": m.per_process},
                "mape_config_means": self.mape, "rows": [r.to_dict() for r in self.configs]}

    def text(self) -> list[str]:
        m = self.model
        lines = [f"fitted disk service rate mu_D = {m.intercept:.4g} + {m.per_batch:.4g} * batch_size "
                 f"+ {m.per_process:.4g} * processes  (per second; cpu_service_time {m.cpu_service_time:g} s)",
                 f"{'batch':>6} {'cpus':>5} {'workers':>7} {'njobs':>5} {'epochs':>6} {'runs':>4} "
                 f"{'measured ET':>12} {'predicted ET':>12} {'disk rho':>8}"]
        for r in self.configs:
            c = r.config
            lines.append(f"{c.batch_size:>6} {c.cpus:>5} {c.workers:>7} {c.njobs:>5} {c.epochs:>6} "
                         f"{r.runs:>4} {r.measured_ET:>12.4g} {r.predicted_ET:>12.4g} {r.disk_rho:>8.3f}")
        lines.append(f"mean absolute percentage error over configurations (in-sample): {self.mape:.1%}")
        return lines

    def summary(self) -> Summary:
        rows = tuple(tuple(r.to_dict()[c] for c in self.COLUMNS) for r in self.configs)
        return Summary(tuple(self.text()), self.COLUMNS, rows, self.to_dict())


def cpu_disk_fit(model: CpuDiskModel, configs: Sequence[CourierJob], times: Sequence[float]) -> CpuDiskFit:
    """Each configuration's runs (in the order first seen) against ``model``'s prediction."""
    groups: dict[CourierJob, list[float]] = {}
    for config, seconds in zip(configs, times):
        groups.setdefault(config, []).append(seconds)
    out = []
    for config, measured in groups.items():
        try:
            p = model.predict(config)
            predicted, disk_rho = p.ET, p.disk_utilization
        except (UnstableQueueError, FitError):
            predicted, disk_rho = math.inf, math.nan
        out.append(ConfigFit(config, len(measured), statistics.fmean(measured), predicted, disk_rho))
    return CpuDiskFit(model, tuple(out))
