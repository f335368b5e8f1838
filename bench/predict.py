"""Benchmark the prediction models on a campaign: R^2 and MAPE of every model on the random 80/20 and
the extrapolation split, and the differential-evolution fit time of the generic model (vectorized
population vs one candidate at a time).

    .venv/bin/python bench/predict.py CAMPAIGN_DIR [--target wall_clock_s] [--seed 0]
    .venv/bin/python bench/predict.py --make-synthetic /tmp/synthetic_campaign   # demo table, not data

--make-synthetic writes a 48-run full factorial (network x nodes x executors x cores x batch size,
3 epochs) whose times follow a simple compute + synchronization law with 5% lognormal noise, so
that the script can be tried before a real campaign exists. Never commit that table.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from models.errors import ModelError
from models.predict import PowerLawModel, compare, make_splits, read_results
from models.predict.cli import to_text


def synthetic_campaign(directory: Path, seed: int = 0) -> Path:
    """Write a synthetic results.csv (see the module docstring) into ``directory``; return its path."""
    rng = np.random.default_rng(seed)
    levels = itertools.product(["lenet", "birnn"], [1, 2, 4], [1, 2], [1, 2], [64, 256])
    df = pd.DataFrame(list(levels), columns=["model", "nodes", "executors", "executor_cores", "batch_size"])
    df.insert(0, "run", np.arange(1, len(df) + 1))
    df.insert(1, "replicate", 1)
    df["epochs"], df["learning_rate"], df["status"] = 3, 0.01, "ok"
    m = (df["nodes"] * df["executors"] * df["executor_cores"]).to_numpy(dtype=float)
    iterations = df["epochs"] * 60000 / df["batch_size"]
    per_sample = np.where(df["model"] == "birnn", 4e-3, 1.5e-3)
    compute = df["epochs"] * 60000 * per_sample / m**0.85
    sync = iterations * 0.01 * np.log2(1 + m) * (1 + 0.3 * (df["nodes"] > 1))
    df["wall_clock_s"] = (25 + compute + sync) * np.exp(rng.normal(0, 0.05, len(df)))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "results.csv"
    df.to_csv(path, index=False)
    return path


def de_timing(table: pd.DataFrame, target: str, seed: int) -> list[str]:
    """Fit the generic model on the whole table, vectorized and not; report time and generations."""
    lines = []
    for vectorized in (True, False):
        start = time.perf_counter()
        fit = PowerLawModel(target, seed=seed, vectorized=vectorized).fit(table).fit_
        elapsed = time.perf_counter() - start
        assert fit is not None
        lines.append(
            f"DE fit ({'vectorized population' if vectorized else 'one candidate per call'}): {elapsed:.2f} s, "
            f"{fit.iterations} generations, {fit.evaluations} objective calls, MAE {fit.objective:.4g} (scaled)"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaign", nargs="?", type=Path, help="campaign directory or results CSV")
    parser.add_argument("--target", default="wall_clock_s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--make-synthetic", type=Path, metavar="DIR", help="write a synthetic demo campaign to DIR")
    args = parser.parse_args(argv)
    if args.make_synthetic:
        print(f"wrote synthetic demo table {synthetic_campaign(args.make_synthetic, args.seed)}")
        return 0
    if args.campaign is None:
        parser.error("give a campaign directory (or --make-synthetic DIR)")
    try:
        table = read_results(args.campaign)
        table = table[table[args.target].notna()].reset_index(drop=True) if args.target in table else table
        splits = make_splits(table, ["random", "extrapolate"], args.seed)
        result = compare(splits, args.target, ["linear", "rf", "gb", "generic", "ernest"], args.seed)
        timing = de_timing(table, args.target, args.seed)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(to_text(result, len(table)))
    print()
    print("\n".join(timing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
