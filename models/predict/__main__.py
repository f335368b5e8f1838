"""Entry point for ``python -m models.predict``."""

from models.predict.cli import main

raise SystemExit(main())
