"""Fabric tasks for a Spark standalone cluster on real hosts (see cluster/remote.py).

    fab provision --inventory inventory.toml --runtime bigdl,spark4
    fab start-master --runtime bigdl
    fab start-workers --count 2 --runtime bigdl
    fab scale --workers 1 --runtime bigdl
    fab status
    fab collect-logs --dest cluster-logs
    fab stop

The inventory defaults to $SPARKDL_INVENTORY, else ./inventory.toml. ``--runtime`` names a
built-in runtime or a runtime TOML (default spark4; ``python -m harness.runtime list``):
``provision`` prepares it on every host, the daemons run it (one runtime per cluster). Each
task prints one line per host; a failure names the host and the command and exits non-zero.
"""

from __future__ import annotations

import os
from pathlib import Path

from fabric import task
from invoke.exceptions import Exit

from cluster import runtime as runtimes
from cluster.errors import ClusterError, EnvironmentProblem
from cluster.group import GroupFailure, GroupResult
from cluster.inventory import InventoryError, load_inventory
from cluster.remote import RemoteCluster
from cluster.runtime import RuntimeFileError

INVENTORY_HELP = {"inventory": "inventory TOML (default $SPARKDL_INVENTORY or inventory.toml)"}
RUNTIME_HELP = {"runtime": f"the runtime the daemons run: a name or a runtime TOML (default {runtimes.DEFAULT})"}


def _cluster(inventory: str | None) -> RemoteCluster:
    path = inventory or os.environ.get("SPARKDL_INVENTORY") or "inventory.toml"
    try:
        return RemoteCluster(load_inventory(path), progress=lambda msg: print(msg, flush=True))
    except InventoryError as e:
        raise Exit(f"error: {e}", code=2) from None


def _report(call) -> None:
    try:
        result = call()
    except GroupFailure as e:
        print(e.result.describe())
        raise Exit(f"error: {e}", code=1) from None
    except ClusterError as e:  # a wrong runtime name or file is bad input (2), anything else the cluster (1)
        raise Exit(f"error: {e}", code=2 if isinstance(e, RuntimeFileError) else 1) from None
    if isinstance(result, GroupResult):
        print(result.describe())
        if not result.ok:
            raise Exit(f"error: {GroupFailure(result)}", code=1)
    else:
        print(result.describe())


def _with(inventory: str | None, op, runtime: str | None = None) -> None:
    cluster = _cluster(inventory)
    try:
        if runtime is not None:
            try:
                cluster.use(runtime)
            except EnvironmentProblem as e:
                raise Exit(f"error: {e}", code=2) from None
        _report(lambda: op(cluster))
    finally:
        cluster.close()


def _names(runtime: str) -> list[str]:
    return [n.strip() for n in runtime.split(",") if n.strip()]


@task(help={**INVENTORY_HELP, "runtime": f"runtimes to prepare on every host, comma-separated (default "
                                         f"{runtimes.DEFAULT})"})
def provision(c, inventory=None, runtime=runtimes.DEFAULT):
    """Install this project into a venv on every host, and prepare the runtimes under <base>/runtimes."""
    _with(inventory, lambda cl: cl.provision(runtimes=_names(runtime)))


@task(help={**INVENTORY_HELP, **RUNTIME_HELP})
def start_master(c, inventory=None, runtime=runtimes.DEFAULT):
    """Start the Spark master on the master host (idempotent; restarted when it runs another runtime)."""
    _with(inventory, lambda cl: cl.start_master(), runtime)


@task(help={**INVENTORY_HELP, **RUNTIME_HELP, "count": "start the first N workers of the inventory (default: all)"})
def start_workers(c, inventory=None, count=None, runtime=runtimes.DEFAULT):
    """Start workers (idempotent); each waits until the master lists it."""
    _with(inventory, lambda cl: cl.start_workers(None if count is None else int(count)), runtime)


@task(help={**INVENTORY_HELP, **RUNTIME_HELP,
            "workers": "exactly this many workers (the first N of the inventory) run afterwards"})
def scale(c, workers, inventory=None, runtime=runtimes.DEFAULT):
    """Make exactly the first N workers run and wait until the master agrees."""
    _with(inventory, lambda cl: cl.scale(int(workers)), runtime)


@task(help=INVENTORY_HELP)
def stop(c, inventory=None):
    """Stop every daemon this tool started, workers first."""
    _with(inventory, lambda cl: cl.stop())


@task(help=INVENTORY_HELP)
def status(c, inventory=None):
    """The master's view (from its JSON) and each host's own daemons."""
    _with(inventory, lambda cl: cl.status())


@task(help={**INVENTORY_HELP, "dest": "local folder for the logs (default cluster-logs)"})
def collect_logs(c, inventory=None, dest="cluster-logs"):
    """Copy daemon logs and executor stdout/stderr of every host into DEST/<host>/."""
    _with(inventory, lambda cl: cl.collect_logs(Path(dest)))


@task(help={"dest": "folder for the wheels (default wheelhouse)",
            "runtime": f"runtimes whose locked wheels to add, comma-separated (default {runtimes.DEFAULT})"})
def wheelhouse(c, dest="wheelhouse", runtime=runtimes.DEFAULT):
    """Download/build wheels of the pinned stack and the runtimes, for hosts that reach no package index."""
    from cluster.bundle import build_bundle, build_wheelhouse

    try:
        chosen = [runtimes.resolve(n) for n in _names(runtime)]
        path = build_wheelhouse(Path(dest), build_bundle(Path(".cluster") / "bundles"), chosen)
    except EnvironmentProblem as e:
        raise Exit(f"error: {e}", code=2) from None
    except ClusterError as e:
        raise Exit(f"error: {e}", code=1) from None
    print(f"{len(list(path.glob('*.whl')))} wheel(s) in {path}: set remote.wheelhouse = \"{path}\" in the inventory")
