"""The process boundary: run one command with its output going to two files.

The campaign loop receives a :class:`Runner`; tests of its logic pass a fake one, and the
real path is :class:`ProcessRunner`, tested with real spark-submit processes.
"""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol

from cluster.local import end_process_group

OnStart = Callable[[int], None]


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
            timeout: float | None, on_start: OnStart | None = None) -> Completed: ...


def _die_with_parent() -> None:
    """In the child: get SIGKILL if the harness dies (Linux PR_SET_PDEATHSIG), so no job outlives it."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # pragma: no cover - not Linux; resume cleans orphans up instead
        pass


class ProcessRunner:
    """Runs the command in its own process group; on timeout or interrupt the whole group is ended.

    ``on_start(pid)`` is called once the process exists, so the caller can record it
    (a resumed campaign ends the process group of a run that was in flight).
    """

    def run(self, argv: list[str], env: Mapping[str, str], out: Path, err: Path,
            timeout: float | None, on_start: OnStart | None = None) -> Completed:
        started = time.monotonic()
        with open(out, "wb") as fout, open(err, "wb") as ferr:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=fout, stderr=ferr,
                                    env=dict(env), start_new_session=True, preexec_fn=_die_with_parent)
            try:
                if on_start is not None:
                    on_start(proc.pid)
                code = proc.wait(timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                end_process_group(proc)
                code, timed_out = proc.returncode if proc.returncode is not None else -9, True
            except BaseException:
                end_process_group(proc, grace=2.0)
                raise
        return Completed(tuple(argv), code, time.monotonic() - started, timed_out)
