"""A finished study's logs, as another team keeps them: one folder per job named by its settings.

    .venv/bin/python bench/studylogs.py DIR [--points 24] [--replicates 3] [--min-mb 0.2] [--max-mb 3] [--seed 25]

writes ``DIR/experiment<replicate>_<learning_rate>_<batch_size>_<epochs>_<nodes>_<regularisation>/<x.xxxxxx>.out``
(the layout of a finished BigDL 0.8 study, e.g. ``experiment1_0.01_128_10_1_0.001/9.100000.out``), made from
the real logs in tests/fixtures/logs (bench/logparse.py ``inflate`` grows each to its size):

* most jobs end as the study's did: right after the last validation the program ``print``s its own result
  (the real ``dllib-print-after-training`` ending: "Optimization Done. ..." and the predicted classes), with
  no Spark shutdown line; the others keep their real ending (Spark's shutdown, or the job's summary line);
* a tenth failed in training, the disk full: the log stops inside epoch 2 with an executor's
  ``java.io.IOException: No space left on device`` and the driver's Py4JJavaError traceback (the real
  ``birnn-batch65`` traceback, its message replaced);
* every log's wall clocks are scaled (all ``[Wall Clock Xs]`` and epoch times, so the log stays consistent)
  by a factor that depends on the settings plus noise, and its final accuracy is a seeded correct/count, so
  an analysis of the study finds effects and residual noise.

Each log's truth (status, scaled final wall clock, accuracy) is returned by :func:`make_study` for checks.
Settings: learning_rate 0.01/0.05/0.1, batch_size 32/64/128, nodes 1/2/4, regularisation 0.001/0.0001, and
epochs 2 or 3 (each log's template trained that many epochs, so the folder's plan is the log's own).
"""

from __future__ import annotations

import gzip
import itertools
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from sparkdl.options import CommandParser

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "logs"
FIELDS = (r"experiment(?P<replicate>\d+)_(?P<learning_rate>[^_/]+)_(?P<batch_size>\d+)_(?P<epochs>\d+)_"
          r"(?P<nodes>\d+)_(?P<regularisation>[^_/]+)/")
#: The templates by epochs: real finished DistriOptimizer logs (tests/fixtures/logs/README.md).
TEMPLATES = {2: "dllib-print-after-training", 3: "lenet-lr2.5-3ep"}
GRID = {"learning_rate": ("0.01", "0.05", "0.1"), "batch_size": ("32", "64", "128"), "epochs": ("2", "3"),
        "nodes": ("1", "2", "4"), "regularisation": ("0.001", "0.0001")}
WALL = re.compile(rb"\[Wall Clock ([0-9.]+)s\]")
EPOCH_MS = re.compile(rb"Wall clock time is ([0-9.]+) ms")
LAST_ACC = re.compile(rb"Top1Accuracy is Accuracy\(correct: (\d+), count: (\d+), accuracy: ([0-9.Ee-]+)\)")
DISK_FULL = "No space left on device"


@dataclass(frozen=True)
class StudyLog:
    """One log written, and what a correct reader must find in it."""

    path: Path
    settings: dict[str, str]
    status: str            # ok or failed
    wall_clock_s: float | None
    accuracy: float | None
    ending: str            # print, original, disk-full


def _fixture(name: str) -> bytes:
    return gzip.decompress((FIXTURES / f"{name}.out.gz").read_bytes())


def _final_validation_end(raw: bytes) -> int:
    i = raw.rfind(b"Top1Accuracy is Accuracy(")
    return raw.index(b"\n", i) + 1


def _scale(raw: bytes, factor: float) -> bytes:
    raw = WALL.sub(lambda m: b"[Wall Clock %.9fs]" % (float(m.group(1)) * factor), raw)
    return EPOCH_MS.sub(lambda m: b"Wall clock time is %.6f ms" % (float(m.group(1)) * factor), raw)


def _with_accuracy(raw: bytes, correct: int) -> bytes:
    """The last validation's Top1Accuracy set to ``correct`` of its count (accuracy = correct/count)."""
    m = list(LAST_ACC.finditer(raw))[-1]
    count = int(m.group(2))
    line = b"Top1Accuracy is Accuracy(correct: %d, count: %d, accuracy: %r)" % (correct, count, correct / count)
    return raw[:m.start()] + line + raw[m.end():]


def _disk_full_tail(layout_line: bytes) -> bytes:
    """An executor's disk-full error (in the log's own layout) and the driver's real traceback, message replaced."""
    prefix = layout_line[:layout_line.index(b"INFO")]
    batch65 = _fixture("birnn-batch65")
    tb = batch65[batch65.index(b"Traceback (most recent call last):"):]
    first = tb.index(b"\n: ") + 3  # the Java exception py4j relays: the disk-full one here
    tb = tb[:first] + b"java.io.IOException: " + DISK_FULL.encode() + tb[tb.index(b"\n", first):]
    tb = tb.replace(b"total batch size: 65 should be divided by total core number: 2", DISK_FULL.encode())
    return (prefix + b"ERROR Executor:94 - Exception in task 0.0 in stage 23.0 (TID 41)\n"
            b"java.io.IOException: " + DISK_FULL.encode() + b"\n"
            b"\tat java.io.FileOutputStream.writeBytes(Native Method)\n"
            b"\tat java.io.FileOutputStream.write(FileOutputStream.java:326)\n"
            b"\tat org.apache.spark.storage.DiskBlockObjectWriter.write(DiskBlockObjectWriter.scala:253)\n" + tb)


def make_log(settings: dict[str, str], rng: random.Random, size: int, ending: str) -> tuple[bytes, float, float]:
    """One job's log for these settings; (bytes, final wall clock, final accuracy)."""
    from bench.logparse import inflate  # bench/logparse.py's real-structure growth

    raw = _fixture(TEMPLATES[int(settings["epochs"])])
    # the wall clock falls with nodes and batch size, rises with regularisation; 5 % noise
    factor = (4.0 / float(settings["nodes"]) ** 0.7) * (128 / float(settings["batch_size"])) ** 0.5
    factor *= 1.6 if settings["regularisation"] == "0.001" else 1.0
    factor *= rng.lognormvariate(0, 0.05)
    raw = _scale(inflate(raw, size), factor)
    count = int(list(LAST_ACC.finditer(raw))[-1].group(2))
    base = 0.35 + 2.0 * float(settings["learning_rate"])
    correct = max(0, min(count, round(count * (base + rng.gauss(0, 0.03)))))
    raw = _with_accuracy(raw, correct)
    wall = float(WALL.findall(raw[:_final_validation_end(raw)])[-1])
    if ending == "print":
        end = _final_validation_end(raw)
        raw = raw[:end] + (b"Optimization Done. Total %s epochs finished in %.1f S\n" % (settings["epochs"].encode(),
                                                                                        wall * 1.3)
                           + b"[" + b", ".join(b"%d" % rng.randrange(10) for _ in range(8)) + b"]\n")
    elif ending == "disk-full":
        second = raw.index(b"[Epoch 2 ")
        cut = raw.index(b"\n", raw.index(b"] Trained ", second)) + 1
        line_start = raw.rfind(b"\n", 0, second) + 1
        raw = raw[:cut] + _disk_full_tail(raw[line_start:cut])
    return raw, wall, correct / count


def make_study(where: Path, points: int = 24, replicates: int = 3, min_mb: float = 0.2, max_mb: float = 3.0,
               seed: int = 25, failed_share: float = 0.1, print_share: float = 0.8,
               limit: int | None = None) -> list[StudyLog]:
    """Write the study under ``where`` (see the module docstring); the logs written, with their truth.
    ``limit``: stop after that many logs (a study whose last point was not replicated as often)."""
    rng = random.Random(seed)
    grid = [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]
    chosen = rng.sample(grid, min(points, len(grid)))
    logs: list[StudyLog] = []
    for i, (rep, settings) in enumerate(itertools.product(range(1, replicates + 1), chosen)):
        if limit is not None and i >= limit:
            break
        roll = rng.random()
        ending = "disk-full" if roll < failed_share else "print" if roll < failed_share + print_share else "original"
        size = int(rng.uniform(min_mb, max_mb) * 1e6)
        raw, wall, acc = make_log(settings, rng, size, ending)
        folder = where / ("experiment{}_{learning_rate}_{batch_size}_{epochs}_{nodes}_{regularisation}"
                          .format(rep, **settings))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{(i % 97 + 3) / 10:f}.out"
        path.write_bytes(raw)
        failed = ending == "disk-full"
        logs.append(StudyLog(path, dict(settings, replicate=str(rep)), "failed" if failed else "ok",
                             None if failed else wall, None if failed else acc, ending))
    return logs


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path, help="folder to write the study into")
    p.add_argument("--points", type=int, default=24, help="design points (of 108 settings)")
    p.add_argument("--replicates", type=int, default=3)
    p.add_argument("--min-mb", type=float, default=0.2)
    p.add_argument("--max-mb", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=25)
    a = p.parse_args(argv)
    logs = make_study(a.out, a.points, a.replicates, a.min_mb, a.max_mb, a.seed)
    size = sum(x.path.stat().st_size for x in logs)
    print(f"{len(logs)} logs, {size / 1e6:,.0f} MB under {a.out}; ingest with:\n"
          f"  python -m harness.ingest {a.out} --fields '{FIELDS}' --out runs/study")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
