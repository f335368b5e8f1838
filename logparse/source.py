"""Byte access to one log file: plain files by offset (head, tail, blocks); .gz decompressed as a stream.

No memory map (a mapped file closed under a reader crashes on logs over 8 MiB): plain files
are read with ``pread``; a whole-file read is capped at ``MAX_READ`` bytes. A .gz cannot be read
backwards, so it is decompressed as a stream into memory, stopping at ``MAX_GUNZIP`` bytes (a
small file that expands without end is refused, not held); a truncated or corrupt stream keeps
what was decompressed and says why in ``damage``.
"""

from __future__ import annotations

import os
import stat

from logparse.errors import LogNotFoundError, LogReadError, LogTooLargeError

MAX_READ = 2 << 30       # bytes of a plain log read whole (a full scan, or a tail that found no training line)
MAX_GUNZIP = 1 << 30     # bytes a .gz may expand to
GUNZIP_CHUNK = 4 << 20   # decompressed bytes produced per step (bounds the memory of one step)


class Source:
    """The bytes of one log, read lazily from disk or held in memory (.gz)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path = os.fspath(path)
        self.damage = ""  # why the bytes may not be the whole log (a damaged .gz), else ""
        self._data: bytes | None = None
        self._fd: int | None = None
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise LogNotFoundError(f"{path}: no such file; pass the .out of a job (or a directory of them)") from None
        except OSError as e:
            raise LogReadError(f"{path}: cannot open ({e.strerror or e}); check its permissions") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a FIFO, socket or device)"
                raise LogReadError(f"{path}: {kind}; pass the .out of a job (or a directory of them)")
            self.size = st.st_size
            if path.endswith(".gz"):
                self._data, self.damage = _gunzip(fd, path)
                self.size = len(self._data)
                os.close(fd)
            else:
                self._fd = fd
                fd = -1
        except BaseException:
            if fd >= 0 and self._fd is None:
                os.close(fd)
            raise

    def read(self, offset: int, length: int) -> bytes:
        """Bytes [offset, offset+length) clipped to the file."""
        offset = max(0, offset)
        length = max(0, min(length, self.size - offset))
        if self._data is not None:
            return self._data[offset:offset + length]
        if length > MAX_READ:
            raise LogTooLargeError(f"{self.path}: {self.size:,} bytes with no answer in its last "
                                   f"{MAX_READ:,}; cut the log (e.g. `tail -c 100M`) and pass that")
        assert self._fd is not None
        chunks, pos, end = [], offset, offset + length
        try:
            while pos < end:
                b = os.pread(self._fd, min(end - pos, 1 << 30), pos)
                if not b:
                    break  # the file shrank under us: what was there is what we read
                chunks.append(b)
                pos += len(b)
        except OSError as e:
            raise LogReadError(f"{self.path}: read failed at byte {pos} ({e.strerror or e})") from None
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def view(self) -> bytes:
        """The whole log as one bytes object, for a full scan."""
        return self._data if self._data is not None else self.read(0, self.size)

    def blocks(self, size: int = 8 << 20, overlap: int = 4096):
        """(offset, bytes) blocks covering the log, each overlapping the previous by ``overlap`` bytes."""
        pos = 0
        while pos < self.size:
            start = max(0, pos - overlap)
            yield start, self.read(start, pos + size - start)
            pos += size

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _gunzip(fd: int, path: str) -> tuple[bytes, str]:
    """All members of a gzip stream, streamed; on damage, what decompressed before it and the reason."""
    import zlib  # plain logs never need it (start-up time)

    out: list[bytes] = []
    total, raw_seen = 0, 0
    d = zlib.decompressobj(wbits=31)
    pending = b""
    in_member = False
    try:
        while True:
            if not pending:
                pending = os.read(fd, 1 << 20)
                if not pending:
                    break
                raw_seen += len(pending)
            if not in_member:
                pending = pending.lstrip(b"\0")  # padding between members
                if not pending:
                    continue
                d, in_member = zlib.decompressobj(wbits=31), True
            piece = d.decompress(pending, GUNZIP_CHUNK)
            pending = d.unconsumed_tail
            total += len(piece)
            if total > MAX_GUNZIP:
                raise LogTooLargeError(f"{path}: expands beyond {MAX_GUNZIP:,} bytes; a log that large is "
                                       "refused (gunzip it and pass the plain file)")
            out.append(piece)
            if d.eof:
                pending, in_member = d.unused_data, False
        while in_member:  # output zlib still holds once the input is all in
            piece = d.decompress(d.unconsumed_tail, GUNZIP_CHUNK)
            if not piece:
                break
            total += len(piece)
            if total > MAX_GUNZIP:
                raise LogTooLargeError(f"{path}: expands beyond {MAX_GUNZIP:,} bytes; a log that large is "
                                       "refused (gunzip it and pass the plain file)")
            out.append(piece)
            in_member = not d.eof
    except zlib.error as e:
        return b"".join(out), f"corrupt gzip data ({e})"
    except OSError as e:
        raise LogReadError(f"{path}: read failed ({e.strerror or e})") from None
    if raw_seen == 0:
        return b"", "empty .gz file (0 bytes)"
    if in_member:
        return b"".join(out), "gzip stream truncated"
    return b"".join(out), ""


def err_path_for(out: str | os.PathLike[str]) -> str | None:
    """The .err written beside a .out (``x.out`` -> ``x.err``; ``x.out.gz`` -> ``x.err.gz`` or ``x.err``)."""
    folder, name = os.path.split(os.fspath(out))
    stems = []
    if name.endswith(".out.gz"):
        stems = [name[:-7] + ".err.gz", name[:-7] + ".err"]
    elif name.endswith(".out"):
        stems = [name[:-4] + ".err", name[:-4] + ".err.gz"]
    for s in stems:
        candidate = os.path.join(folder, s)
        if os.path.isfile(candidate):
            return candidate
    return None
