"""Learning-rate searches over an objective ``objective(lr) -> one cost measurement``.

``search`` is Marinos 2021's heuristic (section V), exactly:

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

All three run through one loop, :func:`run_search`, with a pluggable proposal: a generator that
yields what to measure next (:class:`Measure` a learning rate, :class:`Replicate` a known point),
receives the point measured and returns why it stopped. :func:`paper_rule` is Marinos 2021's rule;
:func:`bracket_and_refine` is golden's, and with a :class:`SequentialReplication` adaptive's.

``search`` and ``golden_search`` evaluate each learning rate at most once with ``replications`` calls
of the objective; all three stop (returning what they have) after ``max_points`` points.

``sparkdl lr`` (:mod:`optimize.cli.lr`) runs them on real jobs through the harness.
"""

from __future__ import annotations

import csv
import math
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Callable, Generator

from optimize.errors import ObjectiveError, OptimizeError, SearchOptionError
from sparkdl.cli import run_cli

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



class BudgetSpent(Exception):
    """The point budget (``max_points``) is spent: the search loop stops with what it has."""


class Evaluator:
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
            raise BudgetSpent
        costs = tuple(self.measure(lr, i) for i in range(1, self.first + 1))
        point = LRPoint(lr, costs, step)
        self.points.append(point)
        self.by_lr[lr] = point
        return point

    def more(self, point: LRPoint) -> LRPoint:
        """One more replication of a known point (never beyond ``replications``)."""
        if len(point.costs) >= self.replications:
            return point
        grown = LRPoint(point.lr, point.costs + (self.measure(point.lr, len(point.costs) + 1),), point.step)
        self.points[self.points.index(point)] = grown
        self.by_lr[point.lr] = grown
        return grown

    def measure(self, lr: float, i: int) -> float:
        """One call of the objective, checked: a number (numpy scalars too), not NaN; failures name the rate."""
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


# ---------------------------------------------------------------- the one search loop


@dataclass(frozen=True)
class Measure:
    """Ask for a learning rate (a known one returns its point without a job); ``step`` says why."""

    lr: float
    step: str


@dataclass(frozen=True)
class Replicate:
    """Ask for one more replication of a known point."""

    point: LRPoint


Ask = Measure | Replicate
#: A proposal rule: a generator over the evaluator that yields what to measure next, receives the
#: point measured, and returns (StopIteration.value) why it stopped.
Proposal = Callable[[Evaluator], Generator[Ask, LRPoint, str]]


def run_search(objective: Objective, proposal: Proposal, method: str, replications: int, max_points: int,
               first: int | None = None) -> LRSearchResult:
    """The search loop every method shares: measure what the proposal asks until it stops or the budget ends."""
    ev = Evaluator(objective, replications, max_points, first)
    asks = proposal(ev)
    try:
        ask = next(asks)
        while True:
            point = ev.more(ask.point) if isinstance(ask, Replicate) else ev(ask.lr, ask.step)
            ask = asks.send(point)
    except StopIteration as stop:
        return ev.result(method, str(stop.value))
    except BudgetSpent:
        return ev.result(method, f"max_points={max_points} reached")


def linear_step(base: float, k: int) -> float:
    """Step k of the linear phase: the double nearest the decimal ``base * (1 + k/10)``."""
    return float(Decimal(repr(float(base))) * (10 + k) / 10)


def check_options(start: float, replications: int, max_points: int, max_lr: float | None) -> None:
    """Raise SearchOptionError naming the first invalid option shared by every method."""
    if not (isinstance(start, (int, float)) and math.isfinite(start) and start > 0):
        raise SearchOptionError(f"start={start!r} must be a positive learning rate, e.g. 0.002")
    if not isinstance(replications, int) or replications < 1:
        raise SearchOptionError(f"replications={replications!r} must be a whole number >= 1")
    if max_points < 1:
        raise SearchOptionError(f"max_points={max_points!r} must be >= 1")
    if max_lr is not None and not max_lr >= start:
        raise SearchOptionError(f"max_lr={max_lr!r} is below start={start!r}: raise max_lr or lower start")


# ---------------------------------------------------------------- proposal 1: the paper's rule


def paper_rule(start: float, max_lr: float | None) -> Proposal:
    """Marinos 2021's rule as a proposal: double while the mean cost falls, then +10% steps from the last good point."""

    def propose(ev: Evaluator) -> Generator[Ask, LRPoint, str]:
        previous = yield Measure(float(start), "start")
        while True:
            nxt = previous.lr * 2.0
            if max_lr is not None and nxt > max_lr:
                return f"doubling would pass max_lr={max_lr:g}"
            point = yield Measure(nxt, "double")
            if not point.mean < previous.mean:
                break
            previous = point
        base, last, k = previous, previous, 1
        while True:
            lr = linear_step(base.lr, k)
            if max_lr is not None and lr > max_lr:
                return f"the next linear step would pass max_lr={max_lr:g}"
            reused = lr in ev.by_lr
            point = yield Measure(lr, "linear")
            if not point.mean < last.mean:
                again = " (2L, already measured)" if reused else ""
                return f"linear step {k}{again} did not improve on {last.lr:g}"
            last, k = point, k + 1

    return propose


def search(objective: Objective, start: float = 0.002, replications: int = 5, *, max_points: int = 40,
           max_lr: float | None = None) -> LRSearchResult:
    """Marinos 2021's heuristic: double while the mean cost goes down, then +10% steps from the last good point."""
    check_options(start, replications, max_points, max_lr)
    return run_search(objective, paper_rule(start, max_lr), "paper", replications, max_points)


# ---------------------------------------------------------------- proposal 2: bracketing + Brent on log lr


def parabola_vertex(a: tuple[float, float], b: tuple[float, float],
                    c: tuple[float, float]) -> tuple[float, float] | None:
    """Vertex (u, f) of the parabola through three points, or None when it has no minimum."""
    (u1, f1), (u2, f2), (u3, f3) = a, b, c
    d1, d2 = (f2 - f1) / (u2 - u1), (f3 - f2) / (u3 - u2)
    curvature = (d2 - d1) / (u3 - u1)  # the quadratic coefficient
    if not math.isfinite(curvature) or curvature <= 0:
        return None
    u = 0.5 * (u1 + u2) - d1 / (2.0 * curvature)
    f = f2 + d1 * (u - u2) + curvature * (u - u1) * (u - u2)
    return u, f


def parabola_at(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float], u: float) -> float:
    """The parabola through a, b, c evaluated at u (Newton's divided differences)."""
    (u1, f1), (u2, f2), (u3, f3) = a, b, c
    d1, d2 = (f2 - f1) / (u2 - u1), (f3 - f2) / (u3 - u2)
    return f1 + d1 * (u - u1) + (d2 - d1) / (u3 - u1) * (u - u1) * (u - u2)


def check_bracket_options(expand: float, ftol: float, xtol: float) -> None:
    if not expand > 1.0:
        raise SearchOptionError(f"expand={expand!r} must be > 1 (the bracketing step factor), e.g. 4")
    if not 0.0 < ftol < 1.0:
        raise SearchOptionError(f"ftol={ftol!r} must be a fraction in (0, 1), e.g. 0.02")
    if not xtol > 1.0:
        raise SearchOptionError(f"xtol={xtol!r} must be a factor > 1, e.g. 1.1")


@dataclass(frozen=True)
class Move:
    """The next learning rate to measure (``lr``), or why to stop (``lr`` None, ``step`` the reason)."""

    lr: float | None
    step: str
    predicted: float = math.nan  # the parabola's value at lr (NaN when the step is not parabolic)
    scale: float = math.nan  # the best point's mean cost when the move was chosen


def bracket_step(pts: list[LRPoint], best: LRPoint, expand: float, floor: float, max_lr: float | None) -> Move | None:
    """Bracketing: step past the best point when it is the highest or lowest rate tried, else None."""
    if best is pts[-1]:  # the best is the highest lr tried: expand upwards
        lr = best.lr * expand
        if max_lr is not None and lr > max_lr:
            if best.lr >= max_lr:
                return Move(None, f"the best point is at max_lr={max_lr:g}")
            lr = max_lr
        return Move(lr, "expand")
    if best is pts[0]:  # the start is past the minimum: expand downwards
        lr = best.lr / expand
        if lr < floor:
            return Move(None, f"the best point is at the lowest learning rate allowed ({floor:g})")
        return Move(lr, "expand")
    return None


def brent_step(pts: list[LRPoint], i: int, xtol: float, ftol: float, confirmed: bool) -> Move:
    """Brent's step around the bracketed best point ``pts[i]`` on log lr (see module doc), or a stop."""
    tol_u = math.log(xtol)
    a, b, c = ((math.log(p.lr), p.mean) for p in pts[i - 1:i + 2])
    if max(b[0] - a[0], c[0] - b[0]) <= tol_u:
        return Move(None, f"the best point's neighbours are within x{xtol:g}")
    smooth = all(math.isfinite(f) for _, f in (a, b, c)) and max(a[1], c[1]) <= JUMP * b[1]
    vertex = parabola_vertex(a, b, c) if smooth else None
    if vertex is not None and confirmed and b[1] - vertex[1] <= ftol * abs(b[1]):
        return Move(None, f"a confirmed parabola promises less than {ftol:.0%} improvement")
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
    predicted = parabola_at(a, b, c, u) if vertex is not None else math.nan
    return Move(math.exp(u), step, predicted, b[1])


# ---------------------------------------------------------------- sequential replication (adaptive)


def pooled_log_sd(points: list[LRPoint], prior: float, prior_df: int = 2) -> float:
    """Pooled sd of one measurement's log cost over replicated points, with ``prior`` worth ``prior_df`` df."""
    ss, df = prior_df * prior**2, prior_df
    for p in points:
        logs = [math.log(c) for c in p.costs if c > 0 and math.isfinite(c)]
        if len(logs) >= 2:
            m = math.fsum(logs) / len(logs)
            ss += math.fsum((x - m) ** 2 for x in logs)
            df += len(logs) - 1
    return math.sqrt(ss / df)


def point_to_replicate(points: list[LRPoint], best: LRPoint, replications: int, sigma: float, z: float,
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


@dataclass(frozen=True)
class SequentialReplication:
    """Adaptive's replication rule: ``noise`` is the prior sd of one log cost, ``z`` the separation asked."""

    replications: int
    noise: float = 0.1
    z: float = 2.0

    def target(self, ev: Evaluator, best: LRPoint, final: bool) -> LRPoint | None:
        sigma = pooled_log_sd(ev.points, self.noise)
        return point_to_replicate(ev.points, best, self.replications, sigma, self.z, final)

    def slack(self, ev: Evaluator, point: LRPoint) -> float:
        """The noise of one point's mean, in z standard errors (relative), added to ftol when confirming."""
        return self.z * pooled_log_sd(ev.points, self.noise) / math.sqrt(len(point.costs))


def bracket_and_refine(start: float, expand: float, ftol: float, xtol: float, floor: float, max_lr: float | None,
                       sequential: SequentialReplication | None = None) -> Proposal:
    """Golden's proposal (bracketing, then Brent on log lr); with ``sequential``, adaptive's replication too."""

    def propose(ev: Evaluator) -> Generator[Ask, LRPoint, str]:
        confirmed = False
        yield Measure(float(start), "start")
        while True:
            pts = sorted(ev.points, key=lambda p: p.lr)
            best = min(ev.points, key=lambda p: p.mean)
            move = bracket_step(pts, best, expand, floor, max_lr)
            if move is None:
                target = sequential.target(ev, best, final=False) if sequential else None
                if target is not None:
                    yield Replicate(target)
                    continue
                move = brent_step(pts, pts.index(best), xtol, ftol, confirmed)
            if move.lr is None:
                target = sequential.target(ev, best, final=True) if sequential else None
                if target is None:
                    return move.step
                yield Replicate(target)  # the answer gets all its replications and beats every rival first
                continue
            before = len(ev.points)
            point = yield Measure(move.lr, move.step)
            if len(ev.points) == before:  # cannot happen by construction; never loop on a known point
                return f"no new learning rate to try near {best.lr:g}"
            if move.step != "expand":  # a parabola confirmed within ftol (plus the noise of one measurement)
                slack = ftol + (sequential.slack(ev, point) if sequential else 0.0)
                confirmed = abs(point.mean - move.predicted) <= slack * abs(move.scale)

    return propose


def golden_search(objective: Objective, start: float = 0.002, replications: int = 5, *, expand: float = 4.0,
                  ftol: float = 0.05, xtol: float = 1.1, max_points: int = 40, max_lr: float | None = None,
                  min_lr: float | None = None) -> LRSearchResult:
    """Bracket on log lr with steps of ``expand``, then Brent's parabolic/golden refinement (see module doc)."""
    check_options(start, replications, max_points, max_lr)
    check_bracket_options(expand, ftol, xtol)
    floor = min_lr if min_lr is not None else start / expand**4
    proposal = bracket_and_refine(start, expand, ftol, xtol, floor, max_lr)
    return run_search(objective, proposal, "golden", replications, max_points)


def adaptive_search(objective: Objective, start: float = 0.002, replications: int = 5, *, expand: float = 4.0,
                    ftol: float = 0.05, xtol: float = 1.1, noise: float = 0.1, z: float = 2.0, max_points: int = 40,
                    max_lr: float | None = None, min_lr: float | None = None) -> LRSearchResult:
    """Golden's bracketing and Brent steps with sequential replication (see module doc).

    Each new learning rate is measured once; ``replications`` is the most any point gets. Only the best
    point and the runner-up are replicated, one job at a time, while their means are within ``z``
    standard errors of each other; the sd of one measurement's log cost is pooled over replicated points
    with ``noise`` as a prior worth 2 degrees of freedom."""
    check_options(start, replications, max_points, max_lr)
    check_bracket_options(expand, ftol, xtol)
    if not noise > 0 or not z > 0:
        raise SearchOptionError(f"noise={noise!r} and z={z!r} must be positive, e.g. noise=0.1 (10%), z=2")
    floor = min_lr if min_lr is not None else start / expand**4
    proposal = bracket_and_refine(start, expand, ftol, xtol, floor, max_lr,
                                  SequentialReplication(replications, noise, z))
    return run_search(objective, proposal, "adaptive", replications, max_points, first=1)


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


if __name__ == "__main__":
    from optimize.cli.lr import main
    sys.exit(run_cli(main))
