"""Learning-rate searches over an objective ``objective(lr) -> one cost measurement``.

``search`` is seed 001's heuristic (section V), exactly as issue 7 states it:

1. evaluate the cost at ``start`` (mean of ``replications`` calls of the objective);
2. double the learning rate while the mean cost goes down compared with the previous point;
3. when it stays the same or goes up, go back to the previous learning rate L and try
   L + 0.1L, L + 0.2L, ... while the cost goes down (each step compared with the step before,
   the first with L itself); stop at the first step that does not improve;
4. the answer is the lowest-cost point seen (the first one, on a tie).

Arithmetic is exact and well defined: doubling a float is exact, and step k of the linear
phase is the double nearest the decimal ``L * (10 + k) / 10``, computed in :mod:`decimal` from
the shortest decimal form of L (so 0.064 gives 0.0704, 0.0768, ... and never 0.07680000000000001).
Step 10 equals 2L, whose cost is already known: it is reused, not measured again (and since
cost(2L) >= cost(L) > cost(1.9L) whenever step 10 is reached, the search always stops there).

``golden_search`` needs fewer jobs: it brackets the minimum with steps of ``expand`` (x4) in
log learning rate (downwards too, when the start is already past the minimum), then refines with
Brent's rule (parabolic steps through the best point and its two neighbours, golden-section steps
when a parabola is unusable). It stops when a parabolic prediction has been confirmed by a
measurement (within ``ftol`` of the best cost) and the next parabola promises less than ``ftol``,
or when the best point's neighbours are within a factor ``xtol`` of it.

``adaptive_search`` takes the same bracketing and Brent steps but replicates sequentially: each new
learning rate is measured once, and only the best point and the runner-up get more replications (one
job at a time, up to ``replications``) while their means are within ``z`` standard errors of each other
(the sd of one measurement's log cost pooled over replicated points, with a prior ``noise``). Before it
stops, the answer gets all ``replications`` and must beat every rival that way. Far from the minimum
one job per point is enough to see the cost fall or rise: on the bench's curves this needs about a third
of the paper rule's jobs (``bench/lr_search.py``).

``search`` and ``golden_search`` evaluate each learning rate at most once with ``replications`` calls
of the objective; all three stop (returning what they have) after ``max_points`` points.

CLI (real jobs through the harness, resumable)::

    python -m optimize.lr --model lenet --replications 2 --train-samples 512 --out runs/lr-lenet
    python -m optimize.lr --method adaptive --model lenet --replications 5 --out runs/lr-lenet-adaptive
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Callable, Sequence

from cluster.errors import ClusterError
from cluster.local import DEFAULT_STATE_DIR
from harness.errors import HarnessError
from models.cost import parse_cost
from models.errors import ModelError
from optimize.errors import ObjectiveError, OptimizeError, SearchOptionError
from optimize.figures import lr_cost_figure, save
from optimize.objective import JobObjective
from optimize.session import ClusterOptions, JobConfig, open_session, submit_options

Objective = Callable[[float], float]

#: A neighbour costing more than JUMP times the best point is a jump (training diverged), not a bowl:
#: no parabola is fitted across it. (A smooth bowl 1 + ln(lr/m)^2 sampled every x4 stays below ~4.)
JUMP = 10.0


@dataclass(frozen=True)
class LRPoint:
    """One evaluated learning rate: its cost measurements, their mean, and the step that chose it."""

    lr: float
    costs: tuple[float, ...]
    step: str  # start | double | linear | expand | parabolic | golden

    @property
    def mean(self) -> float:
        return math.fsum(self.costs) / len(self.costs)


@dataclass(frozen=True)
class LRSearchResult:
    """A finished search: every point in evaluation order, the best one, jobs used and why it stopped."""

    method: str
    points: tuple[LRPoint, ...]
    best: LRPoint
    jobs: int
    replications: int
    stop_reason: str
    job_lrs: tuple[float, ...] = ()  # the learning rate of every job, in the order they ran

    @property
    def max_replications(self) -> int:
        return max(len(p.costs) for p in self.points)

    @property
    def best_lr(self) -> float:
        return self.best.lr

    @property
    def learning_rates(self) -> tuple[float, ...]:
        return tuple(p.lr for p in self.points)


class _Budget(Exception):
    """Internal: the point budget is spent."""


class _Evaluator:
    """Measures each new learning rate ``first`` times (default ``replications``); ``more`` adds one.

    Remembers every point (in first-evaluation order) and the learning rate of every job."""

    def __init__(self, objective: Objective, replications: int, max_points: int, first: int | None = None) -> None:
        self.objective, self.replications, self.max_points = objective, replications, max_points
        self.first = replications if first is None else first
        self.points: list[LRPoint] = []
        self.by_lr: dict[float, LRPoint] = {}
        self.trace: list[float] = []

    def __call__(self, lr: float, step: str) -> LRPoint:
        if lr in self.by_lr:
            return self.by_lr[lr]
        if len(self.points) >= self.max_points:
            raise _Budget
        costs = tuple(self._measure(lr, i) for i in range(1, self.first + 1))
        point = LRPoint(lr, costs, step)
        self.points.append(point)
        self.by_lr[lr] = point
        return point

    def more(self, point: LRPoint) -> LRPoint:
        """One more replication of a known point (never beyond ``replications``)."""
        if len(point.costs) >= self.replications:
            return point
        grown = LRPoint(point.lr, point.costs + (self._measure(point.lr, len(point.costs) + 1),), point.step)
        self.points[self.points.index(point)] = grown
        self.by_lr[point.lr] = grown
        return grown

    def _measure(self, lr: float, i: int) -> float:
        where = f"at learning rate {lr!r} (replication {i} of {self.replications})"
        try:
            value = self.objective(lr)
        except OptimizeError:
            raise
        except Exception as e:  # the objective is user code: name where it failed, keep the cause
            raise ObjectiveError(f"the objective failed {where}: {type(e).__name__}: {e}") from e
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            try:
                value = float(value)  # numpy scalars
            except (TypeError, ValueError):
                raise ObjectiveError(f"the objective returned {value!r} {where}: it must return one number") from None
        value = float(value)
        if math.isnan(value):
            raise ObjectiveError(f"the objective returned NaN {where}: return a number (inf for a useless run)")
        self.trace.append(lr)
        return value

    @property
    def jobs(self) -> int:
        return len(self.trace)

    def result(self, method: str, stop_reason: str) -> LRSearchResult:
        best = min(self.points, key=lambda p: p.mean)  # first of equals
        return LRSearchResult(method, tuple(self.points), best, self.jobs, self.replications, stop_reason,
                              tuple(self.trace))


def linear_step(base: float, k: int) -> float:
    """Step k of the linear phase: the double nearest the decimal ``base * (1 + k/10)``."""
    return float(Decimal(repr(float(base))) * (10 + k) / 10)


def _check(start: float, replications: int, max_points: int, max_lr: float | None) -> None:
    if not (isinstance(start, (int, float)) and math.isfinite(start) and start > 0):
        raise SearchOptionError(f"start={start!r} must be a positive learning rate, e.g. 0.002")
    if not isinstance(replications, int) or replications < 1:
        raise SearchOptionError(f"replications={replications!r} must be a whole number >= 1")
    if max_points < 1:
        raise SearchOptionError(f"max_points={max_points!r} must be >= 1")
    if max_lr is not None and not max_lr >= start:
        raise SearchOptionError(f"max_lr={max_lr!r} is below start={start!r}: raise max_lr or lower start")


def search(objective: Objective, start: float = 0.002, replications: int = 5, *, max_points: int = 40,
           max_lr: float | None = None) -> LRSearchResult:
    """Seed 001's heuristic: double while the mean cost goes down, then +10% steps from the last good point."""
    _check(start, replications, max_points, max_lr)
    ev = _Evaluator(objective, replications, max_points)
    try:
        previous = ev(float(start), "start")
        while True:
            nxt = previous.lr * 2.0
            if max_lr is not None and nxt > max_lr:
                return ev.result("paper", f"doubling would pass max_lr={max_lr:g}")
            point = ev(nxt, "double")
            if not point.mean < previous.mean:
                break
            previous = point
        base, last, k = previous, previous, 1
        while True:
            lr = linear_step(base.lr, k)
            if max_lr is not None and lr > max_lr:
                return ev.result("paper", f"the next linear step would pass max_lr={max_lr:g}")
            reused = lr in ev.by_lr
            point = ev(lr, "linear")
            if not point.mean < last.mean:
                again = " (2L, already measured)" if reused else ""
                return ev.result("paper", f"linear step {k}{again} did not improve on {last.lr:g}")
            last, k = point, k + 1
    except _Budget:
        return ev.result("paper", f"max_points={max_points} reached")


# ---------------------------------------------------------------- bracketing + Brent on log lr


def _parabola(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> tuple[float, float] | None:
    """Vertex (u, f) of the parabola through three points, or None when it has no minimum."""
    (u1, f1), (u2, f2), (u3, f3) = a, b, c
    d1, d2 = (f2 - f1) / (u2 - u1), (f3 - f2) / (u3 - u2)
    curvature = (d2 - d1) / (u3 - u1)  # the quadratic coefficient
    if not math.isfinite(curvature) or curvature <= 0:
        return None
    u = 0.5 * (u1 + u2) - d1 / (2.0 * curvature)
    f = f2 + d1 * (u - u2) + curvature * (u - u1) * (u - u2)
    return u, f


def _at(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float], u: float) -> float:
    """The parabola through a, b, c evaluated at u (Newton's divided differences)."""
    (u1, f1), (u2, f2), (u3, f3) = a, b, c
    d1, d2 = (f2 - f1) / (u2 - u1), (f3 - f2) / (u3 - u2)
    return f1 + d1 * (u - u1) + (d2 - d1) / (u3 - u1) * (u - u1) * (u - u2)


def _check_bracket(expand: float, ftol: float, xtol: float) -> None:
    if not expand > 1.0:
        raise SearchOptionError(f"expand={expand!r} must be > 1 (the bracketing step factor), e.g. 4")
    if not 0.0 < ftol < 1.0:
        raise SearchOptionError(f"ftol={ftol!r} must be a fraction in (0, 1), e.g. 0.02")
    if not xtol > 1.0:
        raise SearchOptionError(f"xtol={xtol!r} must be a factor > 1, e.g. 1.1")


@dataclass(frozen=True)
class _Move:
    """The next learning rate to measure (``lr``), or why to stop (``lr`` None, ``step`` the reason)."""

    lr: float | None
    step: str
    predicted: float = math.nan  # the parabola's value at lr (NaN when the step is not parabolic)
    scale: float = math.nan  # the best point's mean cost when the move was chosen


def _expansion(pts: list[LRPoint], best: LRPoint, expand: float, floor: float, max_lr: float | None) -> _Move | None:
    """Bracketing: step past the best point when it is the highest or lowest rate tried, else None."""
    if best is pts[-1]:  # the best is the highest lr tried: expand upwards
        lr = best.lr * expand
        if max_lr is not None and lr > max_lr:
            if best.lr >= max_lr:
                return _Move(None, f"the best point is at max_lr={max_lr:g}")
            lr = max_lr
        return _Move(lr, "expand")
    if best is pts[0]:  # the start is past the minimum: expand downwards
        lr = best.lr / expand
        if lr < floor:
            return _Move(None, f"the best point is at the lowest learning rate allowed ({floor:g})")
        return _Move(lr, "expand")
    return None


def _refinement(pts: list[LRPoint], i: int, xtol: float, ftol: float, confirmed: bool) -> _Move:
    """Brent's step around the bracketed best point ``pts[i]`` on log lr (see module doc), or a stop."""
    tol_u = math.log(xtol)
    a, b, c = ((math.log(p.lr), p.mean) for p in pts[i - 1:i + 2])
    if max(b[0] - a[0], c[0] - b[0]) <= tol_u:
        return _Move(None, f"the best point's neighbours are within x{xtol:g}")
    smooth = all(math.isfinite(f) for _, f in (a, b, c)) and max(a[1], c[1]) <= JUMP * b[1]
    vertex = _parabola(a, b, c) if smooth else None
    if vertex is not None and confirmed and b[1] - vertex[1] <= ftol * abs(b[1]):
        return _Move(None, f"a confirmed parabola promises less than {ftol:.0%} improvement")
    taken = [math.log(p.lr) for p in pts]
    larger = 0.5 * (b[0] + c[0]) if c[0] - b[0] >= b[0] - a[0] else 0.5 * (a[0] + b[0])
    if vertex is not None and a[0] < vertex[0] < c[0]:
        u, step = vertex[0], "parabolic"
        if min(abs(u - t) for t in taken) < tol_u / 2:  # too close to a known point: probe beside b
            u, step = b[0] + (tol_u / 2 if u >= b[0] else -tol_u / 2), "probe"
            if min(abs(u - t) for t in taken) < tol_u / 4:  # probed before: split the larger segment
                u, step = larger, "bisect"
    elif not smooth and max(c[0] - b[0], b[0] - a[0]) > tol_u:
        # a jump (e.g. training diverged): bisect towards it while that side is wider than xtol
        toward_c = c[1] >= a[1] if min(c[0] - b[0], b[0] - a[0]) > tol_u else c[0] - b[0] > b[0] - a[0]
        u, step = (0.5 * (b[0] + c[0]) if toward_c else 0.5 * (a[0] + b[0])), "bisect"
    else:  # no usable parabola: split the larger segment on log lr
        u, step = larger, "bisect"
    predicted = _at(a, b, c, u) if vertex is not None else math.nan
    return _Move(math.exp(u), step, predicted, b[1])


def golden_search(objective: Objective, start: float = 0.002, replications: int = 5, *, expand: float = 4.0,
                  ftol: float = 0.05, xtol: float = 1.1, max_points: int = 40, max_lr: float | None = None,
                  min_lr: float | None = None) -> LRSearchResult:
    """Bracket on log lr with steps of ``expand``, then Brent's parabolic/golden refinement (see module doc)."""
    _check(start, replications, max_points, max_lr)
    _check_bracket(expand, ftol, xtol)
    floor = min_lr if min_lr is not None else start / expand**4
    ev = _Evaluator(objective, replications, max_points)
    confirmed = False
    try:
        ev(float(start), "start")
        while True:
            pts = sorted(ev.points, key=lambda p: p.lr)
            best = min(ev.points, key=lambda p: p.mean)
            move = _expansion(pts, best, expand, floor, max_lr)
            if move is None:
                move = _refinement(pts, pts.index(best), xtol, ftol, confirmed)
            if move.lr is None:
                return ev.result("golden", move.step)
            before = len(ev.points)
            point = ev(move.lr, move.step)
            if len(ev.points) == before:  # cannot happen by construction; never loop on a known point
                return ev.result("golden", f"no new learning rate to try near {best.lr:g}")
            if move.step != "expand":
                confirmed = abs(point.mean - move.predicted) <= ftol * abs(move.scale)
    except _Budget:
        return ev.result("golden", f"max_points={max_points} reached")


def _noise(points: list[LRPoint], prior: float, prior_df: int = 2) -> float:
    """Pooled sd of one measurement's log cost over replicated points, with ``prior`` worth ``prior_df`` df."""
    ss, df = prior_df * prior**2, prior_df
    for p in points:
        logs = [math.log(c) for c in p.costs if c > 0 and math.isfinite(c)]
        if len(logs) >= 2:
            m = math.fsum(logs) / len(logs)
            ss += math.fsum((x - m) ** 2 for x in logs)
            df += len(logs) - 1
    return math.sqrt(ss / df)


def _contest(points: list[LRPoint], best: LRPoint, replications: int, sigma: float, z: float,
             final: bool = False) -> LRPoint | None:
    """The point to replicate next, or None.

    While a rival's mean is within ``z`` standard errors of the best's (relative), the one of the two
    with fewer replications (the best on a tie) gets one more. Rivals: the runner-up during the search;
    with ``final``, every point, and the best itself first gets all ``replications``."""
    if not math.isfinite(best.mean):
        return None
    if final and len(best.costs) < replications:
        return best
    others = sorted((p for p in points if p is not best and math.isfinite(p.mean)), key=lambda p: p.mean)
    for rival in others if final else others[:1]:
        nb, nr = len(best.costs), len(rival.costs)
        gap = (rival.mean - best.mean) / abs(best.mean) if best.mean else math.inf
        if gap > z * sigma * math.sqrt(1 / nb + 1 / nr):
            return None  # sorted by mean: every later rival is further away
        open_ = [p for p in (best, rival) if len(p.costs) < replications]
        if open_:
            return min(open_, key=lambda p: len(p.costs))
    return None


def adaptive_search(objective: Objective, start: float = 0.002, replications: int = 5, *, expand: float = 4.0,
                    ftol: float = 0.05, xtol: float = 1.1, noise: float = 0.1, z: float = 2.0, max_points: int = 40,
                    max_lr: float | None = None, min_lr: float | None = None) -> LRSearchResult:
    """Golden's bracketing and Brent steps with sequential replication (see module doc).

    Each new learning rate is measured once; ``replications`` is the most any point gets. Only the best
    point and the runner-up are replicated, one job at a time, while their means are within ``z``
    standard errors of each other; the sd of one measurement's log cost is pooled over replicated points
    with ``noise`` as a prior worth 2 degrees of freedom."""
    _check(start, replications, max_points, max_lr)
    _check_bracket(expand, ftol, xtol)
    if not noise > 0 or not z > 0:
        raise SearchOptionError(f"noise={noise!r} and z={z!r} must be positive, e.g. noise=0.1 (10%), z=2")
    floor = min_lr if min_lr is not None else start / expand**4
    ev = _Evaluator(objective, replications, max_points, first=1)
    confirmed = False
    try:
        ev(float(start), "start")
        while True:
            pts = sorted(ev.points, key=lambda p: p.lr)
            best = min(ev.points, key=lambda p: p.mean)
            move = _expansion(pts, best, expand, floor, max_lr)
            sigma = _noise(ev.points, noise)
            if move is None:
                target = _contest(ev.points, best, replications, sigma, z)
                if target is not None:
                    ev.more(target)
                    continue
                move = _refinement(pts, pts.index(best), xtol, ftol, confirmed)
            if move.lr is None:
                target = _contest(ev.points, best, replications, sigma, z, final=True)
                if target is None:
                    return ev.result("adaptive", move.step)
                ev.more(target)  # the answer gets all its replications and beats every rival first
                continue
            before = len(ev.points)
            point = ev(move.lr, move.step)
            if len(ev.points) == before:  # cannot happen by construction; never loop on a known point
                return ev.result("adaptive", f"no new learning rate to try near {best.lr:g}")
            if move.step != "expand":  # a parabola confirmed within ftol plus the noise of one measurement
                slack = ftol + z * sigma / math.sqrt(len(point.costs))
                confirmed = abs(point.mean - move.predicted) <= slack * abs(move.scale)
    except _Budget:
        return ev.result("adaptive", f"max_points={max_points} reached")


METHODS: dict[str, Callable[..., LRSearchResult]] = {"paper": search, "golden": golden_search,
                                                     "adaptive": adaptive_search}


# ---------------------------------------------------------------- output


def trajectory_table(result: LRSearchResult) -> str:
    """The points in evaluation order: learning rate, step, each cost, mean; the best marked with *."""
    head = ("#", "learning_rate", "step", "costs", "mean_cost", "")
    rows = [head]
    for i, p in enumerate(result.points, start=1):
        rows.append((str(i), repr(p.lr), p.step, " ".join(f"{c:.4g}" for c in p.costs), f"{p.mean:.5g}",
                     "*" if p is result.best else ""))
    widths = [max(len(r[j]) for r in rows) for j in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


CSV_COLUMNS = ("order", "learning_rate", "step", "replications", "mean_cost", "min_cost", "max_cost", "best")


def write_csv(result: LRSearchResult, path: Path) -> Path:
    """lr_search.csv: one row per point in evaluation order."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for i, p in enumerate(result.points, start=1):
            w.writerow((i, repr(p.lr), p.step, len(p.costs), repr(p.mean), repr(min(p.costs)), repr(max(p.costs)),
                        int(p is result.best)))
    return path


# ---------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m optimize.lr",
                                description="Learning-rate search on real jobs through the harness (seed 001, V).")
    p.add_argument("--out", type=Path, required=True, help="campaign directory, e.g. runs/lr-lenet")
    p.add_argument("--resume", action="store_true", help="continue the search in --out (finished jobs are reused)")
    p.add_argument("--method", choices=sorted(METHODS), default="paper",
                   help="paper heuristic (default), golden (bracketing + Brent), adaptive (golden, sequential replication)")
    p.add_argument("--start", type=float, default=0.002, help="first learning rate (default 0.002)")
    p.add_argument("--replications", type=int, default=5,
                   help="jobs per learning rate (default 5; adaptive: at most, the answer always gets all)")
    p.add_argument("--max-points", type=int, default=40, help="stop after this many learning rates (default 40)")
    p.add_argument("--max-lr", type=float, help="never try a learning rate above this")
    p.add_argument("--cost", default="acc2", help="cost of (T, A), see models.cost (default acc2 = T/A^2, Fig. 5's)")
    p.add_argument("--model", choices=("birnn", "lenet"), default="birnn")
    for name, default in (("nodes", 1), ("executors", 1), ("executor-cores", 1), ("batch-size", 256), ("epochs", 1)):
        p.add_argument(f"--{name}", type=int, default=default, help=f"default {default}")
    p.add_argument("--train-samples", type=int, help="train on the first N digits only")
    p.add_argument("--test-samples", type=int, help="validate on the first N digits only")
    p.add_argument("--seed", type=int, default=42, help="weight-init seed of replicate 1 (replicate r: seed+r-1)")
    p.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR, help="local cluster state (default .cluster)")
    p.add_argument("--port", type=int, default=7077, help="master port of a cluster this command starts")
    p.add_argument("--webui-port", type=int, default=8080, help="master web UI port of a cluster this command starts")
    p.add_argument("--keep-cluster", action="store_true", help="leave a cluster this command started running")
    p.add_argument("--executor-memory", default="700m")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds before a job is stopped (default 3600)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    try:
        cost = parse_cost(args.cost)
        config = JobConfig(model=args.model, nodes=args.nodes, executors=args.executors,
                           executor_cores=args.executor_cores, batch_size=args.batch_size, epochs=args.epochs,
                           learning_rate=args.start)
        method = METHODS[args.method]
        settings = {"optimizer": "lr", "method": args.method, "start": args.start, "replications": args.replications,
                    "max_points": args.max_points, "max_lr": args.max_lr, "cost": cost.formula,
                    "config": config.__dict__, "train_samples": args.train_samples,
                    "test_samples": args.test_samples, "seed": args.seed}
        cluster = ClusterOptions(state_dir=args.state_dir, port=args.port, webui_port=args.webui_port,
                                 keep_cluster=args.keep_cluster, executor_memory=args.executor_memory,
                                 timeout=args.timeout)
        options = submit_options(args.out, cluster, args.train_samples, args.test_samples, args.seed)
        _check(args.start, args.replications, args.max_points, args.max_lr)
        with open_session(args.out, settings, options, cluster, [config.spec(1, 1)], args.resume, say) as session:
            objective = JobObjective(session, config, cost)
            result = method(objective, args.start, args.replications, max_points=args.max_points,
                            max_lr=args.max_lr)
            reused = len(objective.results) - session.executed
    except (SearchOptionError, ModelError, HarnessError, ClusterError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OptimizeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"interrupted: finished jobs are kept in {args.out}; continue with --resume", file=sys.stderr)
        return 130
    print()
    print(trajectory_table(result))
    print(f"\n{result.method}: best learning rate {result.best_lr!r} (mean cost {result.best.mean:.5g} = "
          f"{cost.formula}); {len(result.points)} points, {result.jobs} jobs ({reused} reused from the store); "
          f"stopped: {result.stop_reason}")
    print("every job's learning rate was read back from its log and matched the one asked")
    csv_path = write_csv(result, args.out / "lr_search.csv")
    png = save(lr_cost_figure(result, cost.formula), args.out / "lr_search.png")
    print(f"wrote {csv_path} and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
