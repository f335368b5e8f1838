"""``sparkdl queueing``: queue metrics, metrics from a results table, fast-vs-slow, CPU + disk."""

from __future__ import annotations

import argparse
import json
import math
import statistics
from typing import Sequence

from models.errors import FitError, UnstableQueueError
from models.queueing.compare import break_even_scv, compare_grid, explain
from models.queueing.cpu_disk import fit_cpu_disk, load_runs
from models.queueing.formulas import METRIC_KEYS, QueueMetrics, ggk, mg1, mgk, mm1, mmk
from models.queueing.job_sizes import UNITS, load_job_sizes, plan
from models.queueing.simulate import ENGINES, SimulationResult, simulate
from sparkdl.options import add_campaign, add_format, add_seed


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
    parser = argparse.ArgumentParser(prog="sparkdl queueing", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    fmt = argparse.ArgumentParser(add_help=False)
    add_format(fmt, ("text", "json"))
    rates = argparse.ArgumentParser(add_help=False, parents=[fmt])
    rates.add_argument("--arrival-rate", type=float, required=True, help="jobs per unit time (lambda)")
    rates.add_argument("--service-rate", type=float, required=True, help="jobs per unit time per server (mu)")
    servers = argparse.ArgumentParser(add_help=False)
    servers.add_argument("--servers", type=int, metavar="K", required=True, help="number of servers k")
    scv = argparse.ArgumentParser(add_help=False)
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
    add_campaign(cd, "the runs to fit the model to", dest="results")
    cd.add_argument("--cpu-service-time", type=float, default=0.045,
                    help="CPU seconds per iteration, batch_size / records per second (Albo Martínez 2021: 0.045)")
    cd.add_argument("--dataset-size", type=int, default=60_000, help="training records (MNIST: 60000)")
    return parser


def _print_metrics(m: QueueMetrics, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(m.metrics()))
        return
    print(f"{m.model}  arrival_rate={m.arrival_rate:g}  service_rate={m.service_rate:g}  servers={m.servers}")
    print("(ET, ETq in the time unit of the rates; EN, ENq in jobs)")
    for key, value in m.metrics().items():
        print(f"{key:7s} {value:.6g}")


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


def _row(m: QueueMetrics) -> dict[str, float | int | str]:
    return {"servers": m.servers, "model": m.model, "arrival_rate": m.arrival_rate,
            "service_rate": m.service_rate, **m.metrics()}


def _from_results(args: argparse.Namespace) -> None:
    sizes = load_job_sizes(args.results, args.job_size)
    rows = [_row(m) for p in plan(sizes, args.utilization, args.servers) for m in (p.markovian, p.general)]
    if args.format == "json":
        print(json.dumps({"job_size": {"quantity": sizes.quantity, "unit": UNITS[sizes.quantity],
                                       "runs": sizes.count, "mean": sizes.mean, "scv": sizes.scv,
                                       "service_rate": sizes.service_rate},
                          "utilization": args.utilization, "rows": rows}))
        return
    print(f"job size = {UNITS[sizes.quantity]}; {sizes.count} runs from {sizes.source}")
    print(f"mean {sizes.mean:.6g} -> service rate mu = 1/mean = {sizes.service_rate:.6g} per unit; "
          f"scv {sizes.scv:.4g}; utilization {args.utilization:g}")
    print("M/M/k assumes exponential sizes (scv 1); M/G/k uses the measured scv (Lee-Longton; exact for k=1)")
    print(f"{'k':>3} {'model':7} {'lambda':>10} " + " ".join(f"{key:>10}" for key in METRIC_KEYS))
    for row in rows:
        print(f"{row['servers']:>3} {row['model']:7} {row['arrival_rate']:>10.5g} "
              + " ".join(f"{row[key]:>10.5g}" for key in METRIC_KEYS))


def _simulated(m: QueueMetrics, scv: float, args: argparse.Namespace, seed: int) -> SimulationResult:
    family = None if scv in (0, 1) else args.family
    return simulate(m.arrival_rate, m.service_rate, m.servers, seed=seed, scv=scv, service_family=family,
                    jobs=args.jobs, replications=args.simulate, engine=args.engine)


def _compare(args: argparse.Namespace) -> None:
    grid = compare_grid(args.servers, args.utilization, args.scv)
    sims: list[tuple[SimulationResult, SimulationResult] | None] = [None] * len(grid)
    if args.simulate:
        sims = [(_simulated(c.fast, c.scv, args, args.seed + 2 * i),
                 _simulated(c.slow, c.scv, args, args.seed + 2 * i + 1)) for i, c in enumerate(grid)]
    if args.format == "json":
        out = []
        for c, sim in zip(grid, sims):
            item = {"servers": c.servers, "utilization": c.utilization, "scv": c.scv, "winner": c.winner,
                    "ratio": c.ratio, "fast": c.fast.metrics(), "slow": c.slow.metrics()}
            if sim:
                item["simulated_ET"] = {"fast": vars(sim[0].ET), "slow": vars(sim[1].ET)}
            out.append(item)
        print(json.dumps(out))
        return
    k = args.servers
    print(f"one server of rate {k} vs {k} servers of rate 1 (times in units of a slow server's mean job)")
    print(f"{'rho':>5} {'scv':>5} {'ET fast':>9} {'ET slow':>9} {'slow/fast':>9}  winner"
          + ("   simulated ET fast [CI]   simulated ET slow [CI]" if args.simulate else ""))
    for c, sim in zip(grid, sims):
        line = f"{c.utilization:>5g} {c.scv:>5g} {c.fast.ET:>9.4g} {c.slow.ET:>9.4g} {c.ratio:>9.3f}  {c.winner:6}"
        if sim:
            line += "".join(f"   {s.ET.mean:.4g} [{s.ET.low:.4g}, {s.ET.high:.4g}]" for s in sim)
        print(line)
    print()
    for c in grid:
        print(explain(c))
    print("break-even scv (k slow servers win above it, Lee-Longton): "
          + ", ".join(f"rho={rho:g}: {break_even_scv(k, rho):.3g}" for rho in args.utilization))


def _cpu_disk(args: argparse.Namespace) -> None:
    configs, times = load_runs(args.results, args.dataset_size)
    model = fit_cpu_disk(configs, times, args.cpu_service_time)
    groups: dict[object, list[float]] = {}
    for config, seconds in zip(configs, times):
        groups.setdefault(config, []).append(seconds)
    rows = []
    for config, measured in groups.items():
        try:
            p = model.predict(config)
            predicted, disk_rho = p.ET, p.disk_utilization
        except (UnstableQueueError, FitError):
            predicted, disk_rho = math.inf, math.nan
        rows.append({"batch_size": config.batch_size, "cpus": config.cpus, "workers": config.workers,
                     "njobs": config.njobs, "epochs": config.epochs, "runs": len(measured),
                     "measured_ET": statistics.fmean(measured), "predicted_ET": predicted, "disk_rho": disk_rho})
    finite = [(r["measured_ET"], r["predicted_ET"]) for r in rows if math.isfinite(r["predicted_ET"])]
    mape = statistics.fmean(abs(p - m) / m for m, p in finite) if finite else math.nan
    coef = {"intercept": model.intercept, "per_batch": model.per_batch, "per_process": model.per_process}
    if args.format == "json":
        clean = [{key: (v if not isinstance(v, float) or math.isfinite(v) else None) for key, v in r.items()}
                 for r in rows]
        print(json.dumps({"cpu_service_time": model.cpu_service_time, "disk_rate": coef,
                          "mape_config_means": mape if math.isfinite(mape) else None, "rows": clean}))
        return
    print(f"fitted disk service rate mu_D = {model.intercept:.4g} + {model.per_batch:.4g} * batch_size "
          f"+ {model.per_process:.4g} * processes  (per second; cpu_service_time {model.cpu_service_time:g} s)")
    print(f"{'batch':>6} {'cpus':>5} {'workers':>7} {'njobs':>5} {'epochs':>6} {'runs':>4} "
          f"{'measured ET':>12} {'predicted ET':>12} {'disk rho':>8}")
    for r in rows:
        print(f"{r['batch_size']:>6} {r['cpus']:>5} {r['workers']:>7} {r['njobs']:>5} {r['epochs']:>6} "
              f"{r['runs']:>4} {r['measured_ET']:>12.4g} {r['predicted_ET']:>12.4g} {r['disk_rho']:>8.3f}")
    print(f"mean absolute percentage error over configurations (in-sample): {mape:.1%}")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "from-results":
        _from_results(args)
    elif args.command == "compare":
        _compare(args)
    elif args.command == "cpu-disk":
        _cpu_disk(args)
    else:
        _print_metrics(_single(args), args.format)
    return 0
