"""Export a campaign folder to MLflow: one experiment, one run per design run, the report as an artifact.

    sparkdl mlflow runs/NAME --tracking-uri http://127.0.0.1:5000
    sparkdl mlflow runs/NAME                 # the tracker of $MLFLOW_TRACKING_URI

Running it again adds nothing: it adds the runs MLflow does not have yet (a resumed campaign's),
replaces those whose record or files changed, and refreshes results.csv, the manifest, the
provenance and the report in the experiment's run named "campaign". What goes where:
:mod:`harness.mlflow_export`, the same code ``--mlflow`` runs after every stored run.
Exit 2 without MLflow installed (it says how to install it) or without a campaign in the folder,
4 when the tracker does not answer.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Sequence

from sparkdl.cli import run_cli
from sparkdl.errors import EXIT_OK
from sparkdl.options import CommandParser, TrackingOptionError, add_campaign, add_cost
from sparkdl.tracking import tracking_uri


def _artifact_mb(text: str) -> float:
    """A size in MB above 0 and at most a terabyte (``inf`` and ``nan`` are not sizes)."""
    from harness.mlflow_export import MAX_ARTIFACT_MB

    try:
        value = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_ARTIFACT_MB):
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: give a size in MB above 0 and at most {MAX_ARTIFACT_MB:.0f}")
    return value


_artifact_mb.__name__ = "size in MB"
ARTIFACT_MB = _artifact_mb


def build_parser() -> argparse.ArgumentParser:
    from harness.mlflow_export import DEFAULT_MAX_ARTIFACT_MB

    p = CommandParser(prog="sparkdl mlflow", description=__doc__.split("\n")[0])
    add_campaign(p, "campaign.sqlite, or an ingested results.csv", folder_only=True)
    p.add_argument("--tracking-uri", help="MLflow tracking URI, e.g. http://127.0.0.1:5000 (default $MLFLOW_TRACKING_URI)")
    p.add_argument("--experiment", help="experiment name (default: the campaign folder's name)")
    add_cost(p, "the runs' cost metric")
    p.add_argument("--max-artifact-mb", type=ARTIFACT_MB, default=DEFAULT_MAX_ARTIFACT_MB,
                   help=f"leave out files larger than this (default {DEFAULT_MAX_ARTIFACT_MB:g}; event logs of long runs)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from harness.mlflow_export import (MlflowExportError, MlflowExporter, TrackerUnreachableError, read_campaign,
                                       require_mlflow)
    from sparkdl.campaign import CampaignDir

    uri = args.tracking_uri if args.tracking_uri is not None else os.environ.get("MLFLOW_TRACKING_URI", "")
    if not uri.strip():
        raise TrackingOptionError("no tracking URI: pass --tracking-uri http://HOST:5000 or set MLFLOW_TRACKING_URI")
    uri = tracking_uri(uri)  # the form, before anything else (nothing is sent, no store is made)
    if not args.campaign.is_dir():
        raise MlflowExportError(f"{args.campaign}: no such campaign folder")
    require_mlflow()  # then: without MLflow, say how to install it
    folder = CampaignDir(args.campaign)
    records, meta = read_campaign(folder)
    exporter = MlflowExporter(uri, folder, experiment=args.experiment, cost=args.cost,
                              max_artifact_mb=args.max_artifact_mb)
    from mlflow.exceptions import MlflowException

    try:
        summary = exporter.sync(records, meta)
    except MlflowException as e:
        raise TrackerUnreachableError(f"MLflow at {exporter.uri} refused the export ({str(e).splitlines()[0][:300]}); "
                                      "what was exported stays, run this again to finish") from None
    print(summary.describe())
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
