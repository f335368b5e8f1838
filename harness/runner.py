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
from typing import Callable, Mapping, Protocol, Sequence

from cluster.local import end_process_group
from logparse.patterns import PRUNED

OnStart = Callable[[int], None]
#: Called every WATCH_INTERVAL_S with the .out path while a job runs: None to go on, or the reason to stop it
#: (an optimizer pruning the run). The runner then ends the job and appends the prune line logparse reads.
Watch = Callable[[Path], "str | None"]
#: Seconds between two calls of a watch. A call with no new epoch line reads a few bytes and returns. Every 1 s, a job
#: whose epochs took 0.15 s (torch's LeNet on 512 digits) printed all six between two calls, and so could not be
#: pruned; and a dominated run went on for up to a second after its epoch said so.
WATCH_INTERVAL_S = 0.25


@dataclass(frozen=True)
class Completed:
    """How a command ended."""

    argv: tuple[str, ...]
    returncode: int
    elapsed_s: float
    timed_out: bool = False
    stopped: str | None = None  # the watch's reason, when it stopped the job

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


def write_prune_line(out: Path, reason: str) -> None:
    """Append the line that makes logparse call the run ``pruned`` (one line: newlines in the reason become spaces)."""
    with open(out, "ab") as f:
        f.write(b"\n" + PRUNED + " ".join(reason.split()).encode() + b"\n")


class ProcessRunner:
    """Runs the command in its own process group; on timeout or interrupt the whole group is ended.

    ``on_start(pid)`` is called once the process exists, so the caller can record it
    (a resumed campaign ends the process group of a run that was in flight). ``watch``
    (settable between runs) is called every WATCH_INTERVAL_S with the .out path; when it
    returns a reason the job is ended and the prune line appended to its .out.
    """

    def __init__(self, watch: Watch | None = None, before_stop: Callable[[Sequence[str]], None] | None = None) -> None:
        """``before_stop(argv)``: called before the runner ends a job (timeout, interrupt, watch), while its driver
        still lives: a backend whose application outlives its driver (YARN) ends it first."""
        self.watch = watch
        self.before_stop = before_stop

    def _stopping(self, argv: Sequence[str]) -> None:
        if self.before_stop is not None:
            try:
                self.before_stop(argv)
            except Exception:  # noqa: BLE001 - the job is ended either way; the backend's cleanup runs again after
                pass

    def run(self, argv: list[str], env: Mapping[str, str], out: Path, err: Path,
            timeout: float | None, on_start: OnStart | None = None, cwd: Path | None = None) -> Completed:
        """``cwd``: the folder the job runs in (its job's ``workdir``; None: this process's)."""
        started, stopped = time.monotonic(), None
        with open(out, "wb") as fout, open(err, "wb") as ferr:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=fout, stderr=ferr, cwd=cwd,
                                    env=dict(env), start_new_session=True, preexec_fn=_die_with_parent)
            try:
                if on_start is not None:
                    on_start(proc.pid)
                code, stopped = self._wait(proc, out, timeout, started)
                timed_out = False
            except subprocess.TimeoutExpired:
                self._stopping(argv)
                end_process_group(proc)
                code, timed_out = proc.returncode if proc.returncode is not None else -9, True
            except BaseException:
                self._stopping(argv)
                end_process_group(proc, grace=2.0)
                raise
        if stopped is not None:
            write_prune_line(out, stopped)
        return Completed(tuple(argv), code, time.monotonic() - started, timed_out, stopped)

    def _wait(self, proc: subprocess.Popen, out: Path, timeout: float | None,
              started: float) -> tuple[int, str | None]:
        """The exit code, and the watch's reason when it stopped the job; TimeoutExpired past ``timeout``."""
        if self.watch is None:
            return proc.wait(timeout), None
        while True:
            left = None if timeout is None else timeout - (time.monotonic() - started)
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout)  # type: ignore[arg-type]
            try:
                return proc.wait(WATCH_INTERVAL_S if left is None else min(WATCH_INTERVAL_S, left)), None
            except subprocess.TimeoutExpired:
                pass
            reason = self.watch(out)
            if reason:
                self._stopping(proc.args)  # type: ignore[arg-type]
                end_process_group(proc, grace=2.0)
                return (proc.returncode if proc.returncode is not None else -9), reason
