"""The once-per-campaign MNIST cache: what a job reads back is exactly the split it would decode."""

from __future__ import annotations

import numpy as np
import pytest

from jobs import mnist
from jobs.errors import DataError


def small_split(seed: int = 0) -> mnist.Split:
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (50, 28, 28), dtype=np.uint8)
    return mnist.stratified_split(mnist.Digits(images, np.arange(50) % 10), 0.2, seed)


def test_round_trip_is_exact(tmp_path):
    split = small_split()
    back = mnist.read_cache(mnist.write_cache(split, tmp_path / "c" / "m.npz"))
    for a, b in ((split.train, back.train), (split.test, back.test)):
        assert np.array_equal(a.images, b.images) and np.array_equal(a.labels, b.labels)
        assert b.images.dtype == np.uint8 and b.images.shape[1:] == (28, 28)
    assert not list((tmp_path / "c").glob(".*tmp"))  # written atomically


def test_name_depends_on_source_and_seed(tmp_path):
    names = {mnist.cache_name(None, 42), mnist.cache_name(None, 43), mnist.cache_name(tmp_path, 42)}
    assert len(names) == 3 and mnist.cache_name(None, 42) == mnist.cache_name(None, 42)


def test_bad_cache_is_one_line_error(tmp_path):
    bad = tmp_path / "m.npz"
    bad.write_bytes(b"not numpy")
    with pytest.raises(DataError, match="delete it and run again"):
        mnist.read_cache(bad)


@pytest.mark.slow
def test_ensure_cache_decodes_the_sample_once(tmp_path):
    path = mnist.ensure_cache(tmp_path, None, 42)
    stamp = path.stat().st_mtime_ns
    assert mnist.ensure_cache(tmp_path, None, 42) == path and path.stat().st_mtime_ns == stamp  # not redone
    direct, cached = mnist.load_sample(42), mnist.read_cache(path)
    assert np.array_equal(direct.train.images, cached.train.images)
    assert np.array_equal(direct.test.labels, cached.test.labels) and len(cached.train) == 4000
