"""Generated inputs for the surfaces tests/inputs.py does not feed: MLflow tracking URIs and size caps, an ingested
campaign's results.csv as the export reads it, runtime files with special requirements and lock files, ``runtime
doctor`` and ``lock --out``, the ``sparkdl`` dispatcher, Spark 4 structured (JSON) log lines through logparse, and
``harness.ingest`` on study folders.

Every judge compares what came out with what went in, with an oracle written apart from the code it judges:

* a value accepted is the value given (a URI as the oracle normalises it, a size as ``float`` reads it, a
  results row's figures as the csv module and ``float`` read them, a runtime's name, Spark and description as
  tomllib reads them);
* a refusal is exit 2, one ``error:`` line naming the field, nothing echoed that must not be (a password, an
  escape code);
* a special file (a FIFO, a symlink loop, /dev/zero, a non-UTF-8 or over-long name) is refused, never waited on.
* a log ended by a JSON event reads as the same log ended by the event in log4j's layout (status, reason, kind);
* an ingested row holds the groups ``re.search`` finds in its log's path.

Generated values include integers of up to thousands of digits, non-UTF-8 (surrogate-escaped) text, control and
escape characters and names over 255 bytes. bench/fuzz.py runs thousands; tests/test_input_fuzz.py a sample.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import json
import math
import os
import random
import re
import shlex
import tomllib
from pathlib import Path
from typing import Callable, Sequence

from tests.inputs import Case, Kind, Outcome, fifo, logparse_main, write

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "pw-Zq7"

# ---------------------------------------------------------------- commands (in-process surfaces)


def uri_main(argv: Sequence[str] | None) -> int:
    """``--mlflow URI`` as every campaign command reads it: the checked URI, printed."""
    from sparkdl.options import mlflow_uri

    print(mlflow_uri((argv or [""])[0], {}))
    return 0


def export_uri_main(argv: Sequence[str] | None) -> int:
    """The URI an export of campaign ``argv[1]`` would write to (the form checked, a store path resolved)."""
    from sparkdl.tracking import tracking_uri

    print(tracking_uri((argv or ["", ""])[0], Path((argv or ["", ""])[1])))
    return 0


def artifact_mb_main(argv: Sequence[str] | None) -> int:
    """``python -m harness.mlflow``'s options as it parses them (nothing exported)."""
    from harness.mlflow import build_parser

    args = build_parser().parse_args(list(argv or []))
    print(repr(args.max_artifact_mb))
    return 0


def export_table_main(argv: Sequence[str] | None) -> int:
    """The records the export reads from an ingested campaign's results.csv, as JSON."""
    from harness.mlflow_export import read_campaign
    from sparkdl.campaign import CampaignDir

    records, _ = read_campaign(CampaignDir((argv or [""])[0]))
    print(json.dumps([{"key": r.key, "status": str(r.status), "wall_clock_s": r.wall_clock_s,
                       "accuracy": r.accuracy} for r in records]))
    return 0


def runtime_main(argv: Sequence[str] | None) -> int:
    from harness.cli.runtime import main

    return main(list(argv or []))


def dispatcher_main(argv: Sequence[str] | None) -> int:
    from sparkdl.__main__ import main

    return main(list(argv or []))


# ---------------------------------------------------------------- generators


def huge_int(rng: random.Random) -> str:
    """An integer of 1 to 5,000 digits (a sign sometimes)."""
    digits = rng.choice((1, 5, 6, 20, 400, 1000, 4301, 5000))
    return rng.choice(("", "", "-", "+")) + str(rng.randint(1, 9)) + "".join(rng.choice("0123456789")
                                                                          for _ in range(digits - 1))


def nasty_text(rng: random.Random) -> str:
    return rng.choice(("\x1b[31m", "\n", "\r", "\x00", "\udcff", "\u202e", "\x07", " ", "é", "%00", "..", "/",
                       "\\", "@", "#", "?", ":", "[", "]", "x" * 300, "\t"))


HOSTS = ("127.0.0.1", "localhost", "mlflow.example.org", "[::1]", "[::1", "::1", "[zz]", "", "a_b", "-x", "ho st",
         "h\x1b[2Jx", "é.example", "999.1.1.1", "x" * 300)
SCHEMES = ("http", "https", "HTTP", "sqlite", "file", "ftp", "postgresql", "databricks", "", "http:", "mlflow-artifacts")


def gen_uri(rng: random.Random) -> str:
    op = rng.randrange(6)
    if op == 0:  # a server
        host = rng.choice(HOSTS)
        port = rng.choice(("", ":5000", ":0", ":65535", ":65536", ":-1", ":x", ":" + huge_int(rng), ":"))
        user = rng.choice(("", "", "", f"alice:{PASSWORD}@", f"{PASSWORD}@", "@"))
        path = rng.choice(("", "/", "/prefix", "/a b", "/?q=1", "#f", "/" + nasty_text(rng)))
        uri = f"{rng.choice(SCHEMES)}://{user}{host}{port}{path}"
    elif op == 1:  # a SQLite store
        uri = "sqlite:" + rng.choice(("//", "///", "////", "/", "")) + rng.choice(
            ("mlflow.db", "sub/m.db", ":memory:", "", "tmp/", "a?mode=ro", "x" * 300 + ".db", huge_int(rng),
             nasty_text(rng) + ".db", "m.db#x", "host/m.db"))
    elif op == 2:  # a file store
        uri = "file:" + rng.choice(("//", "///", "/", "", "//localhost/", "//other/")) + rng.choice(
            ("mlruns", "tmp/store", "", "x" * 300, nasty_text(rng)))
    elif op == 3:  # a bare host:port or path
        uri = rng.choice(("127.0.0.1", "localhost", "h", "[::1]")) + ":" + rng.choice(("5000", huge_int(rng), ""))
    elif op == 4:  # anything
        uri = "".join(rng.choice("htps:/[]@:.0159ax?#% \x1b\n") for _ in range(rng.randint(0, 40)))
    else:
        uri = rng.choice(("http://127.0.0.1:5000", "https://mlflow.example.org/prefix/", "sqlite:///mlflow.db",
                          "file:///tmp/mlruns", "http://[::1]:5000"))
    if rng.random() < 0.1:
        uri = rng.choice((" ", "\t", "")) + uri + rng.choice((" ", "\n", ""))
    return uri


# ---------------------------------------------------------------- the oracle of tracking URIs (written apart)

_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}", re.ASCII)


def expected_uri(text: str, base: Path | None) -> str | None:
    """What an accepted URI must come out as, or None when it must be refused (the module doc of sparkdl.tracking)."""
    uri = text.strip()
    if not uri or len(uri) > 2048 or any(ord(c) <= 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF or c == "\\"
                                         for c in uri):
        return None
    m = re.fullmatch(r"(?i:(https?))://([^/?#]*)([^?#]*)", uri)
    if m:
        authority, path = m.group(2), m.group(3)
        if "@" in authority:
            return None
        hp = re.fullmatch(r"(\[[^\]]*\]|[^:\[\]]*)(?::(\d*))?", authority)
        if not hp:
            return None
        host, port = hp.group(1), hp.group(2)
        if host.startswith("["):
            try:
                ipaddress.IPv6Address(host[1:-1])
            except ValueError:
                return None
        elif not _HOST_NAME.fullmatch(host):
            return None
        if port is not None and port != "" and not (len(port) <= 5 and 1 <= int(port) <= 65535):
            return None
        if port == "":
            pass  # "host:" is host with the scheme's port
        return uri.rstrip("/")
    if uri.startswith("sqlite:"):
        m = re.fullmatch(r"sqlite:///([^?#]*)", uri)
        if not m or not m.group(1) or m.group(1) in (":memory:",) or m.group(1).endswith("/"):
            return None
        path = m.group(1)
        if any(len(part.encode()) > 255 for part in Path(path).parts) or len(path) > 4096:
            return None
        if path.startswith("/"):
            return uri
        return uri if base is None else f"sqlite:///{base.absolute() / path}"
    if uri.startswith("file:"):
        m = re.fullmatch(r"file:(?://(?:localhost)?(?=/))?([^?#]*)", uri)
        if not m or not m.group(1) or m.group(1).startswith("//"):
            return None
        path = m.group(1)
        if any(len(part.encode()) > 255 for part in Path(path).parts) or len(path) > 4096:
            return None
        if path.startswith("/"):
            return uri if uri.startswith("file:///") else f"file://{path}"
        return uri if base is None else f"file://{base.absolute() / path}"
    return None


def _refusal(o: Outcome, word: str) -> str | None:
    """None when ``o`` is a one-line input error naming ``word`` that echoes no password and no escape code."""
    if not o.input_error:
        return f"expected a refusal: exit {o.code}, {o.err.strip()[-200:]!r}"
    if word.lower() not in o.err.lower():
        return f"the error does not name {word!r}: {o.err.strip()[-200:]!r}"
    if PASSWORD in o.err + o.out:
        return "the password is echoed"
    if "\x1b" in o.err or len([line for line in o.err.splitlines() if line.strip()]) > 1:
        return f"the error is not one plain line: {o.err[:200]!r}"
    return None


def _uri_case(d: Path, f: Path) -> Case:
    uri = f.read_bytes().decode("utf-8", "surrogateescape")
    base = d / "camp"
    use_base = len(uri) % 2 == 0  # half through the option (no campaign yet), half through the export (resolved)
    want = expected_uri(uri, base if use_base else None)

    def check(o: Outcome) -> str | None:
        if want is None:
            return _refusal(o, "tracking URI") if uri.strip() else (
                None if o.input_error else f"an empty URI accepted: {o.out!r}")
        if o.code != 0:
            return f"{uri!r} refused: {o.err.strip()[-200:]!r}"
        return None if o.out.rstrip("\n") == want else f"{uri!r} accepted as {o.out.strip()!r}, not {want!r}"
    main = export_uri_main if use_base else uri_main
    return Case("mlflow-uri", main, [uri, str(base)] if use_base else [uri], check=check)


def _gen_size(rng: random.Random) -> str:
    return rng.choice(("inf", "nan", "-inf", "0", "-1", "1e400", "1e-400", "20", "0.5", "1000000", "1000000.1",
                       "1e6", "0x10", "1_0", "", " 5", "\u0665", huge_int(rng), "." + huge_int(rng), huge_int(rng) + ".5"))


def _size_case(d: Path, f: Path) -> Case:
    size = f.read_bytes().decode("utf-8", "surrogateescape")

    def check(o: Outcome) -> str | None:
        try:
            value = float(size) if len(size) < 100 else math.nan
        except ValueError:
            value = math.nan
        good = math.isfinite(value) and 0 < value <= 1e6
        if not good:
            return _argparse_refusal(o, "--max-artifact-mb")
        if o.code != 0:
            return f"{size!r} refused: {o.err.strip()[-200:]!r}"
        return None if float(o.out.strip()) == value else f"{size!r} read as {o.out.strip()}"
    return Case("mlflow-size", artifact_mb_main, [str(d), f"--max-artifact-mb={size}"], check=check)


def _argparse_refusal(o: Outcome, option: str) -> str | None:
    if o.code != 2 or o.traceback or option not in o.err:
        return f"expected exit 2 naming {option}: exit {o.code}, {o.err.strip()[-200:]!r}"
    return None


# ---------------------------------------------------------------- an ingested campaign's results.csv

RESULTS_HEADER = ["run", "replicate", "nodes", "executors", "executor_cores", "model", "status", "wall_clock_s",
                  "accuracy", "attempts"]


def _results_good() -> str:
    rows = [",".join(RESULTS_HEADER)]
    for i in range(1, 6):
        rows.append(f"{i},1,1,1,1,lenet,{'ok' if i % 2 else 'failed'},{10 + i * 1.5},{0.8 + i / 100},1")
    return "\n".join(rows) + "\n"


def _finite_or_empty(text: str) -> tuple[bool, float | None]:
    if text.strip() == "":
        return True, None
    try:
        v = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        return False, None
    return math.isfinite(v), v


def _table_oracle(data: bytes) -> tuple[list[dict[str, object]] | None, str]:
    """The records a good table holds (key, status, figures), or None and the word its refusal must name."""
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError:
        return None, "UTF-8"
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error:
        return None, "results"
    rows = [r for r in rows if r and not (len(r) == 1 and not r[0].strip(" \t"))]
    if not rows:
        return None, "results"
    header, body = [c.strip(" \t") for c in rows[0]], rows[1:]
    if any(len(c) > 1 << 16 for r in rows for c in r) or len(set(header)) != len(header) or "" in header:
        return None, "results"
    if any(c not in header for c in ("run", "replicate", "status", "nodes", "executors", "executor_cores")):
        return None, "results"
    out, seen = [], set()
    for r in body:
        if len(r) != len(header):
            return None, "results"
        row = dict(zip(header, r))
        for c in ("run", "replicate", "nodes", "executors", "executor_cores", "attempts", "exit_code",
                  "epochs_completed", "batch_size_used"):
            if c in row and (row[c] != "" or c in ("run", "replicate", "nodes", "executors", "executor_cores")):
                if not re.fullmatch(r"\s*[+-]?[0-9]{1,12}\s*", row[c]):
                    return None, "results"
        figures = {}
        for c in ("wall_clock_s", "accuracy", "learning_rate_used", "elapsed_s"):
            ok, v = _finite_or_empty(row.get(c, ""))
            if not ok:
                return None, "results"
            figures[c] = v
        if row["status"] not in ("ok", "failed", "incomplete", "pruned"):
            return None, "results"
        key = f"{int(row['run'])}-{int(row['replicate'])}"
        if key in seen:
            return None, "results"
        seen.add(key)
        out.append({"key": key, "status": row["status"], "wall_clock_s": figures["wall_clock_s"],
                    "accuracy": figures["accuracy"]})
    return out, ""


def _export_table_case(d: Path, f: Path) -> Case:
    want, word = _table_oracle(f.read_bytes())

    def check(o: Outcome) -> str | None:
        if want is None:
            return _refusal(o, word) if o.code != 0 else f"accepted a table that must be refused: {o.out[:200]!r}"
        if o.code != 0:
            # the model's columns may still refuse a row (e.g. a design value RunSpec cannot take): a named refusal
            return _refusal(o, "results")
        got = json.loads(o.out)
        return None if got == want else f"read {got[:3]} for {want[:3]}"
    return Case("mlflow-results", export_table_main, [str(f.parent)], check=check)


# ---------------------------------------------------------------- runtime files with special requirements and locks


def _special_file(rng: random.Random, d: Path) -> tuple[str, str]:
    """A file name for ``requirements``/``lock`` and the word its refusal names (empty: a good file)."""
    op = rng.randrange(7)
    if op == 0:
        os.mkfifo(d / "fifo")
        return "fifo", "FIFO"
    if op == 1:
        (d / "zero").symlink_to("/dev/zero")
        return "zero", "FIFO, socket or device"
    if op == 2:
        (d / "l1").symlink_to(d / "l2")
        (d / "l2").symlink_to(d / "l1")
        return "l1", "symbolic link loop"
    if op == 3:
        name = "x" * rng.choice((256, 300, 5000))
        return name, "long"
    if op == 4:  # a name that is not UTF-8: TOML cannot hold it, so the runtime file itself is refused
        name = "r\udcff\udcfe.txt"
        write(d / name, "pyspark==4.3.0\n")
        return name, "UTF-8"
    if op == 5:
        (d / "dir").mkdir()
        return "dir", "a folder"
    write(d / "req.txt", "pyspark==4.3.0\nnumpy==2.4.6\n")
    return "req.txt", ""


def _runtime_special_case(d: Path, f: Path) -> Case:
    rng = random.Random(f.read_bytes())
    which = rng.choice(("requirements", "lock"))
    name, word = _special_file(rng, d)
    req = f'"{name}"' if which == "requirements" else '["pyspark==4.3.0"]'
    lock = f'lock = "{name}"\n' if which == "lock" else ""
    toml = f'[runtime]\nname = "fz"\nspark = "4.3.0"\njava = [17]\nrequirements = {req}\n{lock}'
    path = write(d / "rt.toml", toml.encode("utf-8", "surrogateescape"))

    def check(o: Outcome) -> str | None:
        if word:
            return _refusal(o, word)
        if o.code not in (0, 4) or o.traceback:  # not prepared: 4 with the prepare line
            return f"{which} good file: exit {o.code}, {o.err.strip()[-200:]!r}"
        return _prepare_line_resolves(o, path)
    return Case("runtime-special", runtime_main, ["doctor", str(path)], check=check)


def _prepare_line_resolves(o: Outcome, path: Path) -> str | None:
    """``doctor``'s ``prepare X`` names what prepare resolves to this runtime file."""
    from cluster import runtime as runtimes

    if "runtime prepare " not in o.out:
        return None if "ok" in o.out else f"no prepare line and no ok: {o.out[-200:]!r}"
    target = o.out.split("runtime prepare ", 1)[1].split("\n")[0].split(" (or")[0].strip()
    try:
        (word,) = shlex.split(target)
        got = runtimes.resolve(word).source
    except Exception as e:  # noqa: BLE001 - the suggestion must resolve: any failure is the finding
        return f"doctor suggests prepare {target!r}, which does not resolve: {e}"
    return None if got == path.resolve() else f"doctor suggests {target!r} for {path}"


def _runtime_values_case(d: Path, f: Path) -> Case:
    """A runtime file's values as ``list --format json`` shows them are tomllib's."""
    data = f.read_bytes()

    def check(o: Outcome) -> str | None:
        if o.code == 2 and o.input_error:
            return None if "\x1b" not in o.err else "an escape code echoed"
        if o.code != 0:
            return f"exit {o.code}: {o.err.strip()[-200:]!r}"
        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            return f"a file tomllib refuses was listed ({e})"
        row = json.loads(o.out)[-1]
        rt = doc["runtime"]
        want = {"name": rt["name"], "spark_version": rt["spark"], "description": rt.get("description", "")}
        got = {k: row[k] for k in want}
        if got != want:
            return f"listed {got} for {want}"
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in row["description"]):
            return f"a control character in a listed description: {row['description']!r}"
        return None
    return Case("runtime-values", runtime_main, ["list", "--format", "json", str(f)], check=check)


RUNTIME_GOOD = ('[runtime]\nname = "fz"\ndescription = "Spark 4 for fuzzing"\nspark = "4.3.0"\njava = [21, 17]\n'
                'requirements = ["pyspark==4.3.0", "numpy==2.4.6"]\n[jvm]\nclass_path = ["pyspark/jars/*.jar"]\n'
                'natives_jar = "x/natives.jar"\n')
RUNTIME_NASTY = ("/abs/*.jar", "../x/*.jar", "a\\nb", "\\u001b[31m", "\\u0007", "\\r", "x" * 300, huge_int, "",
                 "\\u202e", "a\\u0000b", "/", "..")


def mutate_runtime(rng: random.Random, text: str) -> bytes:
    """The good runtime with a string value replaced by a nasty one (an escape written as TOML escapes it)."""
    strings = list(re.finditer(r'"([^"\n]*)"', text))
    for _ in range(rng.randint(1, 2)):
        strings = list(re.finditer(r'"([^"\n]*)"', text))
        s = rng.choice(strings)
        value = rng.choice(RUNTIME_NASTY)
        value = value(rng) if callable(value) else value
        text = text[:s.start(1)] + value + text[s.end(1):]
    return text.encode()


def _lock_out_case(d: Path, f: Path) -> Case:
    rng = random.Random(f.read_bytes())
    op = rng.randrange(5)
    if op == 0:
        out, word = d / "missing" / "x.lock", "no such folder"
    elif op == 1:
        os.mkfifo(d / "fifo.lock")
        out, word = d / "fifo.lock", "not a regular file"
    elif op == 2:
        out, word = d / ("x" * rng.choice((251, 300, 4000))), "250 bytes"
    elif op == 3:
        (d / "adir").mkdir()
        out, word = d / "adir", "not a regular file"
    else:
        out, word = d / ("nul\x00.lock"), "NUL"
    toml = write(d / "rt.toml", '[runtime]\nname = "fz"\nspark = "4.3.0"\njava = [17]\nrequirements = ["pyspark==4.3.0"]\n')

    def check(o: Outcome) -> str | None:
        problem = _refusal(o, word)
        return problem or (None if not (d / "missing").exists() else "lock made the missing folder")
    return Case("runtime-lock-out", runtime_main, ["lock", str(toml), "--out", str(out)], check=check)


# ---------------------------------------------------------------- the dispatcher

SAFE_COMMANDS = ("runtime", "mlflow", "logparse", "anova", "design", "report", "submit")


def _dispatcher_case(d: Path, f: Path) -> Case:
    from sparkdl.commands import COMMANDS

    rng = random.Random(f.read_bytes())
    names = [c.name for c in COMMANDS]
    op = rng.randrange(4)
    if op == 0:  # a name that is no command
        word = rng.choice([n[:-1] for n in names] + [n.upper() for n in names] + [huge_int(rng), nasty_text(rng),
                                                                                  "x" * 5000, "--bogus", "-"])
        argv = [word, "--help"]

        def check(o: Outcome) -> str | None:
            if word in names:
                return None
            problem = _refusal(o, "no command")
            if problem is None and len(o.err) > 400:
                return f"the refusal echoes {len(o.err)} characters"
            return problem
    elif op == 1:  # a command's own help
        name = rng.choice([n for n in names if n in SAFE_COMMANDS] or names)
        argv = [name, "--help"]

        def check(o: Outcome) -> str | None:
            return None if o.code == 0 and "usage" in o.out.lower() else f"exit {o.code}: {o.err[-200:]!r}"
    elif op == 2:  # an option no command has
        name = rng.choice([n for n in names if n in SAFE_COMMANDS] or names)
        bogus = "--" + rng.choice(("bogus", "x" * 300, "zz-" + huge_int(rng)[:50]))
        argv = [name, bogus]

        def check(o: Outcome) -> str | None:
            if o.code != 2 or o.traceback:
                return f"exit {o.code}: {o.err.strip()[-200:]!r}"
            return None if bogus[:60] in o.err or "unrecognized" in o.err or "required" in o.err else \
                f"the refusal names neither the option nor what is missing: {o.err.strip()[-200:]!r}"
    else:  # the mlflow export with a generated URI, through the dispatcher
        uri = gen_uri(rng)
        want = expected_uri(uri, None)
        argv = ["mlflow", str(d / "nocampaign"), "--tracking-uri", uri]

        def check(o: Outcome) -> str | None:
            if want is None:
                return _refusal(o, "tracking URI") if uri.strip() else _refusal(o, "tracking URI")
            return _refusal(o, "no such campaign folder")  # a good URI: then the folder is checked
    return Case("dispatcher", dispatcher_main, argv, check=check)


# ---------------------------------------------------------------- Spark 4 structured (JSON) log lines

SPARK4_JSON = ROOT / "tests" / "fixtures" / "spark4json"
LEVELS = ("INFO", "WARN", "ERROR")
MESSAGES = ("Lost executor 3 on 10.0.0.7: Command exited with code 137", "Executor added", "Job 0 finished",
            "java.lang.OutOfMemoryError: Java heap space", "Optimization Done. Total 2 epochs finished in 9.1s",
            "Top1Accuracy is Accuracy(correct: 50, count: 100, accuracy: 0.5)", "a\nb", "\x1b[2J", "", "\udcff",
            "x" * 5000, '{"ts": "nested"}', "Epoch 3 started")


def _spark4_records() -> list[dict[str, object]]:
    """Every JSON event of the real Spark 4.3 fixtures (a clean end, a lost executor, an OOM)."""
    out = []
    for name in ("clean", "lost", "oom"):
        for line in (SPARK4_JSON / f"{name}.err").read_bytes().splitlines():
            if line.startswith(b'{"ts":'):
                out.append(json.loads(line))
    return out


def _finished_log() -> bytes:
    """A real finished BigDL log (2 epochs) without the plan that says how many epochs it was asked for."""
    import gzip

    raw = gzip.decompress((ROOT / "tests" / "fixtures" / "logs" / "lenet-4000-2ep.out.gz").read_bytes())
    return re.sub(rb"epochs=(\d)", rb"n_ep=\1", raw)


def _gen_json_event(rng: random.Random, good: str) -> bytes:
    """A real Spark 4 JSON event, its level, message or exception sometimes replaced; which log it ends and
    whether its line is cut mid-write are drawn from the same generator (the case reads them back)."""
    records = _spark4_records()
    rec = dict(rng.choice(records))
    if rng.random() < 0.3:
        rec["level"] = rng.choice(LEVELS)
    if rng.random() < 0.3:
        rec["msg"] = rng.choice(MESSAGES + tuple(str(r["msg"]) for r in rng.sample(records, 3)))
    if rng.random() < 0.2:
        with_exc = [r for r in records if r.get("exception")]
        rec["exception"] = rng.choice(with_exc)["exception"] if rng.random() < 0.7 else None
        if rec["exception"] is None:
            del rec["exception"]
    return json.dumps({"record": rec, "base": rng.choice(("cut", "cut", "whole")), "cut": rng.random() < 0.15,
                       "seed": rng.getrandbits(32)}).encode()


def _layout(rec: dict[str, object]) -> bytes:
    """The event as Spark writes it without structured logging (``yy/MM/dd HH:mm:ss LEVEL Logger: message``, the
    exception's class, message and frames below), typed from the record, not by the converter under test."""
    ts = str(rec["ts"])
    line = f"{ts[2:4]}/{ts[5:7]}/{ts[8:10]} {ts[11:19]} {rec['level']} {rec['logger']}: {rec['msg']}"
    exc = rec.get("exception")
    if isinstance(exc, dict):
        line += f"\n{exc['class']}: {exc['msg']}" + "".join(
            f"\n\tat {f['class']}.{f['method']}({f.get('file')}:{f.get('line')})" for f in exc.get("stacktrace", []))
    return line.encode("utf-8", "surrogateescape") + b"\n"


def _json_log_case(d: Path, f: Path) -> Case:
    """logparse on a log ended by one JSON event and on the same log ended by the event in log4j's layout: the same
    status, reason and failure kind. A message of several lines: the same status and kind as the layout line with
    them joined (in the layout its second line would read as the program's). A line cut mid-write: the status of
    the log without it, or of the log with the whole event (what is left may still say OutOfMemoryError, or that
    Spark stopped)."""
    spec = json.loads(f.read_bytes())
    rec, raw = spec["record"], _finished_log()
    base = raw[:raw.index(b"\n", raw.rfind(b"Top1Accuracy is Accuracy(")) + 1] if spec["base"] == "cut" else raw
    line = json.dumps(rec, separators=(",", ":")).encode("utf-8", "surrogateescape")
    if spec["cut"]:
        line = line[:random.Random(spec["seed"]).randrange(1, len(line))]
    paths = {"json": write(d / "a-json.out", base + line + (b"" if spec["cut"] else b"\n")),
             "twin": write(d / "b-layout.out", base + _layout(
                 {**rec, "msg": " ".join(str(rec.get("msg")).splitlines())}))}
    if spec["cut"]:
        paths["bare"] = write(d / "c-bare.out", base)
    several = len(str(rec.get("msg")).splitlines()) > 1

    def check(o: Outcome) -> str | None:
        if o.code not in (0, 3):
            return f"exit {o.code}: {o.err.strip()[-200:]!r}"
        try:
            rows = {Path(r["path"]).name: r for r in json.loads(o.out)}
            got = {k: (rows[p.name]["status"], rows[p.name]["reason"].replace("\ufffd", "?"),  # a bad character
                       rows[p.name].get("failure_kind")) for k, p in paths.items()}
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            return f"no row per log ({e!r}): {o.out[:200]!r}"
        if spec["cut"]:
            if got["json"][0] not in (got["twin"][0], got["bare"][0]):
                return (f"a JSON line cut mid-write reads as {got['json'][0]}; the log without it is "
                        f"{got['bare'][0]}, with the whole event in the layout {got['twin'][0]}")
            return None
        if several:
            got = {k: (v[0], v[2]) for k, v in got.items()}
        if got["json"] != got["twin"]:
            what = "the log without the cut line" if spec["cut"] else "the same event in log4j's layout"
            return f"a JSON {rec.get('level')} {str(rec.get('msg'))[:60]!r} reads as {got['json']}, {what} as {got['twin']}"
        return None
    return Case("spark4-json", logparse_main, [*(str(p) for p in paths.values()), "--format", "json"],
                check=check)


# ---------------------------------------------------------------- ingest: a study folder of logs named by settings

INGEST_LOG = ROOT / "tests" / "fixtures" / "logs" / "dllib-print-after-training.out.gz"
OWNED_NAMES = ("epoch", "run_status", "iterations", "cost", "status", "wall_clock_s", "accuracy", "reason", "log")


def _gen_ingest(rng: random.Random, good: str) -> bytes:
    """A study: 2 or 3 logs in folders named ``exp<replicate>_<learning_rate>_<batch_size>`` (values of up to
    thousands of digits, non-finite, empty, non-ASCII), a regex whose groups may be names other stages own, and
    one damage: a dangling or looping ``*.out`` link, a FIFO log, a folder name that is not UTF-8, a catastrophic
    regex, or a ``--factors`` value."""
    def value(pool: tuple[object, ...]) -> str:
        v = rng.choice(pool)
        return v(rng) if callable(v) else str(v)

    points = [[value(("1", "2", "3", "0", "007", "12345678901234567890", huge_int)),
               value(("0.1", "0.10", "1e-3", "nan", "inf", "1e400", "x", "", "é", "-0", huge_int)),
               value(("64", "128", "12345678901234567890", huge_int))] for _ in range(rng.randint(2, 3))]
    names = ["replicate", "learning_rate", "batch_size"]
    if rng.random() < 0.3:
        names[rng.randrange(3)] = rng.choice(OWNED_NAMES + ("run",))
    return json.dumps({"points": points, "names": names, "damage": rng.choice(
        ("none", "none", "dangling", "loop", "fifo", "not-utf8", "catastrophic", "factors")),
        "factors": rng.choice(("--", "", "zz", "learning_rate", names[1], ",")), "epochs": rng.random() < 0.3,
        "seed": rng.getrandbits(16)}).encode()


def _ingest_case(d: Path, f: Path) -> Case:
    """``harness.ingest`` on the study: refused in one line naming the thing (leaving no campaign files behind),
    or every log's row holding its path's groups as ``re.search`` reads them (a number by value, a whole number
    past 18 digits only as written, never rounded), an unreadable log's row failed."""
    spec = json.loads(f.read_bytes())
    study, out = d / "study", d / "out"
    names, damage = spec["names"], spec["damage"]
    fields = "exp" + "_".join(f"(?P<{n}>[^_/]*)" for n in names) + "/"
    logs = []
    for point in spec["points"]:
        folder = study / ("exp" + "_".join(point))
        if len(folder.name.encode()) > 255 or (folder / "x.out.gz").exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        logs.append(folder / "x.out.gz")
        logs[-1].write_bytes(INGEST_LOG.read_bytes())
    study.mkdir(parents=True, exist_ok=True)
    unreadable = None
    if damage == "dangling":
        unreadable = study / "exp1_0.1_64" / "dead.out"
        unreadable.parent.mkdir(exist_ok=True)
        unreadable.symlink_to(study / "nowhere.out")
    elif damage == "loop":
        unreadable = study / "exp2_0.1_64" / "l1.out"
        unreadable.parent.mkdir(exist_ok=True)
        unreadable.symlink_to(unreadable.with_name("l2.out"))
        unreadable.with_name("l2.out").symlink_to(unreadable)
    elif damage == "fifo":
        unreadable = fifo(study / "exp3_0.1_64" / "f.out")
    elif damage == "not-utf8":
        odd = study / "exp1_\udcff\udcfe_64"
        odd.mkdir(exist_ok=True)
        logs.append(odd / "x.out.gz")
        logs[-1].write_bytes(INGEST_LOG.read_bytes())
    elif damage == "catastrophic":
        fields = "(?P<x>(a+)+)b"
        slow = study / ("a" * 60)
        slow.mkdir(exist_ok=True)
        logs = [slow / "x.out.gz"]
        logs[0].write_bytes(INGEST_LOG.read_bytes())
    argv = [str(study), "--fields", fields, "--out", str(out)]
    if damage == "factors":
        argv.append(f"--factors={spec['factors']}")
    if spec["epochs"]:
        argv.append("--per-epoch")

    def same(given: str, cell: str) -> bool:
        from decimal import Decimal, InvalidOperation
        if given == cell:
            return True
        try:
            return Decimal(given) == Decimal(cell) and Decimal(given).is_finite()
        except InvalidOperation:
            return False

    def check(o: Outcome) -> str | None:
        results = out / "results.csv"
        if o.input_error and not results.exists():
            left = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
            return f"a refused ingest left {left} in its new folder" if left else None
        if damage == "catastrophic":
            return None if o.input_error and "aaaa" in o.err else (
                f"a regex with catastrophic backtracking not refused naming the path: exit {o.code}, {o.err[-200:]!r}")
        if not (o.code in (0, 3) or o.input_error):
            return f"exit {o.code}: {o.err.strip()[-200:]!r}"
        try:
            rows = list(csv.DictReader(io.StringIO(results.read_text(encoding="utf-8"), newline="")))
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            return f"exit {o.code} and no readable results.csv ({e})"
        by_log = {r.get("log", ""): r for r in rows}
        for log in logs:
            path = str(log)
            row = by_log.get(path) or by_log.get(path.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
            if row is None:
                if damage == "not-utf8" and log.parent.name.startswith("exp1_\udcff"):
                    continue  # a name that is not UTF-8 may be refused or kept escaped: its groups are below
                return f"no row for {path!r} (rows for {sorted(by_log)[:3]})"
            m = re.search(fields, path)
            if m is None:
                return f"{path!r} does not match but has a row"
            for name, given in m.groupdict().items():
                cell = row.get(name)
                if cell is None:
                    return f"group {name!r} is not a column"
                digits = given.strip().lstrip("+-").lstrip("0")
                if given.strip().lstrip("+-").isdigit() and len(digits) > 18 and cell != given:
                    return f"group {name!r}: a whole number of {len(digits)} digits accepted as {cell[:30]!r}"
                if not same(given, cell):
                    return f"group {name!r}: {given[:40]!r} in the path, {cell[:40]!r} in results.csv"
        if unreadable is not None and str(unreadable) in by_log and by_log[str(unreadable)]["status"] != "failed":
            return f"the unreadable {unreadable.name} has status {by_log[str(unreadable)]['status']!r}"
        return None
    return Case("ingest", ingest_main, argv, check=check)


def ingest_main(argv: Sequence[str] | None) -> int:
    from harness.cli.ingest import main

    return main(list(argv or []))


KINDS: tuple[Kind, ...] = (
    Kind("mlflow-uri", lambda: "http://127.0.0.1:5000", _uri_case, "uri.txt"),
    Kind("mlflow-size", lambda: "20", _size_case, "size.txt"),
    Kind("mlflow-results", _results_good, _export_table_case, "camp/results.csv"),
    Kind("runtime-special", lambda: "", _runtime_special_case, "seed.bin"),
    Kind("runtime-values", lambda: RUNTIME_GOOD, _runtime_values_case, "rt.toml"),
    Kind("runtime-lock-out", lambda: "", _lock_out_case, "seed.bin"),
    Kind("dispatcher", lambda: "", _dispatcher_case, "seed.bin"),
    Kind("spark4-json", lambda: "", _json_log_case, "event.json"),
    Kind("ingest", lambda: "", _ingest_case, "study.json"),
)

#: How each kind's input is generated (the file :func:`generated_case` writes).
GENERATORS: dict[str, Callable[[random.Random, str], bytes]] = {
    "mlflow-uri": lambda rng, good: gen_uri(rng).encode("utf-8", "surrogateescape"),
    "mlflow-size": lambda rng, good: _gen_size(rng).encode("utf-8", "surrogateescape"),
    "runtime-values": mutate_runtime,
    "runtime-special": lambda rng, good: rng.getrandbits(64).to_bytes(8, "big"),
    "runtime-lock-out": lambda rng, good: rng.getrandbits(64).to_bytes(8, "big"),
    "dispatcher": lambda rng, good: rng.getrandbits(64).to_bytes(8, "big"),
    "spark4-json": _gen_json_event,
    "ingest": _gen_ingest,
}


def generated_case(kind: Kind, folder: Path, rng: random.Random) -> Case:
    """One generated input of ``kind`` in ``folder``."""
    from tests.inputs import mutate

    good = kind.good()
    if kind.name in GENERATORS:
        data = GENERATORS[kind.name](rng, good)
    else:
        data = good.encode() if rng.random() < 0.05 else _mutate_table(rng, good, mutate)
    path = write(folder / kind.filename, data)
    case = kind.case(folder, path)
    case.name = kind.name
    return case


def _mutate_table(rng: random.Random, good: str, mutate: Callable[[random.Random, str], bytes]) -> bytes:
    """A results table damaged as tests/inputs.py damages files, or one cell replaced by a huge or special value."""
    if rng.random() < 0.5:
        return mutate(rng, good)
    lines = good.split("\n")
    i = rng.randrange(1, len(lines) - 1)
    cells = lines[i].split(",")
    j = rng.randrange(len(cells))
    cells[j] = rng.choice((huge_int(rng), "nan", "inf", "-inf", "1e309", "\udcff", "9" * (128 << 10), "", " 1",
                           "ok", lines[1].split(",")[0]))
    lines[i] = ",".join(cells)
    if rng.random() < 0.2:
        lines.insert(i, lines[i])  # a duplicated run key
    return "\n".join(lines).encode("utf-8", "surrogateescape")


# ---------------------------------------------------------------- one case in its own process


#: What the surfaces import, loaded once before cases are forked (an import cut short by a timeout would leave a
#: half-made module behind for every later case; a forked case inherits them loaded).
WARM = ("sparkdl.__main__", "sparkdl.options", "sparkdl.tracking", "harness.mlflow", "harness.mlflow_export",
        "harness.cli.runtime", "harness.submit", "harness.design.__main__", "models.anova.cli", "report.cli",
        "logparse.cli", "harness.cli.ingest", "optimize.cli.pareto", "models.rsm.cli", "models.desirability.cli", "optimize.search.__main__")


def warm_up() -> None:
    import importlib

    for name in WARM:
        importlib.import_module(name)


def run_forked(main: Callable[[Sequence[str] | None], int], argv: Sequence[str], timeout: float = 30) -> Outcome:
    """:func:`tests.inputs.run_main` in a forked child: a hang (even one in C code no signal interrupts) ends
    with the child, killed at ``timeout``; nothing it imported or changed stays in this process."""
    import pickle
    import select
    import signal as signals
    import time
    from tests.inputs import run_main

    read, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send the outcome, leave without cleanup handlers
        os.close(read)
        code = 0
        try:
            outcome = run_main(main, argv, timeout=timeout * 2)
            data = pickle.dumps((outcome.code, outcome.out[-20000:], outcome.err[-20000:], outcome.hung))
            with os.fdopen(write_end, "wb") as f:
                f.write(data)
        except BaseException:  # noqa: BLE001 - the child reports nothing: the parent calls it a traceback
            code = 70
        os._exit(code)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                os.kill(pid, signals.SIGKILL)
                os.waitpid(pid, 0)
                return Outcome(-1, "", "", hung=True)
            chunk = os.read(read, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return Outcome(1, "", f"internal error: the case's process ended with status {status} and no outcome")
    code, out, err, hung = pickle.loads(b"".join(chunks))
    return Outcome(code, out, err, hung)
