"""A real Spark standalone cluster on one machine: a master and N workers on loopback.

    sparkdl cluster start --workers 2 --cores 2 --memory 2g
    sparkdl cluster status
    sparkdl cluster scale --workers 1
    sparkdl cluster stop
    sparkdl cluster start --yarn --nodes 2 --cores 2 --memory 2g   # a real YARN + HDFS (cluster/yarn/local.py)

The parser, ``main`` and what the command prints; the cluster, its state and its crash safety are
:class:`cluster.local.LocalCluster`'s.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from cluster import runtime as runtimes
from cluster.errors import ClusterError
from cluster.local import LocalCluster, parse_memory_mb
from cluster.processes import available_memory_mb
from cluster.yarn.local import LocalYarn
from sparkdl.cli import run_cli
from sparkdl.options import (DEFAULT_MASTER_PORT, DEFAULT_STATE_DIR, DEFAULT_WEBUI_PORT, PORT, CommandParser,
                             add_format, renamed)


def build_parser() -> argparse.ArgumentParser:
    common = CommandParser(add_help=False)
    common.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                        help="pids, logs and work dirs (default .cluster)")
    p = CommandParser(prog="sparkdl cluster", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", parents=[common], help="start a master and N workers (idempotent)")
    start.add_argument("--workers", type=int, default=2, help="workers to start (default 2)")
    start.add_argument("--yarn", action="store_true",
                       help="start a YARN ResourceManager (CapacityScheduler) with --nodes NodeManagers and an HDFS "
                            "instead, under STATE_DIR/yarn; prints the HADOOP_CONF_DIR to export")
    start.add_argument("--nodes", type=int, default=2, help="with --yarn: NodeManagers to start (default 2)")
    start.add_argument("--cores", type=int, default=2, help="cores each worker offers (default 2)")
    start.add_argument("--memory", default="2g", help="memory each worker offers, e.g. 2g or 700m (default 2g)")
    start.add_argument("--host", default="127.0.0.1", help="the address the master and workers bind (default 127.0.0.1)")
    start.add_argument("--port", type=PORT, default=DEFAULT_MASTER_PORT,
                       help=f"the master's port (default {DEFAULT_MASTER_PORT})")
    start.add_argument("--webui-port", type=PORT, default=DEFAULT_WEBUI_PORT,
                       help=f"the master's web UI port (default {DEFAULT_WEBUI_PORT})")
    start.add_argument("--wait", dest="timeout", type=float, metavar="SECONDS", default=120.0,
                       help="seconds to wait for the workers to register (default 120)")
    renamed(start, "--timeout", "--wait")
    start.add_argument("--runtime", default=runtimes.DEFAULT,
                       help=f"whose Spark the daemons run: a runtime's name or TOML (default {runtimes.DEFAULT}; "
                            "prepared first if needed)")
    scale = sub.add_parser("scale", parents=[common], help="change the number of workers")
    scale.add_argument("--workers", type=int, required=True, help="the number of workers to run")
    scale.add_argument("--cores", type=int, help="cores each new worker offers (default: as the running ones)")
    scale.add_argument("--memory", help="memory each new worker offers (default: as the running ones)")
    scale.add_argument("--wait", dest="timeout", type=float, metavar="SECONDS", default=120.0,
                       help="seconds to wait for the workers to register (default 120)")
    renamed(scale, "--timeout", "--wait")
    status = sub.add_parser("status", parents=[common], help="what runs, from the master's JSON")
    add_format(status, ("text", "json"))
    sub.add_parser("stop", parents=[common], help="stop every daemon of the state dir (recorded or stray), and remove "
                   "the driver scratch (spark-tmp) that killed runs left in the campaigns that used it")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Exit 0; 3 when ``status`` finds no cluster; ClusterError 4 (through run_cli); signals 130/143/129."""
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    yarn = LocalYarn(args.state_dir / "yarn", progress=say)
    if args.command == "start" and args.yarn:
        st = yarn.start(args.nodes, args.cores, parse_memory_mb(args.memory), args.timeout,
                        available_mb=available_memory_mb())
        print(st.describe())
    elif args.command == "start":
        rt = runtimes.resolve(args.runtime)
        env = runtimes.spark_env(rt, runtimes.prepare(rt, progress=say).path, local_ip=args.host)
        cluster = LocalCluster(args.state_dir, args.host, args.port, args.webui_port, env=env, progress=say)
        running = cluster.status()
        if running.running and running.runtime not in (None, rt.name):
            raise ClusterError(f"the cluster under {args.state_dir} runs runtime {running.runtime}: stop it first "
                               f"(sparkdl cluster stop) to start it on {rt.name}")
        print(cluster.start(args.workers, args.cores, args.memory, args.timeout).describe())
    elif args.command == "scale":
        cluster = LocalCluster(args.state_dir, progress=say)
        print(cluster.scale(args.workers, args.cores, args.memory, args.timeout).describe())
    elif args.command == "status":
        st = LocalCluster(args.state_dir, progress=say).status()
        ys = yarn.status()
        if args.format == "json":
            print(json.dumps({**asdict(st), "yarn": ys.to_dict()}, indent=2, default=str))
        else:
            print(st.describe() if st.running or not ys.running else ys.describe())
            if st.running and ys.running:
                print(ys.describe())
        return 0 if st.running or ys.running else 3
    else:
        cluster = LocalCluster(args.state_dir, progress=say)
        stopped = yarn.stop() + cluster.stop()
        swept = cluster.sweep_campaigns()
        if not stopped and not swept:
            print("nothing to stop")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
