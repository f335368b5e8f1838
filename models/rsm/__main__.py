import sys

from models.rsm.cli import main
from sparkdl.cli import run_cli

sys.exit(run_cli(main))
