"""The command line's one vocabulary: every option two commands share is defined here once, with its
type, its metavar and its help, and composed by each command (one meaning and one type per flag).

* ``CAMPAIGN``: the positional folder (or results CSV) of every command that reads one;
* ``--job NAME|FILE``: a built-in job or a job description, the same default everywhere;
* ``--out PATH``: what the command writes (its help says which kind);
* ``--format {text,json,csv}``: text by default;
* ``--parallelism SPEC`` (the scale of the scaling models), ``--work COLUMN[=VALUE]`` (their amount of work), ``--response COLUMN``, ``--budget DURATION``, ``--seed SEED`` (its help says what it seeds), ``--cost COST``;
* the options of every command that runs jobs (where: local, master or inventory; with what resources
  and limits), with one set of defaults for all of them: :func:`cluster_options`.

A former spelling is refused with the current one (:func:`renamed`)."""

from __future__ import annotations

import argparse
import math
import os
import re
from pathlib import Path
from collections.abc import Mapping

from sparkdl.errors import ToolError

DEFAULT_EXECUTOR_MEMORY = "700m"
DEFAULT_DRIVER_MEMORY = "2g"
DEFAULT_TIMEOUT_S = 3600.0
DEFAULT_RETRIES = 1
DEFAULT_STATE_DIR = Path(".cluster")
DEFAULT_MASTER_PORT = 7077
DEFAULT_WEBUI_PORT = 8080

#: Caps on what a user can ask for, checked when the options are parsed (before anything starts).
MIN_MEMORY_MB = 256
MAX_MEMORY_MB = 16 << 20  # 16 TiB: beyond any machine's memory
MAX_TIMEOUT_S = 30 * 24 * 3600.0
MAX_RETRIES = 100
MAX_SAMPLES = 10**9
MAX_SEED = 2**31 - 1


def memory_mb(text: str | int) -> int:
    """'2g' -> 2048, '700m' -> 700, '1024' -> 1024 (MB); ValueError naming the fix when not a size or off limits."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = re.fullmatch(r"\s*(\d+)\s*([mMgG]?)[bB]?\s*", str(text)[:100], re.ASCII)
        if not m:
            raise ValueError(f"memory {str(text)[:40]!r} is not a size: use e.g. 700m or 2g")
        digits = m.group(1).lstrip("0")[:16] or "0"  # 16 digits are far over the cap: no huge int is built
        value = int(digits) * (1024 if m.group(2).lower() == "g" else 1)
    if value < MIN_MEMORY_MB:
        raise ValueError(f"memory {text!r} is below {MIN_MEMORY_MB} MB: a Spark worker needs at least 256m")
    if value > MAX_MEMORY_MB:
        raise ValueError(f"memory {str(text)[:40]!r} is over {MAX_MEMORY_MB // (1 << 20)} TB: give a size a machine has")
    return value


def _option_type(check: "object", name: str) -> "object":
    def parse(text: str) -> object:
        try:
            return check(text)  # type: ignore[operator]
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    parse.__name__ = name  # argparse names the type in its message
    return parse


def _memory(text: str) -> str:
    memory_mb(text)
    return text


def _whole(low: int, high: int, what: str) -> "object":
    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{text[:40]!r} is not a whole number: give {what} from {low} to {high}") from None
        if not low <= value <= high:
            raise ValueError(f"{value} is out of range: give {what} from {low} to {high}")
        return value
    return check


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text[:40]!r} is not a number of seconds") from None
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise ValueError(f"{text[:40]!r}: give seconds > 0 and at most {MAX_TIMEOUT_S:.0f} (30 days)")
    return value


_DURATION = re.compile(r"\s*(\d{1,12}(?:\.\d{1,12})?)\s*([smh]?)\s*", re.ASCII)


def duration_s(text: str) -> float:
    """A cluster-time budget: ``30m``, ``2h``, ``90s`` or plain seconds -> seconds; ValueError naming the fix."""
    m = _DURATION.fullmatch(text[:100])
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"--budget {text[:40]!r} is not a positive duration: write e.g. 30m, 2h, 600s")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def _master(text: str) -> str:
    if text.strip().lower() == "yarn":
        return "yarn"
    if text.strip().lower().startswith("yarn"):
        raise ValueError(f"{text[:40]!r}: the YARN master is spelled yarn (the cluster is the one HADOOP_CONF_DIR "
                         "names), e.g. --master yarn")
    return text


_QUEUE = re.compile(r"[A-Za-z0-9_.-]{1,200}", re.ASCII)


def _queue(text: str) -> str:
    if not _QUEUE.fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not a YARN queue name: give a leaf queue of the cluster, e.g. default")
    return text


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.5 <= value < 1:
        raise ValueError(f"{text[:40]!r} is not a confidence level: give a number from 0.5 to below 1, e.g. 0.95")
    return value


def _interval_level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:  # nan too
        raise ValueError(f"{text[:40]!r} is not an interval level: give a fraction above 0 and below 1, e.g. 0.9")
    return value


def number_in(low: float, high: float, what: str, name: str, low_open: bool = False) -> "object":
    """An argparse type: a finite number from ``low`` (above it when ``low_open``) to ``high`` (``what`` it is)."""
    def check(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (low < value if low_open else low <= value) or not value <= high:  # nan and inf too
            raise ValueError(f"{text[:40]!r} is out of range: give {what} {'above' if low_open else 'from'} {low:g} "
                             f"{'and at most' if low_open else 'to'} {high:g}")
        return value
    return _option_type(check, name)


def whole_number(low: int, high: int, what: str, name: str) -> "object":
    """An argparse type: a whole number from ``low`` to ``high`` (``what`` it counts, for the message)."""
    return _option_type(_whole(low, high, what), name)


#: argparse types of the options every command shares: each refuses an impossible value (exit 2, naming it).
MEMORY = _option_type(_memory, "memory")
TIMEOUT = _option_type(_seconds, "timeout")
RETRIES = _option_type(_whole(0, MAX_RETRIES, "extra attempts"), "retries")
PORT = _option_type(_whole(1, 65535, "a port"), "port")
SAMPLES = _option_type(_whole(1, MAX_SAMPLES, "a number of digits"), "samples")
SEED = _option_type(_whole(0, MAX_SEED, "a seed"), "seed")
BUDGET = _option_type(duration_s, "budget")
CONFIDENCE = _option_type(_level, "confidence")
LEVEL = _option_type(_interval_level, "level")
MASTER = _option_type(_master, "master")
QUEUE = _option_type(_queue, "queue")


#: What argparse reads as a negative number, not an option (its own pattern takes -5 and -0.5 only).
NEGATIVE_NUMBER = re.compile(r"^-(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?%?$")


class CommandParser(argparse.ArgumentParser):
    """Every command's parser: a long option is taken only as spelled, never by a prefix of it.

    argparse's default would take ``--repeat`` for ``--repeats`` in a command that has only the latter (and
    ``--seed`` for ``--seeds``), so the same word would do two things in two commands. Subcommands' parsers are
    of this class too (argparse makes them of their parent's)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        # an option's value that is a negative number (with an exponent or a % sign too: --effect -5%, --at -1e3) is
        # that value, checked by the option, never taken for an unknown option ("expected one argument")
        self._negative_number_matcher = NEGATIVE_NUMBER


def cluster_options() -> argparse.ArgumentParser:
    """The options of every command that runs jobs: where (local / master / inventory) and with what.

    Use as ``CommandParser(parents=[cluster_options()])``; one set of defaults for all.
    """
    p = CommandParser(add_help=False)
    g = p.add_argument_group("cluster")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true",
                       help="use (and rescale) the local loopback cluster under --state-dir (default)")
    where.add_argument("--master", type=MASTER, help="submit to this existing standalone master, e.g. spark://host:7077, "
                                        "or to yarn (the YARN cluster of HADOOP_CONF_DIR; sparkdl submit --dry-run also "
                                        "takes a Kubernetes API server, k8s://https://HOST:PORT)")
    where.add_argument("--cluster", type=Path, metavar="INVENTORY",
                       help="provision and drive the hosts of this inventory (TOML) over SSH")
    g.add_argument("--master-webui", help="the --master's web UI (default http://HOST:8080)")
    g.add_argument("--queue", type=QUEUE, help="--master yarn: the YARN queue of every application (default: the "
                                             "cluster's default queue)")
    g.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                   help=f"local cluster state (default {DEFAULT_STATE_DIR})")
    g.add_argument("--port", type=PORT, default=DEFAULT_MASTER_PORT,
                   help=f"master port of a local cluster this command starts (default {DEFAULT_MASTER_PORT})")
    g.add_argument("--webui-port", type=PORT, default=DEFAULT_WEBUI_PORT,
                   help=f"master web UI port of a local cluster this command starts (default {DEFAULT_WEBUI_PORT})")
    g.add_argument("--keep-cluster", action="store_true", help="leave a cluster this command started running")
    g.add_argument("--plain-jvm", action="store_true",
                   help="local cluster: run drivers and executors with Java's defaults (by default they share a "
                        "class-data archive of Spark's and BigDL's classes and BigDL's MKL unpacked once, use the "
                        "parallel collector, and compile with C1 only)")
    g.add_argument("--executor-memory", type=MEMORY, default=DEFAULT_EXECUTOR_MEMORY,
                   help=f"per executor (default {DEFAULT_EXECUTOR_MEMORY})")
    g.add_argument("--driver-memory", type=MEMORY, default=DEFAULT_DRIVER_MEMORY, help=f"(default {DEFAULT_DRIVER_MEMORY})")
    g.add_argument("--timeout", type=TIMEOUT, default=DEFAULT_TIMEOUT_S,
                   help=f"seconds before a run is stopped (default {DEFAULT_TIMEOUT_S:.0f})")
    g.add_argument("--retries", type=RETRIES, default=DEFAULT_RETRIES,
                   help=f"extra attempts after an infrastructure failure (default {DEFAULT_RETRIES})")
    t = p.add_argument_group("tracking")
    t.add_argument("--mlflow", nargs="?", const="", metavar="URI",
                   help="export every stored run to MLflow at this tracking URI as the campaign goes (alone: "
                        "$MLFLOW_TRACKING_URI); needs the mlflow extra; a tracker that is down only delays the export")
    return p


def add_kubernetes(parser: argparse.ArgumentParser) -> None:
    """``--image`` and ``--namespace``: where the runs of a ``--master k8s://...`` dry run would go."""
    k = parser.add_argument_group("kubernetes (with --master k8s://HOST:PORT --dry-run)")
    k.add_argument("--image", metavar="IMAGE",
                   help="the executors' container image (default: apache/spark's Python image of the runtime's Spark "
                        "version, a derived name)")
    k.add_argument("--namespace", metavar="NAME", help="the namespace of the executor pods (default default)")


#: The built-in job every command runs when none is named (a design's ``model`` column names one per row).
DEFAULT_JOB = "birnn"
#: The output formats; each command offers those it renders, always with text the default.
FORMATS = ("text", "json", "csv")


def add_campaign(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str = "", dest: str = "campaign",
                 folder_only: bool = False) -> None:
    """The positional ``CAMPAIGN``: a campaign folder or a results CSV (``what``: what the command reads from it)."""
    kind = "a campaign folder" if folder_only else "a campaign folder (or a results CSV)"
    parser.add_argument(dest, type=Path, metavar="CAMPAIGN", help=kind + (f": {what}" if what else ""))


def add_job(parser: argparse.ArgumentParser | argparse._ArgumentGroup, builtins: "tuple[str, ...]",
            what: str = "the job to run", default: str | None = DEFAULT_JOB) -> None:
    """``--job NAME|FILE``: a built-in job (``builtins``, from the job registry) or a job description (TOML)."""
    tail = f" (default {default})" if default else ""
    parser.add_argument("--job", metavar="NAME|FILE", default=default,
                        help=f"{what}: a built-in job ({', '.join(builtins)}) or a job description (TOML){tail}")


def add_out(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str, required: bool = False,
            default: Path | None = None) -> None:
    """``--out PATH``; ``what`` says what is written there (a campaign folder, a CSV, an HTML file...)."""
    parser.add_argument("--out", type=Path, metavar="PATH", required=required, default=default, help=what)


def add_format(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
               choices: "tuple[str, ...]" = FORMATS) -> None:
    """``--format``: the formats the command renders, a subset of :data:`FORMATS`, text first and the default."""
    if choices[0] != "text" or not set(choices) <= set(FORMATS):
        raise ValueError(f"--format choices {choices}: text first, from {FORMATS}")
    parser.add_argument("--format", choices=choices, default="text",
                        help=f"output format: {', '.join(choices)} (default text)")


def add_response(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str, default: str | None) -> None:
    """``--response COLUMN``: the results column a model reads."""
    tail = f" (default {default})" if default else ""
    parser.add_argument("--response", metavar="COLUMN", default=default, help=f"{what}{tail}")


def add_parallelism(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--parallelism SPEC``: the column (or product of columns) that is the scale m of every scaling model."""
    parser.add_argument("--parallelism", metavar="SPEC",
                        help="the scale m of the scaling models (amdahl, usl, ernest): a column or a product of "
                             "columns, e.g. nodes or nodes*executors*executor_cores (default: nodes*executors*"
                             "executor_cores, else the resource columns the table has, named on stderr)")


def add_work(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str | None = None) -> None:
    """``--work COLUMN[=VALUE]``: the amount-of-work axis of every scaling model (Ernest's scale s); ``what``: the
    help of a command that writes the column rather than reads it."""
    parser.add_argument("--work", metavar="COLUMN[=VALUE]",
                        help=what or "the column holding each run's amount of work (an input fraction, train_samples), "
                             "the second axis of the scaling models (Ernest's s); with =VALUE, predict at that amount "
                             "(the full data: input_fraction=1, train_samples=60000); default: every run's work is 1")


def add_seed(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str, default: int | None = 0) -> None:
    """``--seed SEED``; ``what`` names what it seeds."""
    tail = f" (default {default})" if default is not None else ""
    parser.add_argument("--seed", type=SEED, metavar="SEED", default=default, help=f"seed of {what}{tail}")


def add_budget(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str, required: bool = False) -> None:
    """``--budget DURATION``: ``30m``, ``2h``, ``600s`` or plain seconds, read as seconds."""
    parser.add_argument("--budget", type=BUDGET, metavar="DURATION", required=required,
                        help=f"{what}, e.g. 30m, 2h, 600s or plain seconds")


#: What --cost accepts, the same in every command that computes a cost.
COST_HELP = ("the cost of a run from its wall clock T (s) and accuracy A: time_per_squared_percent "
             "(the default, T/(100 A)^2), time_per_squared_accuracy (T/A^2), time, tta:TARGET, or an "
             "expression of T and A such as 'T / A**4'")


def add_cost(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str = "") -> None:
    """``--cost``: one default (:data:`sparkdl.cost.DEFAULT_COST`) and one help line in every command."""
    parser.add_argument("--cost", metavar="COST", help=COST_HELP + (f"; {what}" if what else ""))


class TrackingOptionError(ToolError):
    """--mlflow was given without a URI and MLFLOW_TRACKING_URI is not set."""


def mlflow_uri(value: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The tracking URI of ``--mlflow``: its value, else (``--mlflow`` alone) $MLFLOW_TRACKING_URI; None without it."""
    if value is None:
        return None
    uri = value.strip() or environ.get("MLFLOW_TRACKING_URI", "").strip()
    if not uri:
        raise TrackingOptionError("--mlflow needs a tracking URI: --mlflow http://HOST:5000, or set MLFLOW_TRACKING_URI")
    from sparkdl.tracking import tracking_uri

    return tracking_uri(uri)  # its form checked here (a --dry-run too); a relative store path stays for the export


class RenamedOptionError(ToolError):
    """An option of an older version: the message names its new spelling."""


def renamed(parser: argparse.ArgumentParser, old: str, new: str, nargs: str | int | None = None) -> None:
    """Refuse ``old``, a former name of ``new`` (one name for one thing in every command), with the fix.

    The refusal is one line and exit 2 (:func:`sparkdl.cli.run_cli`), e.g. ``--model lenet is now --job lenet``.
    """

    class Refuse(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                      option_string: str | None = None) -> None:
            given = " ".join(values) if isinstance(values, list) else "" if values is None else str(values)
            was, now = f"{old} {given}".strip(), f"{new} {given}".strip()
            raise RenamedOptionError(f"{was} is now {now}: write {now} (the rest of the command unchanged)")

    parser.add_argument(old, action=Refuse, nargs=nargs, help=argparse.SUPPRESS)


def now_positional(parser: argparse.ArgumentParser, old: str, name: str = "CAMPAIGN") -> None:
    """Refuse ``old VALUE``, a former option that is now the positional ``name``, with the fix."""

    class Refuse(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                      option_string: str | None = None) -> None:
            raise RenamedOptionError(f"{old} {values} is now the positional {name}: write {values} without {old}")

    parser.add_argument(old, action=Refuse, help=argparse.SUPPRESS)
