"""What a local cluster's master and workers cost to start, with the tool's daemon JVM options and without.

    .venv/bin/python bench/daemons.py [--repeats 3] [--workers 2] [--runtimes bigdl,spark4]

For each runtime, starts a real local standalone cluster (cluster.local: a master and N workers on
free loopback ports), waits until every worker is registered, lets it settle 3 s, reads the CPU time
each daemon JVM has used from /proc/PID/stat, and stops it. Two settings alternate, ``--repeats`` times:

* ``tool``: the tool's defaults (cluster.sparkenv.DAEMON_JAVA_OPTS: C1 only, serial GC);
* ``spark``: Spark's own JVM defaults, restored the way a user would, through their own
  SPARK_DAEMON_JAVA_OPTS (which comes after ours, so it wins): tiered compilation up to C2, G1.

Prints, per runtime and setting, the median start wall time and the daemons' CPU seconds. The CPU
figure is what a campaign's jobs do not get while a cluster starts (each campaign starts one, and a
runtime switch restarts it), on a 2-core machine about half a core for ten seconds.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path[:1] = [str(Path(__file__).resolve().parent.parent)]

from cluster.local import ClusterState, LocalCluster, free_port  # noqa: E402
from cluster.runtime import discover  # noqa: E402
from sparkdl.options import CommandParser, renamed  # noqa: E402
from cluster.sparkenv import DAEMON_JAVA_OPTS  # noqa: E402

SPARK_DEFAULTS = "-XX:TieredStopAtLevel=4 -XX:+UseG1GC"  # G1: the default collector of both JDKs here
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def one_start(runtime: str, workers: int, setting: str, root: Path) -> tuple[float, float]:
    """(start wall seconds, daemons' CPU seconds 3 s after the last worker registered)."""
    saved = os.environ.get("SPARK_DAEMON_JAVA_OPTS")
    if setting == "spark":
        os.environ["SPARK_DAEMON_JAVA_OPTS"] = SPARK_DEFAULTS
    else:
        os.environ.pop("SPARK_DAEMON_JAVA_OPTS", None)
    cluster = LocalCluster(Path(tempfile.mkdtemp(dir=root)), port=free_port(), webui_port=free_port(),
                           env=discover(runtime=runtime))
    try:
        t0 = time.monotonic()
        cluster.start(workers=workers, cores=1, memory="1g")
        wall = time.monotonic() - t0
        time.sleep(3)
        state = ClusterState.load(cluster.state_dir / "state.json")
        assert state is not None and state.master is not None
        pids = [state.master.pid, *(w.pid for w in state.workers)]
        return wall, sum(cpu_seconds(p) for p in pids)
    finally:
        cluster.stop()
        if saved is None:
            os.environ.pop("SPARK_DAEMON_JAVA_OPTS", None)
        else:
            os.environ["SPARK_DAEMON_JAVA_OPTS"] = saved


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3, help="times each measurement is taken (default 3)")
    renamed(p, "--repeat", "--repeats")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--runtimes", default="bigdl,spark4")
    args = p.parse_args(argv)
    print(f"{os.cpu_count()} cores; a master and {args.workers} worker(s); medians of {args.repeats}")
    print(f"{'runtime':8} {'daemon options':46} {'start s':>8} {'daemon CPU s':>13}")
    with tempfile.TemporaryDirectory(prefix="bench-daemons-") as tmp:
        for runtime in args.runtimes.split(","):
            seen: dict[str, list[tuple[float, float]]] = {"tool": [], "spark": []}
            for _ in range(args.repeats):
                for setting in seen:
                    seen[setting].append(one_start(runtime, args.workers, setting, Path(tmp)))
            for setting, runs in seen.items():
                label = "tool: " + " ".join(DAEMON_JAVA_OPTS) if setting == "tool" else "Spark's: " + SPARK_DEFAULTS
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                print(f"{runtime:8} {label:46} {wall:8.1f} {cpu:13.1f}")
    return 0


if __name__ == "__main__":
    from sparkdl.cli import run_cli  # SIGTERM and SIGHUP unwind: the temporary folders go

    raise SystemExit(run_cli(main))
