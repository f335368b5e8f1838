import sys

from report.cli import main
from sparkdl.cli import run_cli

sys.exit(run_cli(main))
