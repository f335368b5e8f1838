"""A bench's work folder: a new temporary one removed when the bench ends, or the user's, kept.

A bench's campaigns, cluster state and logs take 0.5-4 GB. Left in /tmp by every run (and by every killed
one) they filled this machine's disk, which CI shares. Run the bench's ``main`` under ``sparkdl.cli.run_cli``
so that SIGTERM and SIGHUP unwind through the ``with`` block too (Python's default for SIGTERM ends the
process without running it).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def work_folder(prefix: str, keep: Path | None = None) -> Iterator[Path]:
    """``keep`` (created if needed, never removed), else a new folder under the system's temporary one, removed
    on the way out: a normal end, an error, or a stop by signal under run_cli."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
