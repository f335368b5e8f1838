"""The one reader of every file a user gives the tool: config files (TOML, JSON) and the bytes under tables.

Every reader goes through :func:`read_bytes`, which takes a regular file only (a FIFO, a device or a
folder is refused before a byte is read, so nothing hangs), refuses a path with a NUL byte, a
symlink loop or a name too long, and reads at most a size cap. :func:`read_text` decodes UTF-8
and names the line and column of a bad byte; :func:`read_toml` and :func:`read_json` parse and cap
the nesting depth (a RecursionError is an input error, never a crash). Every failure is one
input error (exit 2) that names the file and the fix, raised as the caller's own error class so
each stage keeps its exceptions.

Each kind of file is then checked against its declared schema (:func:`convert`), a
``msgspec.Struct`` in :mod:`sparkdl.schemas` holding its types, ranges, choices and limits in one
place: job descriptions (``JobDoc``, ``ParamTable``), search spaces (``SpaceTable``), campaign
manifests (``ManifestDoc``). Runtimes, inventories and factors files are read here too and keep
their table-by-table checks (each table's allowed keys are declared in their modules). Tables
(designs, results tables) go through :func:`read_table`, the one CSV reader.

Why msgspec (0.22.0) and not pydantic v2: both validate declared types with ranges and give the
location of a bad value, but msgspec is one small C extension with no dependencies that imports in a
few milliseconds (pydantic with pydantic-core costs every command's start-up about ten times more),
its ``convert`` is strict about types by default (``"5"`` is not an int, ``true`` is not a number), and
its errors are one line. It is imported lazily, in :func:`convert` only: ``sparkdl logparse`` never
loads it.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sparkdl.errors import ToolError

#: The largest config file read (a job description, a space, a runtime, an inventory, a manifest).
MAX_CONFIG_BYTES = 1 << 20
#: The deepest nesting of tables and arrays a config file may have (real ones have 3).
MAX_DEPTH = 16
#: The longest path accepted (Linux's PATH_MAX).
MAX_PATH_CHARS = 4096
#: The largest table read (a design, a results table).
MAX_TABLE_BYTES = 64 << 20

T = TypeVar("T")


class InputFileError(ToolError):
    """A file given to the tool cannot be read as its kind (exit 2)."""


ErrorClass = Callable[[str], Exception]


def _fail(error: ErrorClass, path: object, problem: str) -> Exception:
    return error(f"{path}: {problem}")


def check_path(path: str | os.PathLike[str], what: str, error: ErrorClass = InputFileError) -> Path:
    """``path`` as a Path, refused when it cannot name a file (a NUL byte, too long)."""
    text = os.fspath(path)
    if "\x00" in text:
        raise error(f"{what} {text[:80]!r}... holds a NUL byte: give a file name")
    if len(text) > MAX_PATH_CHARS:
        raise error(f"{what} {text[:40]!r}... is {len(text)} characters long: at most {MAX_PATH_CHARS}")
    if not text:
        raise error(f"{what}: an empty file name: give a file")
    return Path(text)


def read_bytes(path: str | os.PathLike[str], what: str, limit: int = MAX_CONFIG_BYTES,
               error: ErrorClass = InputFileError) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is one ``error`` naming the fix.

    The file is opened without blocking and checked on the open descriptor, so a FIFO never hangs
    and a file swapped for one between a check and the read is still refused.
    """
    path = check_path(path, what, error)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _fail(error, path, f"cannot read the {what}: no such file: check the path") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _fail(error, path, f"the {what} is a symbolic link loop: give a file") from None
        if e.errno == errno.ENAMETOOLONG:
            raise _fail(error, path, f"the {what}'s name is too long: give a shorter path") from None
        raise _fail(error, path, f"cannot read the {what} ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise _fail(error, path, f"the {what} is not a regular file (a folder): give a file")
        if not stat.S_ISREG(st.st_mode):
            raise _fail(error, path, f"the {what} is not a regular file (a FIFO, socket or device): give a file")
        if st.st_size > limit:
            raise _fail(error, path, f"the {what} has {st.st_size} bytes, more than the {limit} allowed: "
                                     "is this the right file?")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise _fail(error, path, f"cannot read the {what} ({e.strerror})") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise _fail(error, path, f"the {what} has more than the {limit} bytes allowed: is this the right file?")
    return data


def decode(data: bytes, path: object, what: str, error: ErrorClass = InputFileError) -> str:
    """``data`` as UTF-8 (a leading byte-order mark dropped); a bad byte is named by its line and column."""
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as e:
        start = e.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        hint = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise _fail(error, path, f"the {what} is not UTF-8 text{hint}: byte 0x{data[start]:02x} at line {line}, "
                                 f"column {column}: save it as UTF-8") from None


def read_text(path: str | os.PathLike[str], what: str, limit: int = MAX_CONFIG_BYTES,
              error: ErrorClass = InputFileError) -> str:
    """:func:`read_bytes` then :func:`decode`."""
    return decode(read_bytes(path, what, limit, error), path, what, error)


def depth(doc: object) -> int:
    """The nesting depth of parsed tables and arrays (a scalar is 0), without recursion."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        stack.extend((child, level + 1) for child in children)
    return deepest


def _check_depth(doc: object, path: object, what: str, error: ErrorClass) -> None:
    if depth(doc) > MAX_DEPTH:
        raise _fail(error, path, f"the {what} nests tables or arrays more than {MAX_DEPTH} deep: "
                                 "is this the right file?")


def parse_toml(text: str, path: object, what: str, error: ErrorClass = InputFileError) -> dict[str, Any]:
    """A TOML document, its depth capped; bad TOML is one ``error`` with tomllib's line and column."""
    import tomllib

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _fail(error, path, f"the {what} is not valid TOML: {e}: fix that line") from None
    except RecursionError:
        raise _fail(error, path, f"the {what} nests arrays or tables too deep (at most {MAX_DEPTH}): "
                                 "is this the right file?") from None
    _check_depth(doc, path, what, error)
    return doc


def read_toml(path: str | os.PathLike[str], what: str, limit: int = MAX_CONFIG_BYTES,
              error: ErrorClass = InputFileError) -> dict[str, Any]:
    """Read and parse a TOML file (see the module docstring)."""
    return parse_toml(read_text(path, what, limit, error), path, what, error)


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(text: str, path: object, what: str, error: ErrorClass = InputFileError) -> Any:
    """A JSON document (NaN and Infinity refused), its depth capped; every failure one ``error``."""
    try:
        doc = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise _fail(error, path, f"the {what} nests arrays or objects too deep (at most {MAX_DEPTH})") from None
    except ValueError as e:
        raise _fail(error, path, f"the {what} is not valid JSON ({e})") from None
    _check_depth(doc, path, what, error)
    return doc


def read_json(path: str | os.PathLike[str], what: str, limit: int = MAX_CONFIG_BYTES,
              error: ErrorClass = InputFileError) -> Any:
    """Read and parse a JSON file (see the module docstring)."""
    return parse_json(read_text(path, what, limit, error), path, what, error)


def _where(location: str) -> str:
    """msgspec's ``$.job.args[0]`` as ``job.args[0]``."""
    return location.removeprefix("$").removeprefix(".") or "the top level"


def convert(doc: object, schema: type[T], path: object, what: str, error: ErrorClass = InputFileError,
            where: str = "") -> T:
    """``doc`` checked against ``schema`` (a ``msgspec.Struct``): types, ranges, choices, unknown keys.

    A mismatch is one ``error`` naming the file, the key (``where`` prefixes msgspec's location)
    and what was expected.
    """
    import msgspec

    try:
        return msgspec.convert(doc, schema, strict=True)
    except msgspec.ValidationError as e:
        message, _, location = str(e).partition(" - at `")
        location = location.rstrip("`")
        place = ".".join(p for p in (where, _where(location) if location else "") if p and p != "the top level")
        raise _fail(error, path, f"{place + ': ' if place else ''}{message}: fix it in the {what}") from None


def finite(value: float, name: str) -> float:
    """``value`` when it is a finite number, else ValueError naming ``name`` (for schema checks)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    return value


@dataclass(frozen=True)
class Table:
    """A CSV file read exactly: its text, its header and its data rows (``line`` is where each row starts)."""

    text: str
    header: tuple[str, ...]
    rows: tuple[tuple[int, tuple[str, ...]], ...]


def read_table(path: str | os.PathLike[str], what: str, error: ErrorClass = InputFileError,
               limit: int = MAX_TABLE_BYTES, max_field: int = 1 << 20, max_columns: int = 10_000,
               max_rows: int = 1_000_000, same_width: bool = False) -> Table:
    """The one table reader: a regular UTF-8 file parsed by the csv module as it is (strict quoting).

    Refused, each as one ``error``: what :func:`read_text` refuses, malformed CSV (an unclosed quote),
    a field over ``max_field`` characters, more than ``max_columns`` columns or ``max_rows`` rows, no
    header, a header column without a name or named twice (never renamed in silence). Blank lines
    are skipped. Rows are as written; ``same_width`` refuses a row with more or fewer fields than the
    header (else their length is the caller's to check, e.g. a design's row by row).
    """
    text = read_text(path, what, limit, error)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, tuple[str, ...]]] = []
    header: tuple[str, ...] | None = None
    try:
        while True:
            line = reader.line_num + 1
            try:
                record = next(reader)
            except StopIteration:
                break
            if not record or (len(record) == 1 and not record[0].strip(" \t")
                              and (header is None or len(header) > 1)):
                continue  # a blank line (in a one-column table, a field left empty is a value)
            long = [c for c in record if len(c) > max_field]
            if long:
                raise _fail(error, path, f"line {line}: a field of {len(long[0])} characters: at most {max_field} "
                                         "are allowed (is a quote left open?)")
            if header is None:
                header = tuple(c.strip(" \t") for c in record)
                continue
            if len(rows) >= max_rows:
                raise _fail(error, path, f"more than {max_rows} rows: split the {what}")
            if same_width and len(record) != len(header):
                raise _fail(error, path, f"line {line}: {len(record)} fields for {len(header)} columns: check the "
                                         "commas and line breaks (quote a value holding one)")
            rows.append((line, tuple(record)))
    except csv.Error as e:
        message = str(e)
        if "field larger than field limit" in message:
            message = f"a field longer than {csv.field_size_limit()} characters (is a quote left open?)"
        elif "unexpected end of data" in message or "EOF" in message:
            message = "a quote is left open: close it"
        raise _fail(error, path, f"line {reader.line_num}: not valid CSV: {message}") from None
    if header is None:
        raise _fail(error, path, f"the {what} is empty: write a header line naming the columns, then one row a line")
    if len(header) > max_columns:
        raise _fail(error, path, f"{len(header)} columns: at most {max_columns} are allowed")
    empty = [i + 1 for i, name in enumerate(header) if not name]
    if empty:
        raise _fail(error, path, f"column {empty[0]} of the header has no name: name every column "
                                 "(or remove a trailing comma)")
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise _fail(error, path, f"column(s) {', '.join(twice)} appear more than once in the header: keep one of each")
    return Table(text, header, tuple(rows))
