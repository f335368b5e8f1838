"""Queueing models: closed forms (M/M/1, M/M/k, M/G/1, M/G/k, G/G/k), checked by simulation.

Also Schouten and Mukherjee's one-fast-vs-k-slow comparison, Albo Martínez 2021's CPU + disk model, and queue metrics
from a results table. The CLI is ``sparkdl queueing``.
"""

from models.queueing.compare import Comparison, compare, compare_grid, explain
from models.queueing.cpu_disk import (
    CpuDiskModel,
    CpuDiskPrediction,
    CourierJob,
    cpu_disk_response_time,
    disk_service_rate_from_time,
    fit_cpu_disk,
)
from models.queueing.formulas import (
    METRIC_KEYS,
    QueueMetrics,
    arrival_rate_for,
    erlang_b,
    erlang_c,
    ggk,
    mg1,
    mgk,
    mm1,
    mmk,
)
from models.queueing.job_sizes import JobSizes, Plan, load_job_sizes, plan
from models.queueing.simulate import Estimate, SimulationResult, simulate, simulate_ps_tandem

__all__ = [
    "METRIC_KEYS",
    "Comparison",
    "CpuDiskModel",
    "CpuDiskPrediction",
    "Estimate",
    "CourierJob",
    "JobSizes",
    "Plan",
    "QueueMetrics",
    "SimulationResult",
    "arrival_rate_for",
    "compare",
    "compare_grid",
    "cpu_disk_response_time",
    "disk_service_rate_from_time",
    "erlang_b",
    "erlang_c",
    "explain",
    "fit_cpu_disk",
    "ggk",
    "load_job_sizes",
    "mg1",
    "mgk",
    "mm1",
    "mmk",
    "plan",
    "simulate",
    "simulate_ps_tandem",
]
