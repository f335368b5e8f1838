"""Entry point for ``sparkdl plan``."""

import sys

from models.power.cli import main
from sparkdl.cli import run_cli

sys.exit(run_cli(main))
