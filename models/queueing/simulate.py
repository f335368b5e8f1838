"""Simulation of a k-server FCFS queue, for checking closed forms: ``ciw`` or a numpy recursion.

Two engines give the same estimates by independent means. ``engine="ciw"`` (the default) is a
discrete-event simulation with the ``ciw`` library; each replication draws from its own
``random.Random`` streams derived from ``seed`` (one stream per distribution). ``engine="numpy"``
runs the Kiefer-Wolfowitz workload recursion for all replications at once, drawing from one
``numpy.random.Generator`` seeded with ``seed``; it is some hundred times faster. Neither touches a
global RNG. Means come with a Student-t confidence interval over independent replications.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

import ciw
import numpy as np
from scipy import stats

from models.errors import QueueParameterError
from models.queueing.formulas import _check_rate, _check_scv, _check_servers, _check_stable


class _Sampler(ciw.dists.Distribution):
    """A ciw distribution with a given mean and scv, drawn from a private random stream."""

    def __init__(self, mean: float, scv: float, family: str, rng: random.Random | None):
        self.mean_value, self.scv, self.family, self.rng = mean, scv, family, rng
        if family == "lognormal":
            self.sigma = math.sqrt(math.log1p(scv))
            self.mu = math.log(mean) - self.sigma**2 / 2
        elif family == "gamma":
            self.shape = 1.0 / scv
        elif family == "hyperexponential":
            if scv < 1:
                raise QueueParameterError(f"hyperexponential needs scv >= 1, got {scv!r}: use 'gamma' below 1")
            # Two phases with balanced means (p1 / r1 = p2 / r2): p1 = (1 + sqrt((scv-1)/(scv+1))) / 2.
            self.p1 = (1 + math.sqrt((scv - 1) / (scv + 1))) / 2
            self.rates = (2 * self.p1 / mean, 2 * (1 - self.p1) / mean)
        elif family not in ("exponential", "deterministic"):
            raise QueueParameterError(f"unknown distribution family {family!r}")

    def sample(self, t=None, ind=None) -> float:
        if self.family == "deterministic":
            return self.mean_value
        if self.family == "exponential":
            return self.rng.expovariate(1.0 / self.mean_value)
        if self.family == "lognormal":
            return self.rng.lognormvariate(self.mu, self.sigma)
        if self.family == "hyperexponential":
            return self.rng.expovariate(self.rates[0] if self.rng.random() < self.p1 else self.rates[1])
        return self.rng.gammavariate(self.shape, self.mean_value / self.shape)


def _family(scv: float, family: str | None) -> str:
    if family is not None:
        return family
    if scv == 0:
        return "deterministic"
    return "exponential" if scv == 1 else "lognormal"


@dataclass(frozen=True)
class Estimate:
    """A mean over replications with its two-sided confidence interval."""

    mean: float
    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass(frozen=True)
class SimulationResult:
    """Per-replication means of one simulated queue, summarized (times in the rates' unit)."""

    ET: Estimate
    ETq: Estimate
    p_wait: Estimate
    replications: int
    jobs_per_replication: float
    confidence: float


def _estimate(values: list[float], confidence: float) -> Estimate:
    mean = statistics.fmean(values)
    half = stats.t.ppf(0.5 + confidence / 2, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return Estimate(mean, mean - half, mean + half)


def _replicate(lam: float, mu: float, k: int, cs2: float, ca2: float, families: tuple[str, str],
               horizon: float, warmup: float, seed: int) -> tuple[float, float, float]:
    streams = random.Random(seed)
    arrivals = _Sampler(1 / lam, ca2, families[0], random.Random(streams.getrandbits(64)))
    services = _Sampler(1 / mu, cs2, families[1], random.Random(streams.getrandbits(64)))
    network = ciw.create_network(arrival_distributions=[arrivals], service_distributions=[services],
                                 number_of_servers=[k])
    sim = ciw.Simulation(network)
    end = warmup + horizon
    sim.simulate_until_max_time(end + max(horizon / 10, 100 / mu))  # let window arrivals finish
    records = [r for r in sim.get_all_records() if warmup < r.arrival_date <= end]
    unfinished = sum(warmup < ind.arrival_date <= end for ind in sim.transitive_nodes[0].all_individuals)
    if not records or unfinished:
        raise QueueParameterError(
            f"{len(records)} jobs finished and {unfinished} did not in the simulated window: raise jobs"
        )
    return (statistics.fmean(r.exit_date - r.arrival_date for r in records),
            statistics.fmean(r.waiting_time for r in records),
            sum(r.waiting_time > 0 for r in records) / len(records))


ENGINES = ("ciw", "numpy")
_BLOCK = 2048  # jobs drawn at a time by the numpy engine (part of its seed -> result mapping)


def _draw(sampler: _Sampler, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Samples of ``sampler``'s distribution (same families and parameters), drawn with numpy."""
    family, mean = sampler.family, sampler.mean_value
    if family == "deterministic":
        return np.full(shape, mean)
    if family == "exponential":
        return rng.exponential(mean, shape)
    if family == "lognormal":
        return rng.lognormal(sampler.mu, sampler.sigma, shape)
    if family == "hyperexponential":
        rates = np.where(rng.random(shape) < sampler.p1, sampler.rates[0], sampler.rates[1])
        return rng.exponential(1.0, shape) / rates
    return rng.gamma(sampler.shape, mean / sampler.shape, shape)


def kiefer_wolfowitz_waits(interarrivals: np.ndarray, services: np.ndarray, workload: np.ndarray) -> np.ndarray:
    """Waiting times of consecutive jobs in FCFS k-server queues, one queue per column.

    ``services[n]`` holds job n's size in each queue and ``interarrivals[n]`` the time from job n's
    arrival to job n+1's, both shaped (jobs, queues). ``workload`` (k, queues) holds each server's
    remaining work as job 0 arrives, sorted ascending down each column; it is updated in place to
    the workload job N would find. Job n waits for the least loaded server, D_n = W[0]; then
    W[0] += S_n and time passes until the next arrival, W = sort(max(W - A_n, 0)) (Kiefer and
    Wolfowitz 1955). Only W[0] moved, so the sort inserts it into the sorted W[1:]: position j
    gets the median of W[j], the new value and W[j+1].
    """
    k, queues = workload.shape
    waits = np.empty(services.shape)
    new = np.empty(queues)
    last = np.empty(queues)
    between = np.empty((max(k - 2, 0), queues))
    for n in range(services.shape[0]):
        waits[n] = workload[0]
        np.add(workload[0], services[n], out=new)
        new -= interarrivals[n]
        workload -= interarrivals[n]
        if k == 1:
            workload[0] = new
        else:
            np.maximum(workload[k - 1], new, out=last)
            np.minimum(workload[1], new, out=workload[0])
            np.minimum(workload[2:], new, out=between)
            np.maximum(workload[1:k - 1], between, out=workload[1:k - 1])
            workload[k - 1] = last
        np.maximum(workload, 0.0, out=workload)
    return waits


def _simulate_numpy(lam: float, mu: float, k: int, cs2: float, ca2: float, families: tuple[str, str],
                    jobs: int, warmup_jobs: int, replications: int, seed: int) -> list[np.ndarray]:
    """Per-replication means of T, Tq and waiting, over jobs warmup_jobs .. warmup_jobs + jobs - 1."""
    arrivals = _Sampler(1 / lam, ca2, families[0], rng=None)
    services = _Sampler(1 / mu, cs2, families[1], rng=None)
    rng = np.random.default_rng(seed)
    workload = np.zeros((k, replications))
    sums = np.zeros((3, replications))  # T, Tq, waited
    for start in range(0, warmup_jobs + jobs, _BLOCK):
        size = min(_BLOCK, warmup_jobs + jobs - start)
        a = _draw(arrivals, rng, (size, replications))
        s = _draw(services, rng, (size, replications))
        d = kiefer_wolfowitz_waits(a, s, workload)[max(warmup_jobs - start, 0):]
        s = s[max(warmup_jobs - start, 0):]
        sums += [(d + s).sum(axis=0), d.sum(axis=0), (d > 0).sum(axis=0)]
    return list(sums / jobs)


def simulate(arrival_rate: float, service_rate: float, servers: int = 1, *, seed: int, scv: float = 1.0,
             scv_arrival: float = 1.0, service_family: str | None = None, arrival_family: str | None = None,
             jobs: int = 5000, warmup_jobs: int = 500, replications: int = 10,
             confidence: float = 0.99, engine: str = "ciw") -> SimulationResult:
    """Simulate a FCFS queue with k servers; job sizes have mean 1/service_rate and the given scv.

    Families default to deterministic for scv 0, exponential for scv 1, lognormal otherwise
    (alternatives: 'gamma', and 'hyperexponential' with balanced means for scv >= 1). With
    ``engine="ciw"`` each replication runs ``warmup_jobs`` + ``jobs`` expected arrivals and keeps
    those arriving after the warm-up; with ``engine="numpy"`` it runs exactly that many jobs, from
    an empty system, and keeps the last ``jobs``.
    """
    lam = _check_rate("arrival_rate", arrival_rate)
    mu = _check_rate("service_rate", service_rate)
    k = _check_servers(servers)
    _check_stable(lam, mu, k)
    cs2, ca2 = _check_scv("scv", scv), _check_scv("scv_arrival", scv_arrival)
    if replications < 2 or jobs < 1 or warmup_jobs < 0 or not 0 < confidence < 1:
        raise QueueParameterError("need replications >= 2, jobs >= 1, warmup_jobs >= 0, 0 < confidence < 1")
    if engine not in ENGINES:
        raise QueueParameterError(f"unknown simulation engine {engine!r}: use one of {', '.join(ENGINES)}")
    families = (_family(ca2, arrival_family), _family(cs2, service_family))
    if engine == "numpy":
        et, etq, pw = _simulate_numpy(lam, mu, k, cs2, ca2, families, int(jobs), int(warmup_jobs),
                                      int(replications), seed)
        return SimulationResult(_estimate(list(et), confidence), _estimate(list(etq), confidence),
                                _estimate(list(pw), confidence), replications, float(jobs), confidence)
    seeds = random.Random(seed)
    runs = [_replicate(lam, mu, k, cs2, ca2, families, jobs / lam, warmup_jobs / lam, seeds.getrandbits(64))
            for _ in range(replications)]
    et, etq, pw = (list(column) for column in zip(*runs))
    return SimulationResult(_estimate(et, confidence), _estimate(etq, confidence), _estimate(pw, confidence),
                            replications, float(jobs), confidence)


def simulate_ps_tandem(arrival_rate: float, cpu_rate: float, disk_rate: float, *, seed: int, jobs: int = 5000,
                       warmup_jobs: int = 500, replications: int = 10, confidence: float = 0.99) -> Estimate:
    """Mean response time of Poisson arrivals through a processor-sharing CPU, then a FCFS disk.

    Both have exponential work (rates ``cpu_rate`` and ``disk_rate``); the CPU is one processor
    shared equally by the jobs present (ciw's PSNode with threshold 1).
    """
    lam = _check_rate("arrival_rate", arrival_rate)
    rates = _check_rate("cpu_rate", cpu_rate), _check_rate("disk_rate", disk_rate)
    for rate in rates:
        _check_stable(lam, rate, 1)
    seeds = random.Random(seed)
    horizon, warmup = jobs / lam, warmup_jobs / lam
    means = []
    for _ in range(replications):
        streams = random.Random(seeds.getrandbits(64))
        samplers = [_Sampler(1 / r, 1.0, "exponential", random.Random(streams.getrandbits(64)))
                    for r in (lam, *rates)]
        network = ciw.create_network(
            arrival_distributions=[samplers[0], None], service_distributions=samplers[1:],
            number_of_servers=[float("inf"), 1], routing=[[0.0, 1.0], [0.0, 0.0]], ps_thresholds=[1, 1])
        sim = ciw.Simulation(network, node_class=[ciw.PSNode, ciw.Node])
        sim.simulate_until_max_time(warmup + horizon + max(horizon / 10, 100 / min(rates)))
        entered: dict[int, float] = {}
        left: dict[int, float] = {}
        for r in sim.get_all_records():
            if r.node == 1:
                entered[r.id_number] = r.arrival_date
            else:
                left[r.id_number] = r.exit_date
        window = [i for i, t in entered.items() if warmup < t <= warmup + horizon]
        if not window or any(i not in left for i in window):
            raise QueueParameterError("jobs of the simulated window did not finish: raise jobs")
        means.append(statistics.fmean(left[i] - entered[i] for i in window))
    return _estimate(means, confidence)
