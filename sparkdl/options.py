"""The options every command that runs jobs shares (where: local, master or inventory; with what
resources and limits), with one set of defaults for all of them."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from collections.abc import Mapping

from sparkdl.errors import ToolError

DEFAULT_EXECUTOR_MEMORY = "700m"
DEFAULT_DRIVER_MEMORY = "2g"
DEFAULT_TIMEOUT_S = 3600.0
DEFAULT_RETRIES = 1
DEFAULT_STATE_DIR = Path(".cluster")
DEFAULT_MASTER_PORT = 7077
DEFAULT_WEBUI_PORT = 8080


def cluster_options() -> argparse.ArgumentParser:
    """The options of every command that runs jobs: where (local / master / inventory) and with what.

    Use as ``argparse.ArgumentParser(parents=[cluster_options()])``; one set of defaults for all.
    """
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("cluster")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true",
                       help="use (and rescale) the local loopback cluster under --state-dir (default)")
    where.add_argument("--master", help="submit to this existing standalone master, e.g. spark://host:7077")
    where.add_argument("--cluster", type=Path, metavar="INVENTORY",
                       help="provision and drive the hosts of this inventory (TOML) over SSH")
    g.add_argument("--master-webui", help="the --master's web UI (default http://HOST:8080)")
    g.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                   help=f"local cluster state (default {DEFAULT_STATE_DIR})")
    g.add_argument("--port", type=int, default=DEFAULT_MASTER_PORT,
                   help=f"master port of a local cluster this command starts (default {DEFAULT_MASTER_PORT})")
    g.add_argument("--webui-port", type=int, default=DEFAULT_WEBUI_PORT,
                   help=f"master web UI port of a local cluster this command starts (default {DEFAULT_WEBUI_PORT})")
    g.add_argument("--keep-cluster", action="store_true", help="leave a cluster this command started running")
    g.add_argument("--plain-jvm", action="store_true",
                   help="local cluster: run drivers and executors with Java's defaults (by default they share a "
                        "class-data archive of Spark's and BigDL's classes and BigDL's MKL unpacked once, use the "
                        "parallel collector, and compile with C1 only)")
    g.add_argument("--executor-memory", default=DEFAULT_EXECUTOR_MEMORY,
                   help=f"per executor (default {DEFAULT_EXECUTOR_MEMORY})")
    g.add_argument("--driver-memory", default=DEFAULT_DRIVER_MEMORY, help=f"(default {DEFAULT_DRIVER_MEMORY})")
    g.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help=f"seconds before a run is stopped (default {DEFAULT_TIMEOUT_S:.0f})")
    g.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                   help=f"extra attempts after an infrastructure failure (default {DEFAULT_RETRIES})")
    t = p.add_argument_group("tracking")
    t.add_argument("--mlflow", nargs="?", const="", metavar="URI",
                   help="export every stored run to MLflow at this tracking URI as the campaign goes (alone: "
                        "$MLFLOW_TRACKING_URI); needs the mlflow extra; a tracker that is down only delays the export")
    return p


class TrackingOptionError(ToolError):
    """--mlflow was given without a URI and MLFLOW_TRACKING_URI is not set."""


def mlflow_uri(value: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The tracking URI of ``--mlflow``: its value, else (``--mlflow`` alone) $MLFLOW_TRACKING_URI; None without it."""
    if value is None:
        return None
    uri = value.strip() or environ.get("MLFLOW_TRACKING_URI", "").strip()
    if not uri:
        raise TrackingOptionError("--mlflow needs a tracking URI: --mlflow http://HOST:5000, or set MLFLOW_TRACKING_URI")
    return uri


class RenamedOptionError(ToolError):
    """An option of an older version: the message names its new spelling."""


def renamed(parser: argparse.ArgumentParser, old: str, new: str, nargs: str | None = None) -> None:
    """Refuse ``old``, a former name of ``new`` (one name for one thing in every command), with the fix.

    The refusal is one line and exit 2 (:func:`sparkdl.cli.run_cli`), e.g. ``--model lenet is now --job lenet``.
    """

    class Refuse(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                      option_string: str | None = None) -> None:
            given = " ".join(values) if isinstance(values, list) else "" if values is None else str(values)
            was, now = f"{old} {given}".strip(), f"{new} {given}".strip()
            raise RenamedOptionError(f"{was} is now {now}: write {now} (the rest of the command unchanged)")

    parser.add_argument(old, action=Refuse, nargs=nargs, help=argparse.SUPPRESS)
