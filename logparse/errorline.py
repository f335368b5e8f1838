"""A failed program's own last words: the last error line of its output, for any program (not only BigDL).

A program that exits with an error says why in its last lines: Python's traceback ends with the
exception (``ModuleNotFoundError: No module named 'bigdl'``), the JVM prints ``Exception in thread
"main" java.lang...: why`` (and ``Caused by: ...`` lines), argparse and many tools print
``prog: error: why``. :func:`last_error_line` returns that line, the most telling first:

1. the exception line of the *last* Python traceback (a chained traceback's last one is the final
   error; a ``Py4JJavaError`` line is joined with the Java exception on the line after it);
2. else the last Java exception line (``Exception in thread ...``, ``Caused by: ...``, or a line that is
   a qualified exception class with its message);
3. else the last ``error:`` line.

Only the tail of each stream is read (:data:`TAIL_BYTES`): the end of the output is where a program
that failed says why. Each rule is tried on the driver's stderr, then its stdout, before the next rule: under
spark-submit a Python traceback may be in either, and the .err also holds the stack traces Spark logs as
warnings (a ``java.io.FileNotFoundException`` logged at WARN before Python raised its own error).
"""

from __future__ import annotations

import os
import re

from logparse.errors import LogParseError
from logparse.source import Source, err_path_for

#: Bytes read from the end of each stream.
TAIL_BYTES = 1 << 20
MAX_LINE = 300

TRACEBACK = b"Traceback (most recent call last):"
#: A Python exception line after a traceback: ``Name: message`` or a bare ``Name`` (dotted names allowed).
PY_EXCEPTION = re.compile(rb"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?::.*)?$")
#: A Java exception line: ``Exception in thread "x" a.b.CException: why``, ``Caused by: a.b.Error``, or the class alone.
JAVA_EXCEPTION = re.compile(
    rb"^(?:Exception in thread \"[^\"]*\" |Caused by: )?(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b(?::.*)?$")
#: A line that says ``error:`` the way command-line programs do (``prog: error: why``, ``error: why``).
ERROR_LINE = re.compile(rb"^(?:\S+: )?error: .+$", re.IGNORECASE)


def _text(line: bytes) -> str:
    text = " ".join(line.decode("utf-8", "replace").split())
    return text if len(text) <= MAX_LINE else text[:MAX_LINE - 3] + "..."


def _tail(path: str | os.PathLike[str] | None) -> bytes:
    if path is None:
        return b""
    try:
        with Source(path) as src:
            start = max(0, src.size - TAIL_BYTES)
            data = src.read(start, src.size - start)
    except (LogParseError, OSError):
        return b""
    if start > 0:  # the first line may be cut: drop it
        data = data[data.find(b"\n") + 1:]
    return data


def _after_traceback(lines: list[bytes], start: int) -> str | None:
    """The exception line that ends the traceback starting at ``lines[start]``."""
    for i in range(start + 1, len(lines)):
        line = lines[i].rstrip(b"\r")
        if not line or line[:1].isspace():
            continue  # a frame ("  File ...") or its code
        if not PY_EXCEPTION.match(line):
            return None
        if line.split(b":", 1)[0].endswith(b"Py4JJavaError") and i + 1 < len(lines) and lines[i + 1].startswith(b": "):
            return _text(line + b" " + lines[i + 1][2:])
        return _text(line)
    return None


def _python_error(lines: list[bytes]) -> str | None:
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].rstrip(b"\r") == TRACEBACK:
            found = _after_traceback(lines, i)
            if found:
                return found
    return None


def _matching(pattern: re.Pattern[bytes]):
    def last(lines: list[bytes]) -> str | None:
        for line in reversed(lines):
            line = line.rstrip(b"\r")
            if pattern.match(line):
                return _text(line.removeprefix(b"Caused by: "))
        return None
    return last


#: The rules of the module docstring, most telling first.
RULES = (_python_error, _matching(JAVA_EXCEPTION), _matching(ERROR_LINE))


def error_line_of(*texts: bytes) -> str | None:
    """The last error line of the streams' texts, else None: each rule in turn over every stream (a Python
    traceback in either stream wins over a Java exception a warning logged in the other)."""
    streams = [t.split(b"\n") for t in texts]
    for rule in RULES:
        for lines in streams:
            found = rule(lines)
            if found:
                return found
    return None


def last_error_line(out: str | os.PathLike[str]) -> str | None:
    """The program's last error line in its .err (the file beside ``out``) and its .out; None when neither has one."""
    return error_line_of(_tail(err_path_for(out)), _tail(out))
