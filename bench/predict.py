"""Benchmark the prediction models on a campaign: R^2 (also as a share of the noise ceiling, the R^2 of
the cell means of replicated design points), MAPE and the empirical coverage of the 90 % CV+
prediction intervals of every model on the random 80/20 and the extrapolation split, with the
warnings; Kavarakuntla 2024's generic model with free exponents fitted by differential evolution beside its
Extra-P normal form; and the differential-evolution fit time (vectorized population vs one candidate
at a time).

    .venv/bin/python bench/predict.py CAMPAIGN_DIR [--target wall_clock_s] [--seed 0] [--level 0.9]
                                      [--repeats 20] [--measured [--splits 5]]
    .venv/bin/python bench/predict.py examples/marinos2021/table2.csv --response cost   # Marinos 2021's Table II
    .venv/bin/python bench/predict.py --make-synthetic /tmp/synthetic_campaign   # demo table, not data

--repeats N adds every model's mean, min and max R^2 over N random 80/20 splits, as a share of the
noise ceiling and of its adjusted value (the R^2 the true cell means would score on new rows): one
split of 64 rows moves R^2 by several points.

--measured adds which measured columns help: the random forest's R^2 on ``--splits``
random 80/20 splits, with the factors only, with the factors and each spark_*/host_* column, and with
all of them; a column whose correlation with the target is above 0.95 is flagged as a near-copy of
it (it explains the time because it is the time, e.g. executor run time).

--make-synthetic writes a 48-run full factorial (network x nodes x executors x cores x batch size,
3 epochs) whose times follow a simple compute + synchronization law with 5% lognormal noise, so
that the script can be tried before a real campaign exists. Never commit that table.

How long ``sparkdl predict`` takes (a 500-row study of that factorial, with intervals, against an older commit):
bench/predict_speed.py.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

# bench/logparse.py would shadow the logparse package: the project root goes first
sys.path[:1] = [str(Path(__file__).resolve().parent.parent)]

import numpy as np
import pandas as pd

from models.errors import ModelError
from models.predict import PowerLawModel, compare, make_splits, read_results
from models.predict.compare import MODELS
from models.predict.cli import to_text
from models.predict.splits import Split, random_split
from models.predict.table import measured_columns
from models.predict.trees import RandomForestModel
from sparkdl.options import CommandParser

NEAR_COPY = 0.95


def synthetic_wall_clock(df: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """The synthetic law of the module docstring: compute + synchronization, with 5 % lognormal noise."""
    m = (df["nodes"] * df["executors"] * df["executor_cores"]).to_numpy(dtype=float)
    iterations = df["epochs"] * 60000 / df["batch_size"]
    per_sample = np.where(df["model"] == "birnn", 4e-3, 1.5e-3)
    compute = df["epochs"] * 60000 * per_sample / m**0.85
    sync = iterations * 0.01 * np.log2(1 + m) * (1 + 0.3 * (df["nodes"] > 1))
    return ((25 + compute + sync) * np.exp(rng.normal(0, 0.05, len(df)))).to_numpy(dtype=float)


def synthetic_campaign(directory: Path, seed: int = 0) -> Path:
    """Write a synthetic results.csv (see the module docstring) into ``directory``; return its path."""
    rng = np.random.default_rng(seed)
    levels = itertools.product(["lenet", "birnn"], [1, 2, 4], [1, 2], [1, 2], [64, 256])
    df = pd.DataFrame(list(levels), columns=["model", "nodes", "executors", "executor_cores", "batch_size"])
    df.insert(0, "run", np.arange(1, len(df) + 1))
    df.insert(1, "replicate", 1)
    df["epochs"], df["learning_rate"], df["status"] = 3, 0.01, "ok"
    df["wall_clock_s"] = synthetic_wall_clock(df, rng)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "results.csv"
    df.to_csv(path, index=False)
    return path


def search_comparison(splits: list[Split], target: str, seed: int) -> list[str]:
    """Kavarakuntla 2024's generic model with free exponents in [-5, 5] (differential evolution) beside the
    Extra-P normal form (exponents from a fixed set, chosen by cross-validation), on every split."""
    lines = ["generic model: free exponents (DE, Kavarakuntla 2024) vs normal form (Extra-P)",
             f"  {'split':<12} {'search':<12} {'R^2':>10} {'MAPE':>12}  degenerate because"]
    for split in splits:
        for search in ("de", "normal-form"):
            try:
                model = PowerLawModel(target, seed=seed, search=search).fit(split.train)
                ev = model.evaluate(split.test)
            except ModelError as exc:
                lines.append(f"  {split.kind:<12} {search:<12} failed: {exc}")
                continue
            assert model.fit_ is not None
            why = "; ".join(model.fit_.problems) or "-"
            lines.append(f"  {split.kind:<12} {search:<12} {ev.r2:>10.4g} {100 * ev.mape:>11.1f}%  {why}")
    return lines


def de_timing(table: pd.DataFrame, target: str, seed: int) -> list[str]:
    """Fit the generic model on the whole table, vectorized and not; report time and generations."""
    lines = []
    for vectorized in (True, False):
        start = time.perf_counter()
        fit = PowerLawModel(target, seed=seed, vectorized=vectorized, search="de").fit(table).fit_
        elapsed = time.perf_counter() - start
        assert fit is not None
        lines.append(
            f"DE fit ({'vectorized population' if vectorized else 'one candidate per call'}): {elapsed:.2f} s, "
            f"{fit.iterations} generations, {fit.evaluations} objective calls, MAE {fit.objective:.4g} (scaled)"
        )
    return lines


def rf_r2(table: pd.DataFrame, target: str, measured: list[str], seeds: range) -> float:
    """Mean R^2 of the random forest (factors + ``measured``) over random 80/20 splits, one per seed."""
    scores = []
    for seed in seeds:
        split = random_split(table, 0.2, seed)
        model = RandomForestModel(target, seed=seed)
        model.measured = measured
        scores.append(model.fit(split.train).evaluate(split.test).r2)
    return float(np.mean(scores))


def measured_ablation(table: pd.DataFrame, target: str, n_splits: int) -> list[str]:
    """Which measured columns help the random forest predict ``target``, one column at a time."""
    columns = measured_columns(table, "all", target)
    finite = np.all(np.isfinite(table[columns + [target]].apply(pd.to_numeric, errors="coerce").to_numpy(float)), axis=1)
    table = table[finite].reset_index(drop=True)
    seeds = range(n_splits)
    base = rf_r2(table, target, [], seeds)
    lines = [f"measured inputs: random forest, mean R^2 over {n_splits} random 80/20 splits of {len(table)} ok runs "
             f"with every measured column",
             f"  {'inputs':<36} {'R^2':>7} {'gain':>7}  r with {target}",
             f"  {'factors only':<36} {base:>7.3f} {'':>7}"]
    rows = []
    for c in columns:
        r = float(np.corrcoef(table[c].astype(float), table[target].astype(float))[0, 1])
        rows.append((rf_r2(table, target, [c], seeds), c, r))
    for score, c, r in sorted(rows, reverse=True):
        flag = "  near-copy of the target" if abs(r) > NEAR_COPY else ""
        lines.append(f"  {'+ ' + c:<36} {score:>7.3f} {score - base:>+7.3f}  {r:+.2f}{flag}")
    everything = rf_r2(table, target, columns, seeds)
    lines.append(f"  {'+ all ' + str(len(columns)) + ' measured columns':<36} {everything:>7.3f} {everything - base:>+7.3f}")
    return lines


def repeated_random(table: pd.DataFrame, target: str, repeats: int) -> list[str]:
    """Each model's R^2 over ``repeats`` random 80/20 splits (seeds 0..repeats-1) as a share of the
    noise ceiling: one split of 64 rows moves R^2 by several points, the mean does not."""
    splits = [random_split(table, seed=seed) for seed in range(repeats)]
    result = compare(splits, target, list(MODELS), 0, level=None)
    lines = [f"R^2 over {repeats} random 80/20 splits (seeds 0..{repeats - 1}); "
             f"noise ceiling {result.ceiling.r2:.3f}, adjusted {result.ceiling.adjusted_r2:.3f}",
             f"  {'model':<9} {'mean':>7} {'min':>7} {'max':>7} {'mean/ceiling':>13} {'mean/adjusted':>14}"]
    for name in MODELS:
        r2 = np.array([r.r2 for r in result.rows if r.model == name and r.error is None])
        if r2.size == 0:
            lines.append(f"  {name:<9} failed")
            continue
        lines.append(f"  {name:<9} {r2.mean():>7.3f} {r2.min():>7.3f} {r2.max():>7.3f} "
                     f"{100 * r2.mean() / result.ceiling.r2:>12.0f}% {100 * r2.mean() / result.ceiling.adjusted_r2:>13.0f}%")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaign", nargs="?", type=Path, help="campaign directory or results CSV")
    parser.add_argument("--response", default="wall_clock_s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--level", type=float, default=0.9, help="nominal level of the prediction intervals")
    parser.add_argument("--measured", action="store_true", help="also rank the measured columns (spark_*, host_*)")
    parser.add_argument("--splits", type=int, default=5, help="--measured: random splits per figure (default 5)")
    parser.add_argument("--repeats", type=int, default=20,
                        help="random splits for the mean R^2 of every model (default 20; 0 skips)")
    parser.add_argument("--make-synthetic", type=Path, metavar="DIR", help="write a synthetic demo campaign to DIR")
    args = parser.parse_args(argv)
    if args.make_synthetic:
        print(f"wrote synthetic demo table {synthetic_campaign(args.make_synthetic, args.seed)}")
        return 0
    if args.campaign is None:
        parser.error("give a campaign directory (or --make-synthetic DIR)")
    try:
        table = read_results(args.campaign)
        table = table[table[args.response].notna()].reset_index(drop=True) if args.response in table else table
        splits = make_splits(table, ["random", "extrapolate"], args.seed)
        result = compare(splits, args.response, list(MODELS), args.seed,
                         level=args.level)
        searches = search_comparison(splits, args.response, args.seed)
        timing = de_timing(table, args.response, args.seed)
        ablation = measured_ablation(table, args.response, args.splits) if args.measured else []
        repeated = repeated_random(table, args.response, args.repeats) if args.repeats > 0 else []
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(to_text(result, len(table)))
    print()
    if repeated:
        print("\n".join(repeated))
        print()
    print("\n".join(searches))
    print()
    print("\n".join(timing))
    if ablation:
        print()
        print("\n".join(ablation))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
