"""Entry point for ``python -m models.queueing``."""

import sys

from models.queueing.cli import main

sys.exit(main())
