"""Queueing models: closed forms (M/M/1, M/M/k, M/G/1, M/G/k, G/G/k), checked by simulation."""

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

__all__ = [
    "METRIC_KEYS",
    "QueueMetrics",
    "arrival_rate_for",
    "erlang_b",
    "erlang_c",
    "ggk",
    "mg1",
    "mgk",
    "mm1",
    "mmk",
]
