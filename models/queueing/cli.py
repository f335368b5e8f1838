"""``sparkdl queueing``: queue metrics, metrics from a results table, fast-vs-slow, CPU + disk.

Each command makes one result (:mod:`models.queueing.result`) and prints its summary: text, or ``--format json``
(the result's ``to_dict()``), or ``--format csv`` (its table)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

from models.errors import QueueParameterError
from models.queueing.compare import compare_grid
from models.queueing.cpu_disk import fit_cpu_disk, load_runs
from models.queueing.formulas import QueueMetrics, ggk, mg1, mgk, mm1, mmk
from models.queueing.job_sizes import UNITS, load_job_sizes, plan
from models.queueing.result import CpuDiskFit, FastVsSlow, QueuePlan, cpu_disk_fit
from models.queueing.simulate import ENGINES, SimulationResult, simulate
from sparkdl.options import CommandParser, add_campaign, add_format, add_seed


def _floats(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _ints(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="sparkdl queueing", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    fmt = CommandParser(add_help=False)
    add_format(fmt)
    rates = CommandParser(add_help=False, parents=[fmt])
    rates.add_argument("--arrival-rate", type=float, required=True, help="jobs per unit time (lambda)")
    rates.add_argument("--service-rate", type=float, required=True, help="jobs per unit time per server (mu)")
    servers = CommandParser(add_help=False)
    servers.add_argument("--servers", type=int, metavar="K", required=True, help="number of servers k")
    scv = CommandParser(add_help=False)
    scv.add_argument("--scv", type=float, metavar="SCV", default=1.0, help="job-size variance / mean^2 (default 1)")
    sub.add_parser("mm1", parents=[rates], help="M/M/1 (exact)")
    sub.add_parser("mmk", parents=[rates, servers], help="M/M/k, Erlang C (exact)")
    sub.add_parser("mg1", parents=[rates, scv], help="M/G/1, Pollaczek-Khinchine (exact)")
    sub.add_parser("mgk", parents=[rates, servers, scv], help="M/G/k, Lee-Longton (approximate)")
    gg = sub.add_parser("ggk", parents=[rates, servers, scv], help="G/G/k, Allen-Cunneen (approximate)")
    gg.add_argument("--scv-arrival", type=float, default=1.0, help="inter-arrival scv (default 1)")

    fr = sub.add_parser("from-results", parents=[fmt], help="metrics from measured job sizes")
    add_campaign(fr, "the jobs whose sizes to queue", dest="results")
    fr.add_argument("--utilization", type=float, metavar="RHO", default=0.8,
                    help="the utilization to plan for: arrivals set so that lambda = rho k mu (default 0.8)")
    fr.add_argument("--servers", type=_ints, metavar="K,...", default=[1, 4],
                    help="the numbers of servers to compare, e.g. 1,4 (default 1,4)")
    fr.add_argument("--job-size", choices=sorted(UNITS), default=None,
                    help="time = wall_clock_s seconds; cost = Marinos 2021's T/(100 A)^2 (default: time if present)")

    cmp = sub.add_parser("compare", parents=[fmt], help="one fast server vs k slow ones (Schouten and Mukherjee)")
    cmp.add_argument("--servers", type=int, metavar="K", default=4,
                     help="k: the slow servers (rate mu each) against one fast one (rate k mu) (default 4)")
    cmp.add_argument("--utilization", type=_floats, metavar="RHO,...", default=[0.5, 0.7, 0.9],
                     help="the utilizations to compare at (default 0.5,0.7,0.9)")
    cmp.add_argument("--scv", type=_floats, metavar="SCV,...", default=[0.0, 1.0, 4.0],
                     help="the job-size variances / mean^2 to compare at (default 0,1,4)")
    cmp.add_argument("--simulate", type=int, default=0, metavar="REPS",
                     help="also simulate each cell, REPS replications (ciw: seconds per cell; numpy: milliseconds)")
    cmp.add_argument("--engine", choices=ENGINES, default="ciw",
                     help="simulator: ciw's discrete events (default) or numpy's Kiefer-Wolfowitz recursion")
    cmp.add_argument("--jobs", type=int, default=5000, help="jobs per simulated replication")
    add_seed(cmp, "the simulations")
    cmp.add_argument("--family", choices=("gamma", "lognormal"), default="gamma",
                     help="simulated job-size distribution for scv other than 0 and 1 (M/G/k depends on it)")

    cd = sub.add_parser("cpu-disk", parents=[fmt], help="Albo Martínez 2021's CPU + disk model fitted to a results table")
    cd.add_argument("results", type=Path, nargs="+", metavar="CAMPAIGN",
                    help="campaign folders (or results CSVs) whose runs to fit the model to, e.g. one sparkdl "
                         "concurrent folder per --cpus x --njobs; njobs from an njobs column, concurrency.csv or the "
                         "campaign's settings")
    cd.add_argument("--cpu-service-time", type=float, default=0.045,
                    help="CPU seconds per iteration, batch_size / records per second (Albo Martínez 2021: 0.045)")
    cd.add_argument("--dataset-size", type=int, default=60_000, help="training records (MNIST: 60000)")
    cd.add_argument("--test", type=Path, nargs="+", default=[], metavar="CAMPAIGN",
                    help="campaign folders (or results CSVs) held out: predicted from the fit, not fitted, e.g. "
                         "the njobs the fit has not seen")
    cd.add_argument("--level", type=float, default=0.9,
                    help="confidence level of the intervals: the measured mean's, the fitted mean's and one "
                         "run's (default 0.9)")
    return parser


def _single(args: argparse.Namespace) -> QueueMetrics:
    lam, mu = args.arrival_rate, args.service_rate
    if args.command == "mm1":
        return mm1(lam, mu)
    if args.command == "mmk":
        return mmk(lam, mu, args.servers)
    if args.command == "mg1":
        return mg1(lam, mu, args.scv)
    if args.command == "mgk":
        return mgk(lam, mu, args.servers, args.scv)
    return ggk(lam, mu, args.servers, args.scv, args.scv_arrival)


def _from_results(args: argparse.Namespace) -> QueuePlan:
    sizes = load_job_sizes(args.results, args.job_size)
    return QueuePlan(sizes, args.utilization, tuple(plan(sizes, args.utilization, args.servers)))


def _simulated(m: QueueMetrics, scv: float, args: argparse.Namespace, seed: int) -> SimulationResult:
    family = None if scv in (0, 1) else args.family
    return simulate(m.arrival_rate, m.service_rate, m.servers, seed=seed, scv=scv, service_family=family,
                    jobs=args.jobs, replications=args.simulate, engine=args.engine)


def _compare(args: argparse.Namespace) -> FastVsSlow:
    grid = compare_grid(args.servers, args.utilization, args.scv)
    sims: list[tuple[SimulationResult, SimulationResult] | None] = [None] * len(grid)
    if args.simulate:
        sims = [(_simulated(c.fast, c.scv, args, args.seed + 2 * i),
                 _simulated(c.slow, c.scv, args, args.seed + 2 * i + 1)) for i, c in enumerate(grid)]
    return FastVsSlow(args.servers, tuple(args.utilization), tuple(grid), tuple(sims))


def _cpu_disk(args: argparse.Namespace) -> CpuDiskFit:
    if not 0 < args.level < 1:
        raise QueueParameterError(f"--level must be in (0, 1), got {args.level:g}")
    configs, times = load_runs(args.results, args.dataset_size)
    test_configs, test_times = load_runs(args.test, args.dataset_size) if args.test else ([], [])
    model = fit_cpu_disk(configs, times, args.cpu_service_time)
    return cpu_disk_fit(model, configs, times, args.level, test_configs, test_times)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "from-results":
        summary = _from_results(args).summary()
    elif args.command == "compare":
        summary = _compare(args).summary()
    elif args.command == "cpu-disk":
        summary = _cpu_disk(args).summary()
    else:
        summary = _single(args).summary()
    print(summary.render(args.format))
    return 0
