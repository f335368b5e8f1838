"""Benchmark logparse against grep on a >= 1 GB corpus built from the real logs in tests/fixtures/logs.

    .venv/bin/python bench/logparse.py [--size-gb 1.0] [--file-mb 8] [--dense] [--keep]

Each corpus file is one real log whose training section is replicated: within every
epoch, the stretch from the first iteration line to "Epoch finished" (iteration lines
with the Spark lines between them) is repeated until the file reaches --file-mb, so
the density of BigDL lines is the real one. --dense repeats the iteration lines alone
(the worst case for the full parse). The failed logs are copied as they are. Then,
in one run, on warm caches, best of 3: ``python -m logparse`` (final figures only,
interpreter start included), ``python -m logparse --full`` and ``grep -rc "Epoch
finished"``, with MB/s and ratios to grep. The corpus (bench/corpus/, git-ignored)
is deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "logs"
CORPUS = ROOT / "bench" / "corpus"
ITER = re.compile(rb"^.*\] Trained .*$\n", re.M)


def inflate(raw: bytes, target: int, dense: bool) -> bytes:
    """``raw`` with each epoch's training stretch repeated until the log is about ``target`` bytes."""
    ends = [m.start() for m in re.finditer(rb"^.*Epoch finished\. .*$", raw, re.M)]
    if not ends:
        return raw
    stretches, prev = [], 0
    for end in ends:
        first = raw.find(b"] Trained ", prev, end)
        if first < 0:
            prev = end
            continue
        start = raw.rfind(b"\n", 0, first) + 1
        stretches.append((start, end))
        prev = end
    body = sum((len(b"".join(ITER.findall(raw, s, e))) if dense else e - s) for s, e in stretches)
    reps = max(1, round((target - len(raw)) / max(1, body)) + 1)
    out, pos = [], 0
    for s, e in stretches:
        piece = b"".join(ITER.findall(raw, s, e)) if dense else raw[s:e]
        out += [raw[pos:s], piece * (reps - 1) if dense else b"", raw[s:e] * (1 if dense else reps)]
        pos = e
    out.append(raw[pos:])
    return b"".join(out)


def build(size: int, file_size: int, dense: bool) -> tuple[int, int]:
    """Write the corpus; returns (files, bytes)."""
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    CORPUS.mkdir(parents=True)
    templates = []
    for gz in sorted(FIXTURES.glob("*.out.gz")):
        raw = gzip.decompress(gz.read_bytes())
        templates.append((gz.name[:-7], inflate(raw, file_size, dense), (FIXTURES / (gz.name[:-7] + ".err")).read_bytes()))
    files = total = 0
    while total < size:
        for name, data, err in templates:
            point = CORPUS / f"point{files % 16:02d}"
            point.mkdir(exist_ok=True)
            (point / f"{name}-{files:05d}.out").write_bytes(data)
            (point / f"{name}-{files:05d}.err").write_bytes(err)
            files, total = files + 1, total + len(data) + len(err)
            if total >= size:
                break
    return files, total


def timed(argv: list[str], repeat: int) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
        dt = time.perf_counter() - t
        if r.returncode not in (0, 1) or (argv[0] != "grep" and r.returncode != 0):
            raise SystemExit(f"{argv[:3]} failed ({r.returncode}): {r.stderr[-500:]}")
        best, out = min(best, dt), r.stdout
    return best, out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size-gb", type=float, default=1.0)
    p.add_argument("--file-mb", type=float, default=8.0)
    p.add_argument("--dense", action="store_true", help="replicate iteration lines only")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--keep", action="store_true", help="keep bench/corpus/ afterwards")
    a = p.parse_args(argv)
    t = time.perf_counter()
    files, total = build(int(a.size_gb * 1e9), int(a.file_mb * 1e6), a.dense)
    mb = total / 1e6
    print(f"corpus: {files} logs (.out + .err), {mb:,.0f} MB, built in {time.perf_counter() - t:.1f} s"
          f" ({'dense iteration lines' if a.dense else 'real line mix'})")
    try:
        outs = sorted(str(q) for q in CORPUS.rglob("*.out"))
        py = [sys.executable, "-m", "logparse"]
        subprocess.run(["cat", *outs], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
        g, gout = timed(["grep", "-rc", "--include=*.out", "Epoch finished", str(CORPUS)], a.repeat)
        f, fout = timed(py + [str(CORPUS)], a.repeat)
        u, uout = timed(py + ["--full", str(CORPUS)], a.repeat)
        grep_total = sum(int(line.rsplit(":", 1)[1]) for line in gout.splitlines())
        rows, full_rows = list(csv.DictReader(io.StringIO(fout))), list(csv.DictReader(io.StringIO(uout)))
        assert rows == full_rows, "final-only and full parse disagree"
        assert sum(int(r["epochs_completed"]) for r in rows) == grep_total, "epoch counts disagree with grep"
        statuses = {s: sum(r["status"] == s for r in rows) for s in ("ok", "failed", "incomplete")}
        print(f"checked: {len(rows)} logs {statuses}; epochs completed = grep's {grep_total} 'Epoch finished' lines;"
              f" final-only == full on every field")
        assert len(rows) == files, f"{len(rows)} rows for {files} logs"
        print(f"{'':34}{'seconds':>9}{'MB/s':>10}{'vs grep':>10}")
        for name, sec in (('grep -rc "Epoch finished"', g), ("python -m logparse (final only)", f),
                          ("python -m logparse --full", u)):
            print(f"{name:34}{sec:9.3f}{mb / sec:10,.0f}{g / sec:9.2f}x")
    finally:
        if not a.keep:
            shutil.rmtree(CORPUS, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
