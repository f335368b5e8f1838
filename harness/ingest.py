"""A campaign folder from logs you already have: another team's finished study, named by its settings.

What ``sparkdl ingest`` does; its command line is :mod:`harness.cli.ingest`.

Every ``*.out`` / ``*.out.gz`` under the PATHs (searched recursively, as ``sparkdl logparse``) is one
row of ``OUT/results.csv``: logparse's status, reason and figures (``logparse.judge``: the log's own
status, then a lost executor fails an ok run, as the harness decides for its own runs), plus one column
per named group of ``--fields``, searched (``re.search``) in the log's path as found. A column is typed
from all its values: integers when every value is one, else numbers when every value is one, else text.
Those columns are the campaign's factors in ``manifest.json`` (``--factors a,b`` to choose), except:

* a group named ``replicate`` (or ``run``) numbers the log within its design point (or the point) instead
  of being a factor; without one, the logs of a point (same factor values) are numbered in path order;
* a group named ``epochs`` is also the plan: a log that trained fewer epochs is incomplete, and one that
  reached them needs no other sign that training ended (``--expected-epochs N`` gives one plan to all).

A log whose path does not match is one ``error:`` line naming it and nothing is written (exit 2), or, with
``--skip-unmatched``, one ``skipped`` line and the others are ingested. Logs stay where they are (the
``log`` column holds the absolute path) unless ``--copy`` copies each (and its ``.err``) to
``OUT/logs/<run>-<replicate>.out[.gz]``. ``--per-epoch`` also writes ``OUT/epochs.csv``, one row per epoch of
each log with its run, replicate and factors. Provenance (where the logs came from, the regex, when, which
tool revision) is kept in ``OUT/campaign.sqlite`` with each log's record; re-running on the same folder
reads only new logs (and logs whose size or modification time changed) and keeps every run number.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import socket
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import logparse
from harness.errors import CampaignError, HarnessError
from sparkdl.campaign import IDENTIFIERS, CampaignDir, Manifest, now
from harness.store import ResultStore
from logparse.judgement import Planned, ProcessFacts, judge, unreadable
from logparse.losses import resource_losses
from logparse.parser import collect_logs
from logparse.source import err_path_for
from sparkdl import userregex
from sparkdl.cli import run_cli
from sparkdl.runspec import kind_of, typed
from sparkdl.numbers import NumberError, number
from sparkdl.userregex import UserRegex

Value = int | float | str | None

#: The outcome columns of each row, in order (the harness's names: models and the report read them).
OUTCOME = ("status", "reason", "failure_kind", "wall_clock_s", "accuracy", "app_id", "epochs_completed",
           "learning_rate_used", "batch_size_used", "epoch_wall_clock_ms", "final_loss", "planned_epochs",
           "notes", "log")
RESPONSES = ("wall_clock_s", "accuracy")
SOURCE = "ingest"
#: Column names other stages write: results.csv's outcome, epochs.csv's per-epoch figures, the cost model's.
OWNED = frozenset((*OUTCOME, "key", "epoch", "iterations", "records", "mean_loss", "last_loss", "mean_throughput",
                   "last_learning_rate", "validation_wall_clock_s", "run_status", "cost"))
PLAN_FIELD = "epochs"


class IngestError(HarnessError):
    """The options or the logs cannot make a campaign folder (one line says which and how to fix it)."""


# ---------------------------------------------------------------- values


_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
# kind_of, typed: how a field's text becomes a typed column (sparkdl.runspec, shared with results = "output")


def level(value: str | None) -> Value:
    """A field's value as a design level, alone: ``0.010`` and ``0.01`` are one level, ``10`` and ``10.0`` too."""
    return typed(value, kind_of([value]))


# ---------------------------------------------------------------- options


@dataclass(frozen=True)
class IngestOptions:
    """What ``sparkdl ingest`` was asked (see the module docstring)."""

    paths: tuple[str, ...]
    fields: str
    out: Path
    factors: tuple[str, ...] | None = None
    copy: bool = False
    skip_unmatched: bool = False
    epochs: bool = False
    expected_epochs: int | None = None

    def pattern(self) -> UserRegex:
        rx = userregex.compile(self.fields, "--fields", IngestError,
                               "--fields 'exp(?P<replicate>\\d+)_(?P<learning_rate>[^_/]+)/'")
        if not rx.groupindex:
            raise IngestError(f"--fields {self.fields!r} names no group: name each setting, e.g. "
                              "(?P<learning_rate>[^_/]+)")
        clash = [n for n in rx.groupindex if n in OWNED]
        if clash:
            raise IngestError(f"--fields group(s) {', '.join(clash)} have the names of result columns other stages "
                              "write (results.csv, epochs.csv, the cost model): rename them (e.g. (?P<planned_status>...))")
        return rx

    def factor_names(self, rx: UserRegex) -> tuple[str, ...]:
        names = tuple(n for n in rx.groupindex if n not in IDENTIFIERS)
        if self.factors is None:
            if not names:
                raise IngestError("--fields names only run/replicate: name at least one setting as a factor")
            return names
        unknown = [f for f in self.factors if f not in names]
        if unknown:
            raise IngestError(f"--factors {', '.join(unknown)}: not a group of --fields (its groups are "
                              f"{', '.join(names) or 'none'}); name one of those")
        return self.factors


# ---------------------------------------------------------------- one log


@dataclass
class Ingested:
    """One log in the folder: where it is, its place in the design, its fields and what logparse read in it."""

    source: str                       # the log's real absolute path (its identity across re-runs)
    run: int
    replicate: int
    size: int
    mtime_ns: int
    path: str                         # as found under the PATH given
    fields: dict[str, str | None]     # every named group, as text
    outcome: dict[str, Value]         # OUTCOME columns but "log"
    log: str                          # the results.csv "log" column: the absolute path, or logs/<key>.out[.gz]
    epochs: list[dict[str, Value]] | None = None

    @property
    def key(self) -> str:
        return f"{self.run}-{self.replicate}"

    def record(self) -> dict[str, object]:
        return {"path": self.path, "fields": self.fields, "outcome": self.outcome, "log": self.log,
                "epochs": self.epochs}

    @classmethod
    def stored(cls, source: str, run: int, replicate: int, size: int, mtime_ns: int,
               record: Mapping[str, object]) -> "Ingested":
        return cls(source, run, replicate, size, mtime_ns, str(record["path"]), dict(record["fields"]),  # type: ignore[arg-type]
                   dict(record["outcome"]), str(record["log"]), record.get("epochs"))  # type: ignore[arg-type]


def read_log(path: str, planned: int | None, epochs: bool) -> tuple[dict[str, Value], list[dict[str, Value]] | None, str]:
    """logparse's judgement of one log (status, figures), its epoch rows if asked, and the error it raised ("")."""
    try:
        log = logparse.parse(path, full=epochs, expected_epochs=planned)
        losses = resource_losses(path) if log.status == logparse.Status.OK else ()
        error = ""
    except logparse.LogParseError as e:
        log, losses, error = unreadable(path, str(e)), (), str(e)
    j = judge(log, Planned(epochs=planned), ProcessFacts(), losses)
    outcome: dict[str, Value] = {
        "status": str(j.status), "reason": j.reason, "failure_kind": None if j.failure_kind is None else str(j.failure_kind),
        "wall_clock_s": log.wall_clock_s, "accuracy": log.accuracy, "app_id": log.app_id,
        "epochs_completed": log.epochs_completed, "learning_rate_used": log.learning_rate,
        "batch_size_used": log.batch_size, "epoch_wall_clock_ms": log.epoch_wall_clock_ms,
        "final_loss": log.final_loss, "planned_epochs": log.planned_epochs, "notes": "; ".join(j.notes)}
    rows = None
    if epochs:
        from logparse.epochs import epoch_summaries

        rows = [{k: v for k, v in asdict(e).items() if k != "path"} for e in epoch_summaries(log)]
    return outcome, rows, error


# ---------------------------------------------------------------- the folder


@dataclass
class IngestResult:
    """What one ingest did: the folder's logs, and how many were new, read again, kept, skipped or unreadable."""

    folder: CampaignDir
    logs: list[Ingested]
    factors: tuple[str, ...]
    new: int = 0
    reread: int = 0
    kept: int = 0
    skipped: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for x in self.logs:
            status = str(x.outcome["status"])
            out[status] = out.get(status, 0) + 1
        return out


def find(options: IngestOptions, rx: UserRegex, say) -> tuple[list[tuple[str, dict[str, str | None]]], list[str]]:
    """The logs under the PATHs with their fields, and the paths that did not match (reported by ``say``)."""
    found = collect_logs(options.paths)
    if found.problems:
        raise IngestError(found.problems[0])
    out = os.path.realpath(options.out)
    logs = [p for p in found.paths if not os.path.realpath(p).startswith(out + os.sep)]  # never its own copies
    if not logs:
        raise IngestError(f"no log in {', '.join(options.paths)} (*.out or *.out.gz, searched recursively): "
                          "pass the folder that holds the jobs' .out files")
    for p in logs:
        try:
            p.encode("utf-8")
        except UnicodeEncodeError:
            raise IngestError(f"{_shown(p)}: its path is not UTF-8 text (results.csv and the report could not name "
                              "it): rename the file or folder, or pass PATHs without it") from None
    matched, unmatched = [], []
    for p in logs:
        m = rx.search(p)
        if m is None:
            unmatched.append(p)
            continue
        matched.append((p, {name: m.group(name) for name in rx.groupindex}))
    for p in unmatched:
        say(f"{'skipped' if options.skip_unmatched else 'error:'} {p}: its path does not match --fields")
    if unmatched and not options.skip_unmatched:
        raise IngestError(f"{len(unmatched)} of {len(logs)} log(s) do not match --fields {options.fields!r} (named "
                          "above): fix the regex, or pass --skip-unmatched to leave them out")
    if not matched:
        raise IngestError(f"none of the {len(logs)} log(s) matches --fields {options.fields!r}: fix the regex")
    return matched, unmatched


#: The largest run or replicate number (the store keeps them as 64-bit integers; no study has more).
MAX_IDENTIFIER = 10**9


def _shown(path: str) -> str:
    """A path as a message shows it: a byte that is not UTF-8 as its escape, a control character too."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _stat(path: str) -> tuple[int, int]:
    """(size, mtime_ns) of a log, (-1, -1) when it cannot be stat'ed (a dangling or looping link): its row says why."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return -1, -1
    return st.st_size, st.st_mtime_ns


def _plan(fields: Mapping[str, str | None], path: str) -> int | None:
    """The epochs group as the plan (None without one); a value no run is asked for is refused naming the log."""
    text = fields.get(PLAN_FIELD)
    if text is None or not _INT.fullmatch(text):
        return None
    try:
        return int(number(text, integer=True, minimum=0, maximum=MAX_IDENTIFIER)) or None
    except NumberError as e:
        raise IngestError(f"{_shown(path)}: {PLAN_FIELD} {text[:40]!r} (from --fields) is not a number of epochs ({e}); "
                          "capture the planned epochs, e.g. (?P<epochs>\\d+)") from None


def _identifier(name: str, fields: Mapping[str, str | None], path: str) -> int | None:
    text = fields.get(name)
    if text is None:
        return None
    try:
        return int(number(text, integer=True, minimum=1, maximum=MAX_IDENTIFIER))
    except NumberError as e:
        raise IngestError(f"{_shown(path)}: {name} {text[:40]!r} (from --fields) is not a whole number from 1 to "
                          f"{MAX_IDENTIFIER:,} ({e}); capture digits only, e.g. (?P<{name}>\\d+)") from None


def place(logs: list[Ingested], new: list[tuple[str, str, dict[str, str | None]]],
          factors: Sequence[str]) -> list[tuple[str, str, dict[str, str | None], int, int]]:
    """(source, path, fields, run, replicate) for new logs: a known design point keeps its run number, a new
    one takes the next; the replicate is the group's when given, else the next free one of its point."""
    runs: dict[tuple[Value, ...], int] = {}
    taken: dict[int, set[int]] = {}
    for x in logs:
        runs.setdefault(tuple(level(x.fields.get(f)) for f in factors), x.run)
        taken.setdefault(x.run, set()).add(x.replicate)
    owner = {(x.run, x.replicate): x.path for x in logs}
    placed = []
    for source, path, fields in new:
        point = tuple(level(fields.get(f)) for f in factors)
        run = _identifier("run", fields, path)
        if run is None:
            run = runs.get(point) or max([*runs.values(), *taken, 0]) + 1
        runs.setdefault(point, run)
        rep = _identifier("replicate", fields, path)
        if rep is None:
            rep = max(taken.get(run, {0})) + 1
        if (run, rep) in owner:
            raise IngestError(f"{path} and {owner[run, rep]} are both run {run} replicate {rep}: their --fields give "
                              "the same settings and replicate; capture what tells them apart (e.g. the file name) "
                              "as (?P<replicate>...), or leave replicate out to number them in path order")
        owner[run, rep] = path
        taken.setdefault(run, set()).add(rep)
        placed.append((source, path, fields, run, rep))
    return placed


def _copy(folder: CampaignDir, x: Ingested) -> str:
    """Copy a log (and its .err) to logs/<run>-<replicate>.out[.gz], atomically; the new ``log`` column."""
    suffix = ".out.gz" if x.path.endswith(".gz") else ".out"
    target = folder.logs / f"{x.key}{suffix}"
    pairs = [(x.source, target)]
    err = err_path_for(x.source)
    if err is not None:
        pairs.append((err, folder.logs / f"{x.key}{'.err.gz' if err.endswith('.gz') else '.err'}"))
    folder.logs.mkdir(parents=True, exist_ok=True)
    for src, dst in pairs:
        tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
        shutil.copy2(src, tmp)
        os.replace(tmp, dst)
    return str(target.relative_to(folder.path))


def rows_of(logs: Sequence[Ingested], names: Sequence[str]) -> list[dict[str, Value]]:
    """results.csv: run, replicate, each field typed by its column, then the outcome and the log."""
    kinds = {n: kind_of([x.fields.get(n) for x in logs]) for n in names}
    rows = []
    for x in sorted(logs, key=lambda x: (x.run, x.replicate)):
        row: dict[str, Value] = {"run": x.run, "replicate": x.replicate}
        row.update({n: typed(x.fields.get(n), kinds[n]) for n in names if n not in IDENTIFIERS})
        row.update(x.outcome)
        row["log"] = x.log
        rows.append(row)
    return rows


def epoch_rows(logs: Sequence[Ingested], names: Sequence[str]) -> list[dict[str, Value]]:
    """epochs.csv: one row per epoch of each log, with its run, replicate, fields and its log's status."""
    kinds = {n: kind_of([x.fields.get(n) for x in logs]) for n in names}
    rows = []
    for x in sorted(logs, key=lambda x: (x.run, x.replicate)):
        for e in x.epochs or ():
            row: dict[str, Value] = {"run": x.run, "replicate": x.replicate}
            row.update({n: typed(x.fields.get(n), kinds[n]) for n in names if n not in IDENTIFIERS})
            row.update(e)
            row.update(run_status=x.outcome["status"], log=x.log)
            rows.append(row)
    return rows


def _git_revision() -> str | None:
    from harness.campaign import _git_revision as revision  # one place asks git

    return revision()


def ingest(options: IngestOptions, say=lambda _: None) -> IngestResult:
    """Make (or bring up to date) the campaign folder ``options.out`` from the logs (see the module docstring)."""
    if options.expected_epochs is not None and options.expected_epochs < 1:
        raise IngestError(f"--expected-epochs must be >= 1, got {options.expected_epochs}")
    rx = options.pattern()
    factors = options.factor_names(rx)
    names = tuple(rx.groupindex)
    matched, unmatched = find(options, rx, say)
    folder = CampaignDir(options.out)
    created = not os.path.lexists(folder.path)
    try:
        return _ingest(options, folder, factors, names, matched, unmatched, say)
    except BaseException:
        if created:  # a refused first ingest leaves no folder behind (its lock, its store)
            shutil.rmtree(folder.path, ignore_errors=True)
        raise


def _vanished(logs: Mapping[str, Ingested], copy: bool, result: IngestResult, say) -> None:
    """Say which logs read before are gone: their rows are kept as read then; --copy cannot copy them."""
    for x in logs.values():
        if os.path.lexists(x.source):
            continue
        if copy and not x.log.startswith(CampaignDir.LOGS + "/"):
            say(f"error: {_shown(x.source)}: cannot copy it (--copy): the log is gone; its row (run {x.run} replicate "
                f"{x.replicate}) is kept as read before")
            result.unreadable.append(x.source)
        else:
            say(f"warning: {_shown(x.source)}: the log is gone; its row (run {x.run} replicate {x.replicate}) is kept "
                "as read before (ingest into a new --out to leave it out)")


def _ingest(options: IngestOptions, folder: CampaignDir, factors: tuple[str, ...], names: tuple[str, ...],
            matched: list[tuple[str, dict[str, str | None]]], unmatched: list[str], say) -> IngestResult:
    with folder.locked():
        store = ResultStore(folder)
        try:
            meta = store.meta()
            design = meta.get("design_sha256")
            if design is not None and meta.get("source") != SOURCE:
                raise CampaignError(f"{folder.path} holds a campaign run by this tool, not ingested logs: choose "
                                    "another --out")
            if meta.get("ingest_fields") not in (None, options.fields):
                raise CampaignError(f"{folder.path} was ingested with --fields {meta['ingest_fields']!r}: give the "
                                    "same --fields to add logs, or choose another --out")
            logs = {x[0]: Ingested.stored(*x) for x in store.ingested()}
            result = IngestResult(folder, [], factors, skipped=unmatched)
            todo: list[tuple[str, str, dict[str, str | None]]] = []
            changed: list[Ingested] = []
            for path, fields in matched:
                source = os.path.realpath(path)
                known = logs.get(source)
                if known is not None and (known.size, known.mtime_ns) == _stat(source) >= (0, 0) and (
                        not options.epochs or known.epochs is not None):
                    result.kept += 1
                    continue
                if known is not None:
                    changed.append(replace(known, path=path, fields=fields))
                else:
                    todo.append((source, path, fields))
            placed = [(x.source, x.path, x.fields, x.run, x.replicate) for x in changed]
            placed += place(list(logs.values()), todo, factors)
            fresh: list[Ingested] = []
            for i, (source, path, fields, run, rep) in enumerate(placed, start=1):
                planned = options.expected_epochs if options.expected_epochs is not None else _plan(fields, path)
                prior = logs.get(source)
                # a log read with its epochs before keeps them when it is read again (epochs.csv keeps its rows)
                with_epochs = options.epochs or (prior is not None and prior.epochs is not None)
                size, mtime_ns = _stat(source)
                outcome, epochs, error = read_log(path, planned, with_epochs)
                if error:
                    say(f"error: {_shown(error)}")
                    result.unreadable.append(path)
                x = Ingested(source, run, rep, size, mtime_ns, path, fields, outcome,
                             prior.log if prior is not None else source, epochs)
                if options.copy and not error:
                    x.log = _copy(folder, x)
                fresh.append(x)
                logs[source] = x
                if i % 100 == 0:
                    say(f"read {i} of {len(placed)} log(s)")
            result.new, result.reread = len(todo), len(changed)
            read_now = {x.source for x in fresh}  # a log that could not be read now is said above, not gone
            _vanished({s: x for s, x in logs.items() if s not in read_now}, options.copy, result, say)
            if options.copy:  # logs ingested before without --copy are copied now
                done = {x.source for x in fresh}
                for x in logs.values():
                    if (x.source not in done and not x.log.startswith(CampaignDir.LOGS + "/")
                            and os.path.lexists(x.source) and x.size >= 0):
                        x.log = _copy(folder, x)
                        fresh.append(x)
            store.record_ingested([(x.source, x.run, x.replicate, x.size, x.mtime_ns, x.record()) for x in fresh])
            result.logs = sorted(logs.values(), key=lambda x: (x.run, x.replicate))
            folder.write_rows(rows_of(result.logs, names))
            if any(x.epochs for x in result.logs):
                folder.write_rows(epoch_rows(result.logs, names), folder.epochs_csv)
            folder.write_manifest(Manifest(factors, RESPONSES, job=None, design=None, results="bigdl", source=SOURCE))
            sources = list(dict.fromkeys([*meta.get("ingest_paths", []),  # type: ignore[misc]
                                          *(os.path.realpath(p) for p in options.paths)]))
            store.set_meta({
                "source": SOURCE, "design_sha256": "ingest:" + hashlib.sha256(options.fields.encode()).hexdigest(),
                "ingest_fields": options.fields, "ingest_paths": sources, "ingest_copy": options.copy,
                "ingest_logs": len(result.logs), "factors": list(factors), "tool_revision": _git_revision(),
                "python": platform.python_version(), "host": socket.gethostname(),
                "created": meta.get("created", now()), "updated": now()})
        finally:
            store.close()
    return result


if __name__ == "__main__":
    from harness.cli.ingest import main
    sys.exit(run_cli(main))
