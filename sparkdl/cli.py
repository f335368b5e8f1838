"""One shape for every command: errors, signals and the shared cluster options.

Every ``__main__`` is ``sys.exit(run_cli(main))`` where ``main(argv) -> int`` does the work and
raises on failure. :func:`run_cli` is the only place that turns exceptions into exit codes and
one-line messages (codes in :mod:`sparkdl.errors`):

* a :class:`~sparkdl.errors.ToolError` prints ``error: <message>`` and exits with its ``exit_code``;
* Ctrl-C, SIGTERM and SIGHUP raise :class:`Interrupted` (a ``KeyboardInterrupt``) in the main
  thread, so every ``finally`` runs: the job's process group ends and the cluster the command
  started stops. Then one line (with the hint the command registered by :func:`on_interrupt`, e.g.
  how to resume) and exit 130, 143 or 129. Further signals during that clean-up are ignored;
* any other exception is a bug: one line naming the exception and a file holding the traceback,
  exit 1. No command prints a traceback.

Library code never calls ``sys.exit`` and never installs signal handlers: only this module does,
and only inside :func:`run_cli`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Callable, Sequence

from sparkdl.errors import EXIT_INTERNAL, EXIT_SIGINT, ToolError

Main = Callable[[Sequence[str] | None], int]

DEFAULT_EXECUTOR_MEMORY = "700m"
DEFAULT_DRIVER_MEMORY = "2g"
DEFAULT_TIMEOUT_S = 3600.0
DEFAULT_RETRIES = 1
DEFAULT_STATE_DIR = Path(".cluster")
DEFAULT_MASTER_PORT = 7077
DEFAULT_WEBUI_PORT = 8080


class Interrupted(KeyboardInterrupt):
    """A stop asked by a signal (SIGINT, SIGTERM or SIGHUP); ``exit_code`` is 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


_hint: list[str] = []


def on_interrupt(hint: str) -> None:
    """Register the line printed after a stop by signal, e.g. ``finished runs are kept in X; --resume``."""
    _hint[:] = [hint]


class _Signals:
    """SIGTERM and SIGHUP raise :class:`Interrupted` once; later signals (Ctrl-C too) wait for the clean-up."""

    HANDLED = (signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.previous: dict[int, object] = {}
        self.fired = False

    def _handle(self, signum: int, _frame: object) -> None:
        if self.fired:
            return
        self.fired = True
        for s in (*self.HANDLED, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        raise Interrupted(signum)

    def __enter__(self) -> "_Signals":
        for s in self.HANDLED:
            self.previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self.previous.items():
            signal.signal(s, handler)  # type: ignore[arg-type]
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _save_traceback() -> str:
    import tempfile  # only on a crash: tempfile (shutil, bz2, lzma) costs every command's start-up
    import traceback

    fd, path = tempfile.mkstemp(prefix="sparkdl-crash-", suffix=".txt")
    with os.fdopen(fd, "w") as f:
        traceback.print_exc(file=f)
    return path


def run_cli(main: Main, argv: Sequence[str] | None = None) -> int:
    """Run ``main(argv)`` and return the process's exit code (see the module docstring)."""
    _hint.clear()
    with _Signals() as signals:
        try:
            return main(argv)
        except ToolError as e:
            print(f"error: {e}", file=sys.stderr)
            return e.exit_code
        except KeyboardInterrupt as e:
            signals.fired = True
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            code = e.exit_code if isinstance(e, Interrupted) else EXIT_SIGINT
            name = e.args[0] if isinstance(e, Interrupted) else "SIGINT"
            print(f"interrupted by {name}" + (f": {_hint[0]}" if _hint else ""), file=sys.stderr)
            return code
        except BrokenPipeError:
            # the reader went away (e.g. `| head`): say nothing more
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 128 + signal.SIGPIPE
        except SystemExit:
            raise  # argparse's usage errors (exit 2) and --help (exit 0)
        except Exception as e:  # noqa: BLE001 - the one place that turns a bug into one line
            path = _save_traceback()
            print(f"internal error: {type(e).__name__}: {e} (a bug; the traceback is in {path})", file=sys.stderr)
            return EXIT_INTERNAL


def cluster_options() -> argparse.ArgumentParser:
    """The options of every command that runs jobs: where (local / master / inventory) and with what.

    Use as ``argparse.ArgumentParser(parents=[cluster_options()])``; one set of defaults for all.
    """
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("cluster")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true",
                       help="use (and rescale) the local loopback cluster under --state-dir (default)")
    where.add_argument("--master", help="submit to this existing standalone master, e.g. spark://host:7077")
    where.add_argument("--cluster", type=Path, metavar="INVENTORY",
                       help="provision and drive the hosts of this inventory (TOML) over SSH")
    g.add_argument("--master-webui", help="the --master's web UI (default http://HOST:8080)")
    g.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                   help=f"local cluster state (default {DEFAULT_STATE_DIR})")
    g.add_argument("--port", type=int, default=DEFAULT_MASTER_PORT,
                   help=f"master port of a local cluster this command starts (default {DEFAULT_MASTER_PORT})")
    g.add_argument("--webui-port", type=int, default=DEFAULT_WEBUI_PORT,
                   help=f"master web UI port of a local cluster this command starts (default {DEFAULT_WEBUI_PORT})")
    g.add_argument("--keep-cluster", action="store_true", help="leave a cluster this command started running")
    g.add_argument("--executor-memory", default=DEFAULT_EXECUTOR_MEMORY,
                   help=f"per executor (default {DEFAULT_EXECUTOR_MEMORY})")
    g.add_argument("--driver-memory", default=DEFAULT_DRIVER_MEMORY, help=f"(default {DEFAULT_DRIVER_MEMORY})")
    g.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help=f"seconds before a run is stopped (default {DEFAULT_TIMEOUT_S:.0f})")
    g.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                   help=f"extra attempts after an infrastructure failure (default {DEFAULT_RETRIES})")
    return p
