"""Spark's own metrics of one run, read from its event log (``spark.eventLog.enabled``).

    from logparse.eventlog import read_event_log, find_event_log
    app = read_event_log(find_event_log(run_dir))
    app.totals.executor_run_ms, app.totals.jvm_gc_ms, app.columns()   # spark_* for results.csv
    app.stage_rows()                                                  # the per-stage table

Every figure is summed over task-end events the way Spark's UI (AppStatusListener) sums them,
so they agree with the driver's REST API ``/api/v1/applications/<id>/stages`` for the same
application; the scheduler delay is Spark's ``AppStatusUtils.schedulerDelay`` per task.

The log is JSON lines, one file (Spark 3) or a rolling ``eventlog_v2_<app id>/`` folder of
``events_<n>_*`` files (Spark 4's default), each plain or compressed with the codec its suffix
names: ``.zstd`` (Spark 4's default; the ``zstandard`` package) or ``.lz4`` (lz4-java's block
stream, its blocks decompressed by the ``lz4`` package). Untrusted input cannot exhaust memory:
every read is bounded by a block's declared size (itself bounded by its block size) or by
:data:`CHUNK`, and one log by ``max_bytes`` (:data:`MAX_LOG_BYTES`) in all; anything else is a
clean :class:`EventLogError`. Light imports only (no pandas).
"""

from __future__ import annotations

import csv
import json
import os
import struct
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

import lz4.block
import zstandard

from logparse.errors import LogNotFoundError, LogParseError, LogTooLargeError

INPROGRESS = ".inprogress"
STAGE_TABLE = "spark_stages.csv"
APP_PREFIXES = ("app-", "local-", "application_")
ROLLING, EVENTS, APPSTATUS = "eventlog_v2_", "events_", "appstatus_"  # Spark's RollingEventLogFilesWriter

#: The cap on one event log's decompressed bytes (``max_bytes`` overrides it): far above any real
#: run's log (a few MB), far below what would exhaust the machine.
MAX_LOG_BYTES = 2 * 2**30
#: The most bytes decompressed at once from a zstd stream, and read at once from a plain log.
CHUNK = 2**20
#: The longest line (one event) read: Spark's largest events (SQL plans) are a few MB.
MAX_LINE_BYTES = 64 * 2**20
#: The most stages, jobs and executors one log may add (each is kept in memory).
MAX_ENTRIES = 1_000_000
#: Codec short names (Spark's file suffixes) read here; ``zst`` is zstd's own suffix.
CODECS = {"lz4": "lz4", "zstd": "zstd", "zst": "zstd"}

MAGIC = b"LZ4Block"
LZ4_HEADER = struct.Struct("<Biii")  # token, compressed length, original length, xxhash32 checksum
LZ4_HEADER_SIZE = len(MAGIC) + LZ4_HEADER.size
LZ4_RAW, LZ4_COMPRESSED = 0x10, 0x20
#: lz4-java's ``LZ4BlockOutputStream.MAX_BLOCK_SIZE`` (Spark's ``spark.io.compression.lz4.blockSize``
#: is 32k by default); a block's token also declares its own size, ``1 << (10 + (token & 0x0F))``.
LZ4_MAX_BLOCK = 1 << 25

ZSTD_MAX_HEADER = 18  # the longest zstd frame header
ZSTD_SKIPPABLE = 0x184D2A50  # magic of a skippable frame (low 4 bits free)
#: zstd's own default limit (2**27): a frame asking for a larger window is refused, not allocated.
ZSTD_MAX_WINDOW = 1 << 27

TRUNCATED_FIX = ": Spark did not finish writing it (a log still being written ends in .inprogress)"


class EventLogError(LogParseError):
    """An event log cannot be found or read."""


class CompressedLogError(EventLogError):
    """The file is not a complete stream of its codec: corrupt or truncated."""


class EventLogTooLargeError(EventLogError, LogTooLargeError):
    """An event log decompresses to more than the cap (``max_bytes``)."""


@dataclass
class TaskTotals:
    """Sums over tasks (milliseconds unless the name says ns or bytes), as Spark's stage aggregates."""

    tasks: int = 0
    failed_tasks: int = 0
    killed_tasks: int = 0
    executor_run_ms: int = 0
    executor_cpu_ns: int = 0
    jvm_gc_ms: int = 0
    deserialize_ms: int = 0
    deserialize_cpu_ns: int = 0
    scheduler_delay_ms: int = 0
    result_serialization_ms: int = 0
    getting_result_ms: int = 0
    result_size_bytes: int = 0
    shuffle_read_bytes: int = 0
    shuffle_write_bytes: int = 0
    shuffle_fetch_wait_ms: int = 0
    shuffle_write_ns: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    peak_execution_memory_bytes: int = 0  # sum of task peaks, as Spark's stage figure
    max_task_peak_memory_bytes: int = 0
    memory_spilled_bytes: int = 0
    disk_spilled_bytes: int = 0
    task_duration_ms: int = 0

    def add(self, other: "TaskTotals") -> None:
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            setattr(self, f.name, max(a, b) if f.name.startswith("max_") else a + b)


@dataclass
class StageMetrics:
    """One stage attempt: what it was and the sums over its tasks."""

    stage_id: int
    attempt: int
    name: str = ""
    num_tasks: int = 0
    submitted_ms: int | None = None
    completed_ms: int | None = None
    failure: str | None = None
    totals: TaskTotals = field(default_factory=TaskTotals)

    @property
    def duration_ms(self) -> int | None:
        if self.submitted_ms is None or self.completed_ms is None:
            return None
        return self.completed_ms - self.submitted_ms

    def row(self) -> dict[str, object]:
        head = {k: v for k, v in asdict(self).items() if k != "totals"}
        return {**head, "duration_ms": self.duration_ms, **asdict(self.totals)}


@dataclass(frozen=True)
class ExecutorAdded:
    time_ms: int
    executor_id: str
    host: str
    cores: int


@dataclass
class AppMetrics:
    """Everything the parser reads from one application's event log."""

    path: str
    app_id: str | None = None
    app_name: str | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    complete: bool = False
    executors: list[ExecutorAdded] = field(default_factory=list)
    executors_removed: int = 0
    first_task_launch_ms: int | None = None
    last_task_finish_ms: int | None = None
    jobs: int = 0
    jobs_failed: int = 0
    job_times_ms: list[tuple[int, int | None]] = field(default_factory=list)  # (submitted, completed)
    first_open_job: int = field(default=0, repr=False, compare=False)  # where the next JobEnd looks
    stages: dict[tuple[int, int], StageMetrics] = field(default_factory=dict)
    totals: TaskTotals = field(default_factory=TaskTotals)

    @property
    def executors_granted_ms(self) -> int | None:
        """When the last executor of the initial allocation was added."""
        return max((e.time_ms for e in self.executors), default=None)

    @property
    def duration_s(self) -> float | None:
        if self.start_ms is None or self.end_ms is None:
            return None
        return (self.end_ms - self.start_ms) / 1000

    @property
    def jobs_span_s(self) -> float | None:
        """Seconds from the first Spark job's submission to the last job's completion (None without a finished job).

        The time of the work of any program, whatever it prints: the application's start-up before its
        first job and its shutdown after its last are left out."""
        starts = [s for s, _ in self.job_times_ms if s]
        ends = [e for _, e in self.job_times_ms if e]
        if not starts or not ends or max(ends) < min(starts):
            return None
        return (max(ends) - min(starts)) / 1000

    def failed_stage(self) -> str | None:
        """The failure reason of the last stage attempt that failed (its first line), else None."""
        failed = [s for _, s in sorted(self.stages.items()) if s.failure]
        return failed[-1].failure if failed else None

    def stage_rows(self) -> list[dict[str, object]]:
        return [s.row() for _, s in sorted(self.stages.items())]

    def columns(self) -> dict[str, float | int | None]:
        """The ``spark_*`` columns of results.csv (seconds, MB, counts, shares)."""
        t = self.totals
        run_s = t.executor_run_ms / 1000

        def share(x: float) -> float | None:
            return round(x / run_s, 4) if run_s > 0 else None

        return {
            "spark_app_s": None if self.duration_s is None else round(self.duration_s, 3),
            "spark_executors": len(self.executors),
            "spark_jobs": self.jobs,
            "spark_jobs_span_s": None if self.jobs_span_s is None else round(self.jobs_span_s, 3),
            "spark_failed_jobs": self.jobs_failed,
            "spark_stages": len(self.stages),
            "spark_tasks": t.tasks,
            "spark_failed_tasks": t.failed_tasks,
            "spark_killed_tasks": t.killed_tasks,
            "spark_executor_run_s": round(run_s, 3),
            "spark_executor_cpu_s": round(t.executor_cpu_ns / 1e9, 3),
            "spark_gc_s": round(t.jvm_gc_ms / 1000, 3),
            "spark_gc_share": share(t.jvm_gc_ms / 1000),
            "spark_cpu_share": share(t.executor_cpu_ns / 1e9),
            "spark_deserialize_s": round(t.deserialize_ms / 1000, 3),
            "spark_scheduler_delay_s": round(t.scheduler_delay_ms / 1000, 3),
            "spark_result_serialization_s": round(t.result_serialization_ms / 1000, 3),
            "spark_shuffle_read_mb": round(t.shuffle_read_bytes / 2**20, 3),
            "spark_shuffle_write_mb": round(t.shuffle_write_bytes / 2**20, 3),
            "spark_input_mb": round(t.input_bytes / 2**20, 3),
            "spark_peak_task_memory_mb": round(t.max_task_peak_memory_bytes / 2**20, 3),
        }


# ---------------------------------------------------------------- finding and reading


def _inprogress(path: Path) -> bool:
    """Whether Spark is still writing this log: an ``.inprogress`` file, or a rolling folder whose
    ``appstatus_*`` file still ends in ``.inprogress``."""
    if path.is_dir():
        return any(p.name.startswith(APPSTATUS) and p.name.endswith(INPROGRESS) for p in path.iterdir())
    return path.name.endswith(INPROGRESS)


def find_event_log(directory: Path) -> Path:
    """The event log Spark wrote into ``directory`` (a finished one before an ``.inprogress`` one).

    A log is a file (``app-*``, ``local-*``, ``application_*``; Spark 3's layout) or a rolling
    folder (``eventlog_v2_<app id>/``; Spark 4 rolls by default): both are read by :func:`read_event_log`.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise LogNotFoundError(f"{directory}: no such directory; run with the event log enabled "
                               "(harness.command's event_log_dir)")
    candidates = [p for p in directory.iterdir() if (p.is_file() and p.name.startswith(APP_PREFIXES))
                  or (p.is_dir() and p.name.startswith(ROLLING))]
    done = [p for p in candidates if not _inprogress(p)]
    pick = sorted(done or candidates, key=lambda p: p.stat().st_mtime)
    if not pick:
        raise LogNotFoundError(f"{directory}: no Spark event log (app-* or eventlog_v2_*): "
                               "was spark.eventLog.enabled set?")
    return pick[-1]


def codec_of(path: Path) -> str | None:
    """The codec Spark wrote ``path`` with, from its suffix (``lz4``, ``zstd``; None: plain JSON lines).

    Spark names the file after the codec's short name (``.lz4``, ``.zstd``, ``.snappy``, ``.lzf``); a
    rolling folder's files are ``events_<n>_<app id>[.codec][.compact]``.
    """
    base = path.name.removesuffix(INPROGRESS).removesuffix(".compact")
    tail = base.split("-")[-1]
    if "." not in tail or base.endswith(".json"):
        return None
    suffix = tail.rsplit(".", 1)[-1]
    if suffix in CODECS:
        return CODECS[suffix]
    raise EventLogError(f"{path}: event logs compressed with {suffix!r} cannot be read here: "
                        "set spark.eventLog.compression.codec=zstd (or lz4)")


@dataclass
class _Budget:
    """What is left of the cap on one log's decompressed bytes (:data:`MAX_LOG_BYTES`), shared by its files."""

    path: Path
    cap: int
    used: int = 0

    @property
    def left(self) -> int:
        return self.cap - self.used

    def take(self, n: int) -> None:
        """Account for ``n`` more bytes, refusing them *before* they are decompressed when over the cap."""
        if n > self.left:
            raise EventLogTooLargeError(
                f"{self.path}: decompresses to more than {self.cap} bytes, the cap on one event log: "
                "if the log is genuine, pass a larger max_bytes to read_event_log()")
        self.used += n


def _plain_chunks(f: BinaryIO, budget: _Budget, allow_truncated: bool = False) -> Iterator[bytes]:
    """A plain log in reads of :data:`CHUNK` bytes (a cut last line, truncated or not, is for parse_events to skip)."""
    while chunk := f.read(min(CHUNK, budget.left + 1)):
        budget.take(len(chunk))
        yield chunk


def _lz4_header(f: BinaryIO, pos: int, path: Path, allow_truncated: bool) -> tuple[int, int, int] | None:
    """``(token, compressed length, original length)`` of the block at ``pos``; None at the end of the data."""
    head = f.read(LZ4_HEADER_SIZE)
    if not head or (allow_truncated and len(head) < LZ4_HEADER_SIZE):
        return None
    if head[:len(MAGIC)] != MAGIC[:len(head)]:
        raise CompressedLogError(f"{path}: no LZ4Block magic at byte {pos}: not an lz4 event log written by Spark")
    if len(head) < LZ4_HEADER_SIZE:
        raise CompressedLogError(f"{path}: the file ends inside the LZ4 block header at byte {pos} "
                                 f"(truncated){TRUNCATED_FIX}")
    token, clen, olen, _checksum = LZ4_HEADER.unpack_from(head, len(MAGIC))
    return token, clen, olen


def _lz4_check(token: int, clen: int, olen: int, pos: int, path: Path) -> None:
    """lz4-java's own checks of a block header (``LZ4BlockInputStream.refill``), before anything is read."""
    method, limit = token & 0xF0, min(1 << (10 + (token & 0x0F)), LZ4_MAX_BLOCK)
    where = f"{path}: LZ4 block at byte {pos}"
    if method not in (LZ4_RAW, LZ4_COMPRESSED):
        raise CompressedLogError(f"{where}: unknown method 0x{method:02x}: the file is corrupt")
    if not 0 <= olen <= limit:
        raise CompressedLogError(f"{where} declares {olen} bytes, not within its block size of {limit}: "
                                 "the file is corrupt")
    bound = olen if method == LZ4_RAW else olen + olen // 255 + 16  # LZ4_compressBound
    if not 0 <= clen <= bound or (clen == 0) != (olen == 0):
        raise CompressedLogError(f"{where}: {clen} compressed bytes for {olen}: the file is corrupt")


def _lz4_chunks(f: BinaryIO, budget: _Budget, allow_truncated: bool = False) -> Iterator[bytes]:
    """The blocks of lz4-java's ``LZ4BlockOutputStream`` (Spark's codec ``lz4``), decompressed by the ``lz4`` package.

    Each block is ``"LZ4Block"`` + token (method | log2(block size) - 10) + compressed length +
    original length + xxhash32 (little-endian ints, not checked here), then the raw or LZ4 block.
    An empty block ends a stream; streams may follow one another. The declared length is checked
    against the block size and the cap before the block is decompressed into exactly that length.
    ``allow_truncated``: a log still being written may end inside a block; stop before it.
    """
    pos = 0
    while (header := _lz4_header(f, pos, budget.path, allow_truncated)) is not None:
        token, clen, olen = header
        _lz4_check(token, clen, olen, pos, budget.path)
        budget.take(olen)
        block = f.read(clen)
        if len(block) < clen:
            if allow_truncated:
                return
            raise CompressedLogError(f"{budget.path}: the LZ4 block at byte {pos} runs past the end of the file "
                                     f"(truncated){TRUNCATED_FIX}")
        yield block if token & 0xF0 == LZ4_RAW else _lz4_decompress(block, olen, pos, budget.path)
        pos += LZ4_HEADER_SIZE + clen


def _lz4_decompress(block: bytes, olen: int, pos: int, path: Path) -> bytes:
    """One LZ4 block into exactly its declared length: the ``lz4`` package's bounds-checked decoder
    never writes past ``olen``, and a block decoding to fewer bytes is as corrupt as one needing more."""
    try:
        out = lz4.block.decompress(block, uncompressed_size=olen)
    except lz4.block.LZ4BlockError as e:
        raise CompressedLogError(f"{path}: the LZ4 block at byte {pos} is corrupt ({e})") from None
    if len(out) != olen:
        raise CompressedLogError(f"{path}: the LZ4 block at byte {pos} decodes to {len(out)} bytes, "
                                 f"its header says {olen}: the file is corrupt")
    return out


def _zstd_require_complete(f: BinaryIO, path: Path) -> None:
    """Raise unless ``f`` ends where its last zstd frame does, walking frame and block headers only.

    Why: ``stream_reader`` stops silently when its input ends inside a frame, so a truncated log
    would read as a shorter one; a finished log must end exactly where its last frame does.
    """
    size = os.fstat(f.fileno()).st_size
    pos = 0
    while pos < size:
        f.seek(pos)
        head = f.read(ZSTD_MAX_HEADER)
        if len(head) >= 8 and int.from_bytes(head[:4], "little") & 0xFFFFFFF0 == ZSTD_SKIPPABLE:
            pos += 8 + int.from_bytes(head[4:8], "little")
            continue
        try:
            checksum = zstandard.get_frame_parameters(head).has_checksum  # checks the magic, too
            pos += zstandard.frame_header_size(head)
        except zstandard.ZstdError as e:
            raise CompressedLogError(f"{path}: no zstd frame at byte {pos} ({e}): not a zstd event log written "
                                     f"by Spark, or truncated{TRUNCATED_FIX}") from None
        last = False
        while not last and pos + 3 <= size:
            f.seek(pos)
            block = int.from_bytes(f.read(3), "little")
            last, kind, length = bool(block & 1), (block >> 1) & 3, block >> 3
            pos += 3 + (1 if kind == 1 else length)  # an RLE block stores its one byte
        pos += 4 * checksum
        if not last or pos > size:
            raise CompressedLogError(f"{path}: the file ends inside a zstd frame (truncated){TRUNCATED_FIX}")
    f.seek(0)


def _zstd_chunks(f: BinaryIO, budget: _Budget, allow_truncated: bool = False) -> Iterator[bytes]:
    """A zstd frame stream (Spark's codec ``zstd``: zstd-jni closes a frame at every flush), decompressed by
    ``zstandard`` in reads of at most :data:`CHUNK` bytes, each counted against the cap before the next.

    ``allow_truncated``: a log still being written ends inside a frame; its complete blocks are read.
    """
    if not allow_truncated:
        _zstd_require_complete(f, budget.path)
    reader = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).stream_reader(f, read_across_frames=True)
    try:
        while chunk := reader.read(min(CHUNK, budget.left + 1)):
            budget.take(len(chunk))
            yield chunk
    except zstandard.ZstdError as e:
        raise CompressedLogError(f"{budget.path}: corrupt zstd data ({e}): not a zstd event log written by Spark") \
            from None


#: How each codec's bytes are read: ``(file, budget, allow_truncated) -> decompressed chunks``.
READERS: dict[str | None, Callable[[BinaryIO, _Budget, bool], Iterator[bytes]]] = {
    None: _plain_chunks, "lz4": _lz4_chunks, "zstd": _zstd_chunks}


def _split_lines(chunks: Iterable[bytes], path: Path | str = "event log") -> Iterator[str]:
    """JSON lines out of decompressed chunks, split at ``\\n`` only (as Spark's reader), a line's pieces joined once;
    a line over :data:`MAX_LINE_BYTES` is a corrupt log (no event is that long), refused before it is joined."""
    pending: list[bytes] = []
    size = 0
    for chunk in chunks:
        *complete, tail = chunk.split(b"\n")
        if complete:
            if size + len(complete[0]) > MAX_LINE_BYTES:
                raise EventLogError(f"{path}: a line of over {MAX_LINE_BYTES} bytes: not an event Spark writes "
                                    "(the log is corrupt)")
            complete[0] = b"".join((*pending, complete[0]))
            pending, size = [], 0
            for line in complete:
                if len(line) > MAX_LINE_BYTES:
                    raise EventLogError(f"{path}: a line of over {MAX_LINE_BYTES} bytes: not an event Spark writes "
                                        "(the log is corrupt)")
                yield line.rstrip(b"\r").decode("utf-8", errors="replace")
        if tail:
            pending.append(tail)
            size += len(tail)
            if size > MAX_LINE_BYTES:
                raise EventLogError(f"{path}: a line of over {MAX_LINE_BYTES} bytes: not an event Spark writes "
                                    "(the log is corrupt)")
    if pending:
        yield b"".join(pending).rstrip(b"\r").decode("utf-8", errors="replace")


def _file_lines(path: Path, budget: _Budget, allow_truncated: bool) -> Iterator[str]:
    """The lines of one log file, decompressed by the codec its name says."""
    read = READERS[codec_of(path)]
    try:
        with open(path, "rb") as f:
            yield from _split_lines(read(f, budget, allow_truncated), path)
    except FileNotFoundError as e:
        raise LogNotFoundError(f"{path}: no such event log") from e
    except OSError as e:
        raise EventLogError(f"{path}: cannot read ({e.strerror or e})") from e


def _rolling_index(path: Path) -> int | None:
    """n of a rolling log's ``events_<n>_<app id>...`` file (None: another file, e.g. ``appstatus_*``, ``.crc``)."""
    n = path.name.removeprefix(EVENTS).split("_")[0]
    return int(n) if path.name.startswith(EVENTS) and n.isdigit() else None


def rolling_files(folder: Path) -> list[Path]:
    """The event files of a rolling log folder in Spark's order (by n: events_10 after events_2)."""
    try:
        files = [p for p in folder.iterdir() if p.is_file() and _rolling_index(p) is not None]
    except OSError as e:
        raise EventLogError(f"{folder}: cannot list ({e.strerror or e})") from e
    if not files:
        raise LogNotFoundError(f"{folder}: no events_* file: not a Spark rolling event log folder")
    return sorted(files, key=lambda p: _rolling_index(p) or 0)


def iter_lines(path: Path, max_bytes: int = MAX_LOG_BYTES) -> Iterator[str]:
    """The JSON lines of an event log (a file or a rolling ``eventlog_v2_*`` folder), read as they are decompressed.

    At most ``max_bytes`` decompressed bytes are read, else :class:`EventLogTooLargeError`; a corrupt or
    truncated finished log raises :class:`CompressedLogError`. A log still being written (``.inprogress``)
    yields its complete blocks: its last line may be cut, which :func:`parse_events` skips.
    """
    path = Path(path)
    budget = _Budget(path, max_bytes)
    if not path.is_dir():
        yield from _file_lines(path, budget, allow_truncated=_inprogress(path))
        return
    files, running = rolling_files(path), _inprogress(path)
    for i, file in enumerate(files):
        yield from _file_lines(file, budget, allow_truncated=running and i == len(files) - 1)


def read_lines(path: Path, max_bytes: int = MAX_LOG_BYTES) -> list[str]:
    """Every JSON line of an event log: see :func:`iter_lines`."""
    return list(iter_lines(path, max_bytes))


def _num(d: dict, key: str) -> int:
    v = d.get(key)
    return int(v) if isinstance(v, (int, float)) else 0


def scheduler_delay_ms(info: dict, metrics: dict) -> int:
    """Spark's ``AppStatusUtils.schedulerDelay`` of a finished task."""
    launch, finish = _num(info, "Launch Time"), _num(info, "Finish Time")
    duration = finish - launch if finish > 0 else 0
    fetch_start = _num(info, "Getting Result Time")
    getting = (launch + duration - fetch_start) if fetch_start > 0 and duration > 0 else 0
    return max(0, duration - _num(metrics, "Executor Run Time") - _num(metrics, "Executor Deserialize Time")
               - _num(metrics, "Result Serialization Time") - getting)


def task_totals(event: dict) -> TaskTotals:
    """The figures of one SparkListenerTaskEnd event."""
    info = event.get("Task Info") or {}
    m = event.get("Task Metrics") or {}
    reason = (event.get("Task End Reason") or {}).get("Reason", "Success")
    killed = bool(info.get("Killed")) or reason == "TaskKilled"
    failed = not killed and (bool(info.get("Failed")) or reason != "Success")
    sr, sw = m.get("Shuffle Read Metrics") or {}, m.get("Shuffle Write Metrics") or {}
    launch, finish, fetch = _num(info, "Launch Time"), _num(info, "Finish Time"), _num(info, "Getting Result Time")
    peak = _num(m, "Peak Execution Memory")
    return TaskTotals(
        tasks=1, failed_tasks=int(failed), killed_tasks=int(killed),
        executor_run_ms=_num(m, "Executor Run Time"), executor_cpu_ns=_num(m, "Executor CPU Time"),
        jvm_gc_ms=_num(m, "JVM GC Time"), deserialize_ms=_num(m, "Executor Deserialize Time"),
        deserialize_cpu_ns=_num(m, "Executor Deserialize CPU Time"),
        scheduler_delay_ms=scheduler_delay_ms(info, m) if m else 0,
        result_serialization_ms=_num(m, "Result Serialization Time"),
        getting_result_ms=(finish - fetch) if fetch > 0 and finish > 0 else 0,
        result_size_bytes=_num(m, "Result Size"),
        shuffle_read_bytes=_num(sr, "Remote Bytes Read") + _num(sr, "Local Bytes Read"),
        shuffle_write_bytes=_num(sw, "Shuffle Bytes Written"),
        shuffle_fetch_wait_ms=_num(sr, "Fetch Wait Time"), shuffle_write_ns=_num(sw, "Shuffle Write Time"),
        input_bytes=_num(m.get("Input Metrics") or {}, "Bytes Read"),
        output_bytes=_num(m.get("Output Metrics") or {}, "Bytes Written"),
        peak_execution_memory_bytes=peak, max_task_peak_memory_bytes=peak,
        memory_spilled_bytes=_num(m, "Memory Bytes Spilled"), disk_spilled_bytes=_num(m, "Disk Bytes Spilled"),
        task_duration_ms=(finish - launch) if finish > 0 else 0,
    )


def _stage(app: AppMetrics, info: dict) -> StageMetrics:
    key = (int(info.get("Stage ID", -1)), int(info.get("Stage Attempt ID", 0)))
    stage = app.stages.get(key)
    if stage is None:
        stage = app.stages[key] = StageMetrics(*key)
    stage.name = info.get("Stage Name", stage.name) or stage.name
    stage.num_tasks = int(info.get("Number of Tasks", stage.num_tasks) or 0)
    if info.get("Submission Time"):
        stage.submitted_ms = int(info["Submission Time"])
    if info.get("Completion Time"):
        stage.completed_ms = int(info["Completion Time"])
    if info.get("Failure Reason"):
        stage.failure = str(info["Failure Reason"]).splitlines()[0][:200]
    return stage


def parse_events(lines: Iterable[str], path: str = "", max_seconds: float | None = None) -> AppMetrics:
    """Fold the events of one application into :class:`AppMetrics` (unknown events are ignored).

    A line that is not JSON is skipped (the last line of a log still being written); JSON that is not
    an event as Spark writes it (a list, a string for a number) is a corrupt log: :class:`EventLogError`,
    as the codecs' own checks cannot catch every flipped byte (lz4-java's checksums are not checked).
    ``max_seconds`` bounds the time spent (:class:`EventLogError` past it).
    """
    app = AppMetrics(path=path)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    for n, line in enumerate(lines, 1):
        if deadline is not None and n % 1000 == 0 and time.monotonic() > deadline:
            raise EventLogError(f"{path or 'event log'}: reading it took over {max_seconds:g} s (at line {n}): "
                                "read it on its own with logparse.eventlog.read_event_log")
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue  # the last line of a log still being written
        except RecursionError:
            raise EventLogError(f"{path or 'event log'}: line {n} nests too deep to be an event Spark writes: "
                                "the log is corrupt") from None
        try:
            _fold(app, ev)
        except (AttributeError, TypeError, ValueError, OverflowError, IndexError, KeyError, RecursionError) as e:
            raise EventLogError(f"{path or 'event log'}: line {n} is not an event Spark writes "
                                f"({type(e).__name__}: {e}): the log is corrupt") from None
        if max(len(app.stages), len(app.job_times_ms), len(app.executors)) > MAX_ENTRIES:
            raise EventLogError(f"{path or 'event log'}: over {MAX_ENTRIES} stages, jobs or executors by line {n}: "
                                "not a run this tool started (the log is corrupt)")
    return app


def _fold(app: AppMetrics, ev: dict) -> None:
    """Add one event to ``app``."""
    kind = ev.get("Event")
    if kind == "SparkListenerTaskEnd":
        t = task_totals(ev)
        stage = app.stages.get((int(ev.get("Stage ID", -1)), int(ev.get("Stage Attempt ID", 0))))
        if stage is None:
            stage = _stage(app, {"Stage ID": ev.get("Stage ID", -1), "Stage Attempt ID": ev.get("Stage Attempt ID", 0)})
        stage.totals.add(t)
        app.totals.add(t)
        finish = _num(ev.get("Task Info") or {}, "Finish Time")
        if finish:
            app.last_task_finish_ms = max(app.last_task_finish_ms or 0, finish)
    elif kind == "SparkListenerTaskStart":
        launch = _num(ev.get("Task Info") or {}, "Launch Time")
        if launch and (app.first_task_launch_ms is None or launch < app.first_task_launch_ms):
            app.first_task_launch_ms = launch
    elif kind in ("SparkListenerStageSubmitted", "SparkListenerStageCompleted"):
        _stage(app, ev.get("Stage Info") or {})
    elif kind == "SparkListenerJobStart":
        app.jobs += 1
        app.job_times_ms.append((_num(ev, "Submission Time"), None))
    elif kind == "SparkListenerJobEnd":
        if (ev.get("Job Result") or {}).get("Result") != "JobSucceeded":
            app.jobs_failed += 1
        i = app.first_open_job  # the first job not ended yet (no scan from the start: linear, not quadratic)
        while i < len(app.job_times_ms) and app.job_times_ms[i][1] is not None:
            i += 1
        if i < len(app.job_times_ms):
            app.job_times_ms[i] = (app.job_times_ms[i][0], _num(ev, "Completion Time"))
            app.first_open_job = i + 1
    elif kind == "SparkListenerExecutorAdded":
        info = ev.get("Executor Info") or {}
        app.executors.append(ExecutorAdded(_num(ev, "Timestamp"), str(ev.get("Executor ID")),
                                           str(info.get("Host", "")), _num(info, "Total Cores")))
    elif kind == "SparkListenerExecutorRemoved":
        app.executors_removed += 1
    elif kind == "SparkListenerApplicationStart":
        app.app_id, app.app_name = ev.get("App ID"), ev.get("App Name")
        app.start_ms = _num(ev, "Timestamp") or None
    elif kind == "SparkListenerApplicationEnd":
        app.end_ms = _num(ev, "Timestamp") or None
        app.complete = True


def read_event_log(path: Path, max_bytes: int = MAX_LOG_BYTES, max_seconds: float | None = None) -> AppMetrics:
    """Parse one event log (a file or a rolling folder; plain, ``.zstd`` or ``.lz4``; ``.inprogress`` allowed).

    The lines are parsed as they are decompressed, so memory holds one chunk, not the log.
    """
    return parse_events(iter_lines(path, max_bytes), str(path), max_seconds)


def write_stage_table(app: AppMetrics, path: Path) -> Path:
    """The per-stage table as CSV (one row per stage attempt)."""
    rows = app.stage_rows()
    head = list(StageMetrics(0, 0).row())
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=head)
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if v is None else v for k, v in r.items()})
    tmp.replace(path)
    return path
