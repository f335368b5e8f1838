"""``python -m harness.report``: the same command as ``python -m report`` (kept for scripts)."""

import sys

from report.cli import main
from sparkdl.cli import run_cli

sys.exit(run_cli(main))
