"""MNIST decoded once per campaign: every run reads the same cached .npz instead of decoding the data.

Decoding the 5,000-digit sample (a CSV) takes several seconds in every job; reading the cached
split takes ~0.1 s. The cache lives in the campaign folder (``<campaign>/data/mnist-<digest>.npz``,
keyed by the data source and the split seed) and is written before the first run. Only where
drivers run on this machine (local and fixed-master backends): with ``--cluster`` the driver runs on
the master host, which decodes the data itself as before.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.command import SubmitOptions

DATA_DIR = "data"


def drivers_run_here(backend: object) -> bool:
    """Whether spark-submit (and so the driver) runs on this machine for this backend."""
    from harness.backends import FixedBackend, LocalBackend

    return isinstance(backend, (LocalBackend, FixedBackend))


def with_data_cache(options: SubmitOptions, campaign: Path, backend: object) -> SubmitOptions:
    """``options`` with the campaign's cached split (decoded now if missing), where drivers run here."""
    if options.data_cache is not None or not drivers_run_here(backend):
        return options
    from jobs.mnist import SPLIT_SEED, ensure_cache

    return replace(options, data_cache=ensure_cache(Path(campaign).resolve() / DATA_DIR, options.data_dir, SPLIT_SEED))
