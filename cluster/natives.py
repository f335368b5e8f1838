"""BigDL's MKL libraries unpacked once per environment, so no JVM unpacks them again.

BigDL's core jar carries Intel MKL as ``libjmkl.so`` and ``libiomp5.so`` (36 MB). The first time
a JVM uses BigDL's math (every driver at ``init_engine``, every executor at its first BigDL task),
``com.intel.analytics.bigdl.mkl.MKL`` looks for them on ``java.library.path`` and, not finding
them, inflates both from the 52 MB jar into a temporary folder, loads them and deletes them. Put on
the JVMs' library path (``spark.{driver,executor}.extraLibraryPath``), the copy unpacked here is
loaded instead: 0.4 s less per run with one executor, measured on this project's 2-core machine.

Only for drivers and executors on this machine (the local backend).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from pathlib import Path

from cluster.errors import EnvironmentProblem
from cluster.processes import remove_dead_leftovers
from cluster.sparkenv import SparkEnv

#: What com.intel.analytics.bigdl.mkl.MKL loads (System.loadLibrary("iomp5"), ("jmkl")) with BigDL's default engine.
MKL_LIBRARIES = ("libiomp5.so", "libjmkl.so")


def natives_key(core_jar: Path) -> str:
    st = core_jar.stat()
    return hashlib.sha256(f"{core_jar.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]


def folder(env: SparkEnv, cache_dir: Path) -> Path:
    """Where env's MKL libraries are (or will be, once :func:`ensure` unpacked them)."""
    if env.natives_jar is None:
        raise EnvironmentProblem(f"runtime {env.runtime} has no native libraries to unpack (no natives_jar)")
    return cache_dir / f"mkl-{natives_key(env.natives_jar)}"


def ensure(env: SparkEnv, cache_dir: Path) -> Path:
    """The folder holding the MKL libraries of env's core jar, unpacked into ``cache_dir`` if not done yet.

    Unpacked into a temporary folder that is renamed into place: a crash never leaves half a library.
    """
    target = folder(env, cache_dir)
    if all((target / name).is_file() for name in MKL_LIBRARIES):
        return target
    tmp = cache_dir / f".mkl.{os.getpid()}.tmp"
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        remove_dead_leftovers(cache_dir)  # what an unpacking that was killed left
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        with zipfile.ZipFile(env.natives_jar) as jar:  # type: ignore[arg-type]
            entries = {Path(n).name: n for n in jar.namelist() if Path(n).name in MKL_LIBRARIES}
            missing = [n for n in MKL_LIBRARIES if n not in entries]
            if missing:
                raise EnvironmentProblem(f"{env.natives_jar} has no {', '.join(missing)}: delete the runtime's folder "
                                         "and prepare it again (`sparkdl runtime prepare bigdl`), or run with --plain-jvm")
            for name, entry in entries.items():
                with jar.open(entry) as src, open(tmp / name, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    except (OSError, zipfile.BadZipFile) as e:
        raise EnvironmentProblem(f"cannot unpack BigDL's MKL libraries into {cache_dir} ({e}); "
                                 "run with --plain-jvm") from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for old in cache_dir.glob("mkl-*"):  # the libraries of a core jar that is gone
        if old != target:
            shutil.rmtree(old, ignore_errors=True)
    return target
