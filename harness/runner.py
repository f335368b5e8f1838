"""The process boundary: run one command with its output going to two files.

The campaign loop receives a :class:`Runner`; tests of its logic pass a fake one, and the
real path is :class:`ProcessRunner`, tested with real spark-submit processes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Protocol


@dataclass(frozen=True)
class Completed:
    """How a command ended."""

    argv: tuple[str, ...]
    returncode: int
    elapsed_s: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


class Runner(Protocol):
    def run(self, argv: list[str], env: Mapping[str, str], out: Path, err: Path,
            timeout: float | None) -> Completed: ...


def _kill_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


class ProcessRunner:
    """Runs the command in its own session; on timeout or interrupt the whole group is ended."""

    def run(self, argv: list[str], env: Mapping[str, str], out: Path, err: Path,
            timeout: float | None) -> Completed:
        started = time.monotonic()
        with open(out, "wb") as fout, open(err, "wb") as ferr:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=fout, stderr=ferr,
                                    env=dict(env), start_new_session=True)
            try:
                code = proc.wait(timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                code, timed_out = proc.returncode if proc.returncode is not None else -9, True
            except BaseException:
                _kill_group(proc, grace=2.0)
                raise
        return Completed(tuple(argv), code, time.monotonic() - started, timed_out)
