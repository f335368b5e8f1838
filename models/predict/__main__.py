"""Entry point for ``sparkdl predict``."""

import sys

from models.predict.cli import main
from sparkdl.cli import run_cli

sys.exit(run_cli(main))
