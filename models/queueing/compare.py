"""Schouten and Mukherjee's question: one fast server (rate k mu) or k slow servers (rate mu each)?

Both systems have the same total capacity k mu and see the same Poisson arrivals, so they have
the same utilization. The fast server is M/G/1 (Pollaczek-Khinchine, exact); the k slow ones are
M/G/k (Lee-Longton, an approximation that is exact for exponential job sizes).

Why the answer changes: the fast server serves each job k times faster (service time 1/(k mu)
instead of 1/mu) but makes every job queue behind the one in service; k slow servers let short
jobs pass a long one. The first effect dominates at low load and low variability, the second
at high load and high variability (Harchol-Balter 2013, ch. 14).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from models.queueing.formulas import QueueMetrics, arrival_rate_for, mg1, mgk

CLOSE = 0.05  # relative ET gap under which Lee-Longton's error can flip the verdict


@dataclass(frozen=True)
class Comparison:
    """ET of one fast server vs k slow ones at one utilization and job-size scv."""

    servers: int
    utilization: float
    scv: float
    fast: QueueMetrics
    slow: QueueMetrics

    @property
    def winner(self) -> str:
        """'fast' (one server of rate k mu), 'slow' (k servers of rate mu) or 'tie'."""
        if abs(self.fast.ET - self.slow.ET) <= 1e-12 * self.fast.ET:
            return "tie"
        return "fast" if self.fast.ET < self.slow.ET else "slow"

    @property
    def ratio(self) -> float:
        """ET(k slow) / ET(1 fast): above 1 the fast server wins."""
        return self.slow.ET / self.fast.ET


def compare(servers: int, utilization: float, scv: float, service_rate: float = 1.0) -> Comparison:
    """Compare M/G/1 at rate k*service_rate with M/G/k at service_rate, both at ``utilization``."""
    lam = arrival_rate_for(utilization, service_rate, servers)
    return Comparison(servers, utilization, scv, fast=mg1(lam, servers * service_rate, scv),
                      slow=mgk(lam, service_rate, servers, scv))


def compare_grid(servers: int, utilizations: Sequence[float], scvs: Sequence[float],
                 service_rate: float = 1.0) -> list[Comparison]:
    """``compare`` over every (utilization, scv) pair, utilization-major."""
    return [compare(servers, rho, c2, service_rate) for rho in utilizations for c2 in scvs]


def explain(c: Comparison) -> str:
    """One sentence: who wins at this utilization and scv, and why (queueing gap vs service gap)."""
    k = c.servers
    extra_wait = c.fast.ETq - c.slow.ETq  # queueing the single server adds (>= 0)
    saved_service = 1 / c.slow.service_rate - 1 / c.fast.service_rate  # service it saves
    head = f"rho={c.utilization:g}, scv={c.scv:g}: "
    gap = abs(c.ratio - 1)
    caveat = (f" The gap is {gap:.1%}, within the error Lee-Longton can make for M/G/{k}:"
              f" check with --simulate." if gap < CLOSE and c.scv != 1 else "")
    if c.winner == "fast":
        return (head + f"one fast server wins (ET {c.fast.ET:.3g} vs {c.slow.ET:.3g}): it makes jobs queue "
                f"{extra_wait:.3g} longer but serves each {saved_service:.3g} faster ({k}x), and at this load"
                f" and variability the service saving is larger." + caveat)
    if c.winner == "slow":
        return (head + f"{k} slow servers win (ET {c.slow.ET:.3g} vs {c.fast.ET:.3g}): with job sizes this variable,"
                f" short jobs wait behind long ones on a single server, and that extra queueing"
                f" ({extra_wait:.3g}) exceeds the {saved_service:.3g} its {k}x faster service saves." + caveat)
    return head + "a tie: the extra queueing equals the service saving." + caveat


def break_even_scv(servers: int, utilization: float) -> float:
    """The job-size scv above which k slow servers beat one fast one, under Lee-Longton.

    Both queueing delays scale by (1 + scv) / 2, so the slow servers win once
    (1 + scv) / 2 * (ETq(M/M/1, k mu) - ETq(M/M/k, mu)) exceeds the service saving (k - 1) / (k mu).
    """
    c = compare(servers, utilization, 1.0)
    gap = c.fast.ETq - c.slow.ETq
    if gap <= 0:
        return float("inf")  # k = 1: the two systems are the same
    return 2 * (1 / c.slow.service_rate - 1 / c.fast.service_rate) / gap - 1
