"""How long building an environment takes: uv (what the tool uses) against pip, for each runtime's lock and the tool's.

    .venv/bin/python bench/runtime.py [--only bigdl,spark4,tool] [--repeats 1]

For each environment, in one run: a new virtual environment, then its locked packages installed
with ``uv pip sync`` (what ``python -m harness.runtime prepare`` runs) and with ``pip install
--no-deps -r LOCK`` (what a user would otherwise run), into temporary folders. Both installers'
download caches are warmed by a first, untimed install of each lock, so the figures compare
installing, not the network. Prints seconds per installer, the ratio and the environment's size.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:1] = [str(ROOT)]

from cluster import runtime as runtimes  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402


def lock_of(name: str, work: Path) -> Path:
    if name == "tool":
        return ROOT / "constraints.txt"
    rt = runtimes.resolve(name)
    out = work / f"{name}.lock"
    out.write_text(rt.lock_text())
    return out


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent))
    if not found:
        raise SystemExit("error: uv is not in this environment: run `make venv`")
    return found


def links_of(name: str) -> list[str]:
    """--find-links for each folder of wheels the runtime names (the torch runtime's CPU build)."""
    return [] if name == "tool" else [a for f in runtimes.resolve(name).find_links for a in ("--find-links", f)]


def build(installer: str, lock: Path, target: Path, links: list[str]) -> float:
    """Seconds to create ``target`` and install ``lock`` into it with ``installer`` (uv or pip)."""
    shutil.rmtree(target, ignore_errors=True)
    started = time.monotonic()
    if installer == "uv":
        subprocess.run([uv(), "venv", "--quiet", "--python", sys.executable, str(target)], check=True)
        subprocess.run([uv(), "pip", "sync", "--quiet", "--python", str(target / "bin" / "python"), *links,
                        str(lock)], check=True)
    else:
        subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
        subprocess.run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                        "--disable-pip-version-check", *links, "-r", str(lock)], check=True, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default="bigdl,spark4,torch,tool", help="environments: runtime names and/or tool")
    p.add_argument("--repeats", type=int, default=1)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as tmp:
        work = Path(tmp)
        print(f"{'environment':<12}{'uv s':>8}{'pip s':>8}{'pip/uv':>8}{'size MB':>9}{'packages':>10}", flush=True)
        for name in args.only.split(","):
            lock = lock_of(name, work)
            count = sum(1 for line in lock.read_text().splitlines() if "==" in line)
            for installer in ("uv", "pip"):  # warm both download caches, untimed
                build(installer, lock, work / f"warm-{installer}", links_of(name))
                shutil.rmtree(work / f"warm-{installer}")
            times = {i: min(build(i, lock, work / f"{name}-{i}", links_of(name)) for _ in range(args.repeats))
                     for i in ("uv", "pip")}
            print(f"{name:<12}{times['uv']:8.1f}{times['pip']:8.1f}{times['pip'] / times['uv']:8.1f}"
                  f"{size_mb(work / f'{name}-uv'):9.0f}{count:10d}", flush=True)
            for installer in ("uv", "pip"):
                shutil.rmtree(work / f"{name}-{installer}")
    return 0


if __name__ == "__main__":
    from sparkdl.cli import run_cli  # SIGTERM and SIGHUP unwind: the temporary folders go

    sys.exit(run_cli(main))
