import sys

from models.desirability.cli import main
from sparkdl.cli import run_cli

sys.exit(run_cli(main))
