"""Byte access to one log file: plain files by offset (head, tail) or mapped whole; .gz decompressed once.

A .gz cannot be read backwards, so it is decompressed into memory; a truncated or
corrupt stream keeps what was decompressed and says why in ``damage``.
"""

from __future__ import annotations

import mmap
import os
import zlib
from pathlib import Path

from logparse.errors import LogNotFoundError, LogReadError

class Source:
    """The bytes of one log, read lazily from disk or held in memory (.gz)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.damage = ""  # why the bytes may not be the whole log (a damaged .gz), else ""
        self._data: bytes | None = None
        self._file = None
        self._map: mmap.mmap | None = None
        try:
            if not path.is_file():
                raise LogNotFoundError(f"{path}: no such file; pass the .out of a job (or a directory of them)")
            if path.suffix == ".gz":
                with open(path, "rb") as f:
                    self._data, self.damage = _gunzip(f.read())
                self.size = len(self._data)
            else:
                self._file = open(path, "rb")
                self.size = os.fstat(self._file.fileno()).st_size
        except OSError as e:
            raise LogReadError(f"{path}: cannot read ({e.strerror or e}); check its permissions") from None

    def read(self, offset: int, length: int) -> bytes:
        """Bytes [offset, offset+length) clipped to the file."""
        offset = max(0, offset)
        if self._data is not None:
            return self._data[offset:offset + length]
        assert self._file is not None
        try:
            return os.pread(self._file.fileno(), length, offset)
        except OSError as e:
            raise LogReadError(f"{self.path}: read failed at byte {offset} ({e.strerror or e})") from None

    def view(self):
        """The whole log as one buffer (a read-only mmap for plain files), for a full scan."""
        if self._data is not None:
            return self._data
        if self.size == 0:
            return b""
        assert self._file is not None
        if self._map is None:
            try:
                self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # a file that cannot be mapped: read it
                return self.read(0, self.size)
        return self._map

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _gunzip(raw: bytes) -> tuple[bytes, str]:
    """All members of a gzip stream; on damage, what decompressed before it and the reason."""
    if not raw:
        return b"", "empty .gz file (0 bytes)"
    out: list[bytes] = []
    while raw:
        d = zlib.decompressobj(wbits=31)
        try:
            out.append(d.decompress(raw))
        except zlib.error as e:
            return b"".join(out), f"corrupt gzip data ({e})"
        if not d.eof:
            return b"".join(out), "gzip stream truncated"
        raw = d.unused_data.lstrip(b"\0")
    return b"".join(out), ""


def err_path_for(out: Path) -> Path | None:
    """The .err written beside a .out (``x.out`` -> ``x.err``; ``x.out.gz`` -> ``x.err.gz`` or ``x.err``)."""
    name = out.name
    stems = []
    if name.endswith(".out.gz"):
        stems = [name[:-7] + ".err.gz", name[:-7] + ".err"]
    elif name.endswith(".out"):
        stems = [name[:-4] + ".err", name[:-4] + ".err.gz"]
    for s in stems:
        candidate = out.with_name(s)
        if candidate.is_file():
            return candidate
    return None
