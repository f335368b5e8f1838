"""Read lz4-java's ``LZ4BlockOutputStream`` format: how Spark compresses event logs with codec ``lz4``.

Spark's default codec (``spark.io.compression.codec=lz4``) writes a sequence of blocks, each
``"LZ4Block"`` + token (method | level) + compressed length + original length + checksum
(little-endian ints), then the block: raw (method 0x10) or an LZ4 block (method 0x20). An empty
block (both lengths 0) ends a stream; streams may follow one another. No compression library is
needed here: the LZ4 block format is decoded in pure Python (event logs are a few MB).
"""

from __future__ import annotations

import struct

from logparse.errors import LogParseError

MAGIC = b"LZ4Block"
HEADER = struct.Struct("<Biii")  # token, compressed length, original length, checksum
METHOD_RAW = 0x10
METHOD_LZ4 = 0x20


class CompressedLogError(LogParseError):
    """The file is not a complete lz4-java block stream."""


def decompress_block(src: bytes, size: int) -> bytes:
    """Decode one LZ4 *block* (not frame) whose decoded length is ``size``."""
    dst = bytearray()
    i, n = 0, len(src)
    while i < n:
        token = src[i]
        i += 1
        literals = token >> 4
        if literals == 15:
            while True:
                b = src[i]
                i += 1
                literals += b
                if b != 255:
                    break
        dst += src[i:i + literals]
        i += literals
        if i >= n:  # the last sequence has literals only
            break
        offset = src[i] | (src[i + 1] << 8)
        i += 2
        length = token & 15
        if length == 15:
            while True:
                b = src[i]
                i += 1
                length += b
                if b != 255:
                    break
        length += 4
        start = len(dst) - offset
        if offset <= 0 or start < 0:
            raise CompressedLogError(f"LZ4 block: match offset {offset} points before the start of the block")
        if offset >= length:
            dst += dst[start:start + length]
        else:  # overlapping copy: the last `offset` bytes repeat
            pattern = bytes(dst[start:])
            dst += (pattern * (length // offset + 1))[:length]
    if len(dst) != size:
        raise CompressedLogError(f"LZ4 block decoded to {len(dst)} bytes, its header says {size}")
    return bytes(dst)


def decompress(data: bytes, allow_truncated: bool = False) -> bytes:
    """Every block of an lz4-java block stream, concatenated.

    ``allow_truncated``: a file still being written (``.inprogress``) may end inside a block;
    return what is complete instead of raising.
    """
    out = bytearray()
    pos, n = 0, len(data)
    while pos < n:
        if data[pos:pos + 8] != MAGIC:
            if allow_truncated and pos + 8 > n:
                break
            raise CompressedLogError(f"no LZ4Block magic at byte {pos}: not an lz4-compressed Spark event log")
        if pos + 8 + HEADER.size > n:
            if allow_truncated:
                break
            raise CompressedLogError("the file ends inside a block header (truncated)")
        token, clen, olen, _check = HEADER.unpack_from(data, pos + 8)
        pos += 8 + HEADER.size
        if clen < 0 or olen < 0 or pos + clen > n:
            if allow_truncated:
                break
            raise CompressedLogError(f"block of {clen} bytes runs past the end of the file (truncated)")
        block = data[pos:pos + clen]
        pos += clen
        method = token & 0xF0
        if method == METHOD_RAW:
            out += block
        elif method == METHOD_LZ4:
            out += decompress_block(block, olen)
        else:
            raise CompressedLogError(f"unknown LZ4Block method 0x{method:02x}")
    return bytes(out)
