"""What every built-in job's command line shares: positive numbers checked by argparse, figures written whole.

The jobs run inside runtimes (their own Python environments); this module uses the standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Callable


def positive(kind: type, name: str) -> Callable[[str], object]:
    """An argparse ``type``: a ``kind`` (int or float) > 0, else ``NAME must be > 0, got '0'``."""
    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a {kind.__name__}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{name} must be > 0, got {text!r}")
        return value

    return convert


def write_json(path: Path, figures: dict[str, object]) -> None:
    """Write the figures atomically: a reader (the harness) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(figures, indent=1) + "\n")
    os.replace(tmp, path)
