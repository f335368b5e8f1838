"""Closed forms for single-station queues: M/M/1, M/M/k, M/G/1, M/G/k and G/G/k.

Rates are per unit of time (per second if the job sizes are seconds); every time in a result
(``ET``, ``ETq``) is in that unit and every count (``EN``, ``ENq``) is a number of jobs.
``scv`` is the squared coefficient of variation, variance / mean**2 (0 deterministic,
1 exponential). M/M/1, M/M/k and M/G/1 are exact; M/G/k (Lee-Longton) and G/G/k
(Allen-Cunneen) are approximations, exact only where they reduce to an exact case.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from models.errors import QueueParameterError, UnstableQueueError
from models.summary import Summary

METRIC_KEYS = ("rho", "p_wait", "EN", "ENq", "ET", "ETq")


@dataclass(frozen=True)
class QueueMetrics:
    """Steady-state means of one queue.

    ``rho``: utilization of each server; ``p_wait``: probability that an arriving job waits;
    ``EN`` / ``ENq``: mean jobs in the system / in the queue; ``ET`` / ``ETq``: mean response /
    waiting time, in the time unit of the rates.
    """

    model: str
    arrival_rate: float
    service_rate: float
    servers: int
    rho: float
    p_wait: float
    EN: float
    ENq: float
    ET: float
    ETq: float

    def metrics(self) -> dict[str, float]:
        """The six metrics, keyed ``rho, p_wait, EN, ENq, ET, ETq``."""
        values = asdict(self)
        return {key: values[key] for key in METRIC_KEYS}

    def to_dict(self) -> dict[str, object]:
        """The queue (model, rates, servers) and its six metrics."""
        return asdict(self)

    def summary(self) -> Summary:
        """The metrics one a line (text), the queue as one CSV row, :meth:`to_dict` as the JSON."""
        lines = [f"{self.model}  arrival_rate={self.arrival_rate:g}  service_rate={self.service_rate:g}  "
                 f"servers={self.servers}", "(ET, ETq in the time unit of the rates; EN, ENq in jobs)"]
        lines += [f"{key:7s} {value:.6g}" for key, value in self.metrics().items()]
        columns = tuple(self.__dataclass_fields__)
        return Summary(tuple(lines), columns, (tuple(getattr(self, c) for c in columns),), self.to_dict())


def _check_rate(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise QueueParameterError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _check_scv(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise QueueParameterError(f"{name} must be a finite number >= 0 (0 = deterministic), got {value!r}")
    return value


def _check_servers(servers: int) -> int:
    if isinstance(servers, bool) or int(servers) != servers or servers < 1:
        raise QueueParameterError(f"servers must be an integer >= 1, got {servers!r}")
    return int(servers)


def _check_stable(arrival_rate: float, service_rate: float, servers: int) -> float:
    rho = arrival_rate / (servers * service_rate)
    if rho >= 1:
        needed = math.floor(arrival_rate / service_rate) + 1
        raise UnstableQueueError(
            f"unstable queue: arrival_rate {arrival_rate:g} >= servers {servers} x service_rate "
            f"{service_rate:g} (rho = {rho:.4g}); use at least {needed} servers, or a service_rate "
            f"above {arrival_rate / servers:g}, or an arrival_rate below {servers * service_rate:g}"
        )
    return rho


def _validated(arrival_rate: float, service_rate: float, servers: int) -> tuple[float, float, int, float]:
    lam = _check_rate("arrival_rate", arrival_rate)
    mu = _check_rate("service_rate", service_rate)
    k = _check_servers(servers)
    return lam, mu, k, _check_stable(lam, mu, k)


def erlang_b(servers: int, offered_load: float) -> float:
    """Erlang B blocking probability by the recursion B(n) = a B(n-1) / (n + a B(n-1)).

    ``offered_load`` a = lambda / mu, in Erlangs. Stable for any number of servers: every
    intermediate value is a probability, so nothing overflows (no factorials, no powers).
    """
    k = _check_servers(servers)
    a = float(offered_load)
    if not math.isfinite(a) or a < 0:
        raise QueueParameterError(f"offered_load must be a finite number >= 0, got {offered_load!r}")
    b = 1.0
    for n in range(1, k + 1):
        b = a * b / (n + a * b)
    return b


def erlang_c(servers: int, offered_load: float) -> float:
    """Erlang C: probability that an arriving job waits in M/M/k, C = B / (1 - rho (1 - B)).

    Needs rho = offered_load / servers < 1.
    """
    k = _check_servers(servers)
    rho = float(offered_load) / k
    if rho >= 1:
        raise UnstableQueueError(
            f"unstable queue: offered_load {offered_load:g} >= servers {k}; Erlang C needs rho < 1"
        )
    b = erlang_b(k, offered_load)
    return b / (1.0 - rho * (1.0 - b))


def _from_wait(model: str, lam: float, mu: float, k: int, rho: float, p_wait: float, etq: float) -> QueueMetrics:
    et = etq + 1.0 / mu
    return QueueMetrics(model, lam, mu, k, rho, p_wait, EN=lam * et, ENq=lam * etq, ET=et, ETq=etq)


def mm1(arrival_rate: float, service_rate: float) -> QueueMetrics:
    """M/M/1: ET = 1 / (mu - lambda), ETq = rho / (mu - lambda), p_wait = rho."""
    lam, mu, _, rho = _validated(arrival_rate, service_rate, 1)
    return QueueMetrics(
        "M/M/1", lam, mu, 1, rho, p_wait=rho,
        EN=rho / (1 - rho), ENq=rho * rho / (1 - rho), ET=1 / (mu - lam), ETq=rho / (mu - lam),
    )


def mmk(arrival_rate: float, service_rate: float, servers: int) -> QueueMetrics:
    """M/M/k: p_wait = Erlang C, ETq = C / (k mu - lambda), ET = ETq + 1/mu."""
    lam, mu, k, rho = _validated(arrival_rate, service_rate, servers)
    c = erlang_c(k, lam / mu)
    return _from_wait(f"M/M/{k}", lam, mu, k, rho, c, c / (k * mu - lam))


def mg1(arrival_rate: float, service_rate: float, scv: float) -> QueueMetrics:
    """M/G/1 by Pollaczek-Khinchine: ETq = rho / (1 - rho) * (1 + scv) / 2 * E[S]; p_wait = rho."""
    lam, mu, _, rho = _validated(arrival_rate, service_rate, 1)
    cs2 = _check_scv("scv", scv)
    return _from_wait("M/G/1", lam, mu, 1, rho, rho, rho / (1 - rho) * (1 + cs2) / 2 / mu)


def mgk(arrival_rate: float, service_rate: float, servers: int, scv: float) -> QueueMetrics:
    """M/G/k by Lee-Longton: ETq ~ (1 + scv) / 2 * ETq(M/M/k); p_wait ~ Erlang C.

    Exact for scv = 1 (M/M/k) and for k = 1 (Pollaczek-Khinchine); otherwise an approximation
    that uses only two moments of the job size, while the true M/G/k mean depends on more.
    """
    lam, mu, k, rho = _validated(arrival_rate, service_rate, servers)
    cs2 = _check_scv("scv", scv)
    c = erlang_c(k, lam / mu)
    return _from_wait(f"M/G/{k}", lam, mu, k, rho, c, (1 + cs2) / 2 * c / (k * mu - lam))


def ggk(arrival_rate: float, service_rate: float, servers: int, scv: float, scv_arrival: float) -> QueueMetrics:
    """G/G/k by Allen-Cunneen: ETq ~ (scv_arrival + scv) / 2 * ETq(M/M/k); p_wait ~ Erlang C.

    Equals Lee-Longton when scv_arrival = 1 and Kingman's formula when k = 1.
    """
    lam, mu, k, rho = _validated(arrival_rate, service_rate, servers)
    cs2 = _check_scv("scv", scv)
    ca2 = _check_scv("scv_arrival", scv_arrival)
    c = erlang_c(k, lam / mu)
    return _from_wait(f"G/G/{k}", lam, mu, k, rho, c, (ca2 + cs2) / 2 * c / (k * mu - lam))


def arrival_rate_for(utilization: float, service_rate: float, servers: int) -> float:
    """The arrival rate lambda = rho k mu that loads k servers of rate mu to ``utilization``."""
    rho = float(utilization)
    if not 0 < rho < 1:
        raise QueueParameterError(f"utilization must be in (0, 1) for a stable queue, got {utilization!r}")
    return rho * _check_servers(servers) * _check_rate("service_rate", service_rate)
