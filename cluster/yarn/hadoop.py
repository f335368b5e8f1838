"""Hadoop's own jars for the local YARN + HDFS: fetched by Maven once into a pinned, checksummed cache folder.

``cluster/yarn/pom.xml`` names the artifacts (hadoop-client-minicluster 3.3.6 and what its daemons need on Java
17); ``cluster/yarn/hadoop.lock`` holds the SHA-256 of every jar Maven resolves for it. :func:`prepare` copies
the jars with ``mvn dependency:copy-dependencies`` into a private folder, refuses any jar whose checksum is not
the lock's (or a jar the lock does not name, or one it names that did not come), compiles the small HDFS launcher
(``MiniHdfs.java``) against them, and only then moves the folder into place: a folder that exists is complete.
The folder's name carries a key of the pom, the lock and the launcher, so a change to any of them prepares anew.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from cluster import runtime as runtimes
from cluster.errors import EnvironmentProblem

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
LOCK = HERE / "hadoop.lock"
LAUNCHER = HERE / "MiniHdfs.java"
VERSION = "3.3.6"
#: Java versions the Hadoop daemons run on, in order of preference (Hadoop 3.3 supports 8 and 11; 17 runs with the
#: module openings of :data:`JAVA_OPENS`, as Spark's own YARN tests run it)
JAVA_VERSIONS = (17, 11, 21)
MAVEN_TIMEOUT_S = 900.0
#: What the daemons' reflection (Guice, Jersey 1, Hadoop's own) reaches into on Java 17
JAVA_OPENS = tuple(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
    "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
    "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs", "sun.security.action",
    "sun.util.calendar"))

Progress = Callable[[str], None]


class HadoopProblem(EnvironmentProblem):
    """Hadoop's jars cannot be fetched, do not match the lock, or the launcher does not compile."""


@dataclass(frozen=True)
class Hadoop:
    """A prepared Hadoop: its jars, the compiled launcher and the Java that runs them."""

    home: Path
    java_home: Path

    @property
    def java(self) -> Path:
        return self.java_home / "bin" / "java"

    @property
    def classpath(self) -> str:
        return f"{self.home / 'classes'}:{self.home / 'jars'}/*"


def read_lock(path: Path = LOCK) -> dict[str, str]:
    """``hadoop.lock`` as {jar file name: sha256}."""
    pins: dict[str, str] = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or len(parts[0]) != 64:
            raise HadoopProblem(f"{path}:{n}: expected 'SHA256  FILE.jar', got {line[:80]!r}")
        pins[parts[1]] = parts[0]
    return pins


def key() -> str:
    h = hashlib.sha256()
    for f in (POM, LOCK, LAUNCHER):
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def home(root: Path | None = None) -> Path:
    return (root or runtimes.cache_root()) / f"hadoop-{VERSION}-{key()}"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_jars(folder: Path, pins: dict[str, str]) -> list[str]:
    """Why the jars in ``folder`` are not exactly the lock's (empty when they are)."""
    have = {p.name for p in folder.glob("*.jar")}
    problems = [f"{name}: not resolved by Maven (the lock names it)" for name in sorted(set(pins) - have)]
    problems += [f"{name}: resolved by Maven but not in {LOCK.name}" for name in sorted(have - set(pins))]
    for name in sorted(have & set(pins)):
        got = sha256(folder / name)
        if got != pins[name]:
            problems.append(f"{name}: sha256 {got}, the lock says {pins[name]}")
    return problems


def find_java() -> Path:
    """A Java home of a version Hadoop's daemons run on: $JAVA_HOME or /usr/lib/jvm, in :data:`JAVA_VERSIONS`' order."""
    return runtimes.find_java_home(JAVA_VERSIONS, None, "the local YARN")


def _run(argv: list[str], what: str, cwd: Path | None = None) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S, cwd=cwd)
    except FileNotFoundError:
        raise HadoopProblem(f"{what}: {argv[0]} is not installed (Debian: apt-get install maven openjdk-17-jdk-headless)"
                            ) from None
    except subprocess.TimeoutExpired:
        raise HadoopProblem(f"{what}: no answer in {MAVEN_TIMEOUT_S:.0f} s (is Maven Central reachable?)") from None
    if done.returncode != 0:
        tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-4:])[:600]
        raise HadoopProblem(f"{what} failed (exit {done.returncode}): {tail}")


def is_prepared(root: Path | None = None) -> bool:
    return (home(root) / "classes" / "MiniHdfs.class").is_file()


def prepare(root: Path | None = None, progress: Progress = lambda _: None) -> Hadoop:
    """The Hadoop of the lock, fetched and checked once (a no-op when its folder exists)."""
    java_home = find_java()
    target = home(root)
    if is_prepared(root):
        return Hadoop(target, java_home)
    target.parent.mkdir(parents=True, exist_ok=True)
    javac = java_home / "bin" / "javac"
    if not javac.is_file():
        found = shutil.which("javac")
        if found is None:
            raise HadoopProblem(f"{java_home} has no javac, needed once to compile {LAUNCHER.name}: install a JDK "
                                "(Debian: apt-get install openjdk-17-jdk-headless)")
        javac = Path(found)
    pins = read_lock()
    progress(f"hadoop {VERSION}: fetching {len(pins)} jars with Maven into {target} (once)")
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=target.parent) as tmp:
        work = Path(tmp)
        jars = work / "jars"
        _run(["mvn", "-q", "-B", "-f", str(POM), "dependency:copy-dependencies", f"-DoutputDirectory={jars}",
              "-DincludeScope=runtime"], "fetching Hadoop's jars (mvn dependency:copy-dependencies)")
        problems = check_jars(jars, pins)
        if problems:
            raise HadoopProblem(f"Hadoop's jars do not match {LOCK}: {'; '.join(problems[:3])}"
                                + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""))
        progress(f"hadoop {VERSION}: compiling {LAUNCHER.name}")
        _run([str(javac), "-nowarn", "-cp", f"{jars}/*", "-d", str(work / "classes"), str(LAUNCHER)],
             f"compiling {LAUNCHER.name}")
        os.replace(work, target)
        (target.parent / work.name).mkdir()  # TemporaryDirectory removes what is at its own path
    progress(f"hadoop {VERSION}: {target}")
    return Hadoop(target, java_home)
