"""Entry point for ``sparkdl anova``."""

import sys

from models.anova.cli import main
from sparkdl.cli import run_cli

sys.exit(run_cli(main))
