"""Entry point for ``sparkdl queueing``."""

import sys

from models.queueing.cli import main
from sparkdl.cli import run_cli

sys.exit(run_cli(main))
