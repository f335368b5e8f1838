"""Benchmark ``python -m logparse`` against ``grep -c "Epoch finished"`` on corpora shaped like users' own.

    .venv/bin/python bench/logparse.py [--logs 947] [--big 8] [--repeats 3] [--seed 25] [--keep]

Two corpora, built from the real logs in tests/fixtures/logs:

* ``study``: ``--logs`` logs of 0.2 to 3 MB each, shaped like a finished BigDL 0.8 study (947 logs,
  1.33 GB): one folder per job named by its settings, most logs ending in the program's own output after
  training (no Spark shutdown line), a tenth failed in training (disk full); made by bench/studylogs.py;
* ``big``: ``--big`` logs of 8 MB each (from the fixtures that trained at least one epoch).

Each log is one fixture whose training section is repeated (``inflate``): within every finished epoch, the
stretch from its first iteration line to its "Epoch finished" line (iteration lines with the Spark lines
between them) is repeated until the log reaches its size, so the density of BigDL lines and the tail after
training are the real ones. The .err beside each fixture is copied beside its log (``big``).

Then, for each corpus, in one run, page cache warm, bytecode cache on (Python's default), best of
``--repeats``: ``python -m logparse DIR`` (final figures and status, interpreter start included) and
``grep -rc --include=*.out "Epoch finished" DIR`` **writing its counts to a file**: with its output on
/dev/null GNU grep stops at each file's first match (it behaves as ``-q``) and looks several times faster
than it is. Both outputs go to files. Printed as seconds, MB/s and logparse's time over grep's, wall and
CPU. Checks before timing: one row per log, every log's ``epochs_completed`` equals grep's count of
"Epoch finished" in it (LocalOptimizer logs print none: there the figure is checked against the fixture's
own parse), and in the study every log's status, final wall clock and accuracy are the ones it was
written with. The corpora (under a temporary directory) are deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from sparkdl.options import CommandParser

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "logs"
EPOCH_END = re.compile(rb"^.*Epoch finished\. .*$", re.M)


def inflate(raw: bytes, target: int) -> bytes:
    """``raw`` with each finished epoch's training stretch repeated until the log is about ``target`` bytes."""
    ends = [m.start() for m in EPOCH_END.finditer(raw)]
    stretches, prev = [], 0
    for end in ends:
        first = raw.find(b"] Trained ", prev, end)
        if first >= 0:
            stretches.append((raw.rfind(b"\n", 0, first) + 1, end))
        prev = end
    if not stretches:  # LocalOptimizer: repeat the iteration lines of its first epoch
        its = [m.start() for m in re.finditer(rb"^.*\] loss is .*$", raw, re.M)]
        if not its:
            return raw
        stretches = [(its[0], its[min(2, len(its) - 1)])]
    body = sum(e - s for s, e in stretches) or 1
    reps = max(1, round((target - len(raw)) / body) + 1)
    out, pos = [], 0
    for s, e in stretches:
        out += [raw[pos:s], raw[s:e] * reps]
        pos = e
    out.append(raw[pos:])
    return b"".join(out)


def templates() -> list[tuple[str, bytes, bytes | None]]:
    found = []
    for gz in sorted(FIXTURES.glob("*.out.gz")):
        name = gz.name[:-7]
        err = FIXTURES / f"{name}.err"
        found.append((name, gzip.decompress(gz.read_bytes()), err.read_bytes() if err.exists() else None))
    return found


def build(where: Path, count: int, low: float, high: float, rng: random.Random,
          trained_only: bool = False) -> tuple[int, int]:
    """Write ``count`` logs of ``low``..``high`` MB under ``where`` (16 subfolders); returns (logs, bytes).
    ``trained_only``: only the fixtures with a finished epoch (the others cannot grow: a job that failed
    at start-up writes a few KB)."""
    where.mkdir(parents=True)
    tpl = [t for t in templates() if not trained_only or inflate(t[1], 2 * len(t[1])) != t[1]]
    total = 0
    for i in range(count):
        name, raw, err = tpl[i % len(tpl)]
        data = inflate(raw, int(rng.uniform(low, high) * 1e6))
        point = where / f"point{i % 16:02d}"
        point.mkdir(exist_ok=True)
        (point / f"{name}-{i:05d}.out").write_bytes(data)
        if err is not None:
            (point / f"{name}-{i:05d}.err").write_bytes(err)
        total += len(data)
    return count, total


# Python's default: bytecode cached in __pycache__ (a session with PYTHONDONTWRITEBYTECODE=1 would recompile
# every module at every start, ~40 ms of CPU that users do not pay).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(ROOT)}
CPU: dict[tuple[str, ...], float] = {}  # best CPU time (user + system) of each command, beside its wall time


def timed(argv: list[str], repeat: int, ok_codes: tuple[int, ...], out_file: Path) -> tuple[float, str]:
    """Best wall time of ``repeat`` runs (and, in CPU, the best CPU time: steadier on a loaded machine).

    The command's stdout goes to ``out_file`` (a regular file, as a user's redirect would), never to
    /dev/null (grep would stop at each file's first match) nor a pipe read by this process."""
    best, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        with open(out_file, "w") as out:
            r = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=ENV)
        dt = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode not in ok_codes:
            raise SystemExit(f"{argv[:3]} failed ({r.returncode}): {r.stderr[-500:]}")
        best = min(best, dt)
        cpu = min(cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    CPU[tuple(argv)] = cpu
    return best, out_file.read_text()


def measure(label: str, corpus: Path, logs: int, size: int, repeat: int, truth: dict | None = None) -> float:
    outs = sorted(str(q) for q in corpus.rglob("*.out"))
    for q in outs:  # warm the page cache
        Path(q).read_bytes()
    grep = ["grep", "-rc", "--include=*.out", "Epoch finished", str(corpus)]
    py = [sys.executable, "-m", "logparse", str(corpus)]
    empty = corpus.parent / "empty"
    empty.mkdir(exist_ok=True)
    (empty / "empty.out").write_bytes(b"")  # one empty log: start-up and the CLI's whole path, no bytes to read
    subprocess.run([sys.executable, "-m", "logparse", str(empty)], env=ENV, capture_output=True)  # writes the .pyc
    results = corpus.parent / "results"
    results.mkdir(exist_ok=True)
    g, gout = timed(grep, repeat, (0, 1), results / f"{corpus.name}.grep.txt")
    f, fout = timed(py, repeat, (0, 3), results / f"{corpus.name}.logparse.csv")
    startup = [sys.executable, "-m", "logparse", str(empty)]
    start, _ = timed(startup, repeat, (0, 3), results / "startup.csv")
    counts = {line.rsplit(":", 1)[0]: int(line.rsplit(":", 1)[1]) for line in gout.splitlines()}
    rows = list(csv.DictReader(io.StringIO(fout)))
    assert len(rows) == logs, f"{len(rows)} rows for {logs} logs"
    for r in rows:
        grep_n = counts[r["path"]]
        if grep_n or "local-optimizer" not in r["path"]:
            assert int(r["epochs_completed"]) == grep_n, (r["path"], r["epochs_completed"], grep_n)
        if truth is not None:
            t = truth[r["path"]]
            assert r["status"] == t.status, (r["path"], r["status"], r["reason"], t)
            if t.status == "ok":
                assert (float(r["wall_clock_s"]), float(r["accuracy"])) == (t.wall_clock_s, t.accuracy), r["path"]
    statuses = {s: sum(r["status"] == s for r in rows) for s in ("ok", "failed", "incomplete")}
    mb = size / 1e6
    print(f"{label}: {logs} logs, {mb:,.0f} MB ({mb / logs:.2f} MB mean); statuses {statuses}; "
          f"epochs_completed == grep's count on every log" + ("; status and figures as written" if truth else ""))
    grep_label = 'grep -rc "Epoch finished" > file'
    gc, fc, sc = CPU[tuple(grep)], CPU[tuple(py)], CPU[tuple(startup)]
    print(f"  {'':34}{'wall':>10}{'MB/s':>10}{'CPU':>10}")
    print(f"  {grep_label:34}{g:8.3f} s{mb / g:10,.0f}{gc:8.3f} s")
    print(f"  {'python -m logparse':34}{f:8.3f} s{mb / f:10,.0f}{fc:8.3f} s   "
          f"{f / g:.3f} of grep's wall time, {fc / gc:.3f} of its CPU time")
    print(f"  {'  of which start-up (one empty log)':34}{start:8.3f} s{'':10}{sc:8.3f} s")
    per_log, per_grep = (fc - sc) / logs, gc / logs
    print(f"  CPU per log: logparse {per_log * 1e3:.2f} ms, grep {per_grep * 1e3:.2f} ms; "
          + (f"logparse's start-up is paid back from {math.ceil(sc / (per_grep - per_log))} such logs on"
             if per_grep > per_log else "logparse is slower per log"))
    return f / g


def interpreter_floor(base: Path, repeat: int) -> str:
    """What any ``python -m`` command costs before its own code: an empty module, and one importing
    only ``re`` (which a regex-based parser cannot avoid)."""
    (base / "sparkdl_bench_empty.py").write_text("")
    (base / "sparkdl_bench_re.py").write_text("import re\n")
    env_cwd = {"cwd": base}
    times = []
    for module in ("sparkdl_bench_empty", "sparkdl_bench_re"):
        subprocess.run([sys.executable, "-m", module], env=ENV, **env_cwd, capture_output=True)  # writes the .pyc
        best = float("inf")
        for _ in range(max(repeat, 5)):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", module], env=ENV, **env_cwd, capture_output=True)
            best = min(best, time.perf_counter() - t)
        times.append(best)
    return (f"interpreter floor: python -m of an empty module {times[0]:.3f} s, of a module importing only re "
            f"{times[1]:.3f} s")


def main(argv: list[str] | None = None) -> int:
    from sparkdl.options import renamed  # the package, not this folder's logparse.py

    p = CommandParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--logs", type=int, default=947, help="logs in the study corpus (0.2-3 MB each; default 947)")
    p.add_argument("--big", type=int, default=8, help="logs in the big corpus (8 MB each; default 8)")
    p.add_argument("--repeats", type=int, default=3, help="times each measurement is taken (default 3)")
    renamed(p, "--repeat", "--repeats")
    p.add_argument("--seed", type=int, default=25)
    p.add_argument("--keep", action="store_true", help="keep the corpora (their folder is printed)")
    a = p.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="logparse-bench-"))
    try:
        t = time.perf_counter()
        rng = random.Random(a.seed)
        sys.path.insert(0, str(ROOT))
        from bench.studylogs import GRID, make_study

        points = math.prod(len(v) for v in GRID.values())
        written = make_study(base / "study", points=points, replicates=math.ceil(a.logs / points), min_mb=0.2,
                             max_mb=3.0, seed=a.seed, limit=a.logs)
        truth = {str(x.path): x for x in written}
        study = (len(written), sum(x.path.stat().st_size for x in written))
        big = build(base / "big", a.big, 8.0, 8.0, rng, trained_only=True)
        print(f"corpora built in {time.perf_counter() - t:.1f} s under {base}; best of {a.repeats}, page cache warm, "
              f"interpreter start included")
        r1 = measure("study (0.2-3 MB, folders named by settings)", base / "study", *study, a.repeats, truth)
        r2 = measure("big (8 MB)", base / "big", *big, a.repeats)
        print(f"logparse/grep: study {r1:.3f}, big {r2:.3f} (goal <= 0.333, floor <= 1)")
        print(interpreter_floor(base, a.repeats))
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    from sparkdl.cli import run_cli  # SIGTERM and SIGHUP unwind: the temporary folders go

    sys.exit(run_cli(main))
