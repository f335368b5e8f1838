"""One shape for every command: exit codes, one-line errors and signals.

Every ``__main__`` is ``sys.exit(run_cli(main))`` where ``main(argv) -> int`` does the work and
raises on failure. :func:`run_cli` is the only place that turns exceptions into exit codes and
one-line messages (codes in :mod:`sparkdl.errors`):

* a :class:`~sparkdl.errors.ToolError` prints ``error: <message>`` and exits with its ``exit_code``;
* Ctrl-C, SIGTERM and SIGHUP raise :class:`Interrupted` (a ``KeyboardInterrupt``) in the main
  thread, so every ``finally`` runs: the job's process group ends and the cluster the command
  started stops. Then one line (with the hint the command registered by :func:`on_interrupt`, e.g.
  how to resume) and exit 130, 143 or 129. Further signals during that clean-up are ignored;
* any other exception is a bug: one line naming the exception and a file holding the traceback,
  exit 1. No command prints a traceback; a job does, on its stderr, which the harness keeps.

The options shared by every command that runs jobs, and their defaults, are in
:mod:`sparkdl.options`. This module imports nothing heavy (no pathlib, typing or argparse): it is
part of every command's start-up, and ``sparkdl logparse`` is timed against grep.

Library code never calls ``sys.exit`` and never installs signal handlers: only this module does,
and only inside :func:`run_cli`.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence

from sparkdl.errors import EXIT_INTERNAL, EXIT_SIGINT, ToolError

Main = Callable[[Sequence[str] | None], int]


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


def run_cli(main: Main, argv: Sequence[str] | None = None, traceback_to_stderr: bool = False) -> int:
    """Run ``main(argv)`` and return the process's exit code (see the module docstring).

    ``traceback_to_stderr``: a bug's traceback goes to stderr, before its one line, instead of a file. For jobs:
    the harness keeps their stderr as the run's .err, while a file would stay in the temporary folder of the
    host the driver ran on (on a remote host, out of the user's reach).
    """
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
            if traceback_to_stderr:
                import traceback

                traceback.print_exc(file=sys.stderr)
                where = "its traceback is above"
            else:
                where = f"the traceback is in {_save_traceback()}"
            print(f"internal error: {type(e).__name__}: {e} (a bug; {where})", file=sys.stderr)
            return EXIT_INTERNAL
