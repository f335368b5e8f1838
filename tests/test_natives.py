"""BigDL's MKL unpacked once per environment (cluster/natives.py), and loaded from there by a real BigDL."""

from __future__ import annotations

import subprocess
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from cluster import natives
from cluster.errors import EnvironmentProblem
from cluster.runtime import discover


def jar_with(tmp_path: Path, entries: dict[str, bytes]) -> Path:
    jar = tmp_path / "core.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return jar


def test_unpacks_the_two_libraries_once(tmp_path):
    jar = jar_with(tmp_path, {"libiomp5.so": b"iomp5", "libjmkl.so": b"jmkl" * 1000, "libmklml_intel.so": b"big",
                              "com/intel/X.class": b"x"})
    env = replace(discover(), natives_jar=jar)
    folder = natives.ensure(env, tmp_path / "cache")
    assert sorted(p.name for p in folder.iterdir()) == ["libiomp5.so", "libjmkl.so"]  # only what MKL loads
    assert (folder / "libjmkl.so").read_bytes() == b"jmkl" * 1000
    stamp = (folder / "libjmkl.so").stat().st_mtime_ns
    assert natives.ensure(env, tmp_path / "cache") == folder and (folder / "libjmkl.so").stat().st_mtime_ns == stamp
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [folder.name]  # no temporary folder left


def test_a_new_jar_gets_a_new_folder_and_the_old_one_goes(tmp_path):
    jar = jar_with(tmp_path, {"libiomp5.so": b"a", "libjmkl.so": b"b"})
    env = replace(discover(), natives_jar=jar)
    first = natives.ensure(env, tmp_path / "cache")
    jar_with(tmp_path, {"libiomp5.so": b"a2", "libjmkl.so": b"b2 longer"})
    second = natives.ensure(env, tmp_path / "cache")
    assert second != first and not first.exists() and (second / "libiomp5.so").read_bytes() == b"a2"


def test_a_jar_without_mkl_is_one_line_with_the_fix(tmp_path):
    env = replace(discover(), natives_jar=jar_with(tmp_path, {"libiomp5.so": b"a"}))
    with pytest.raises(EnvironmentProblem, match="no libjmkl.so.*--plain-jvm"):
        natives.ensure(env, tmp_path / "cache")
    assert not [p for p in (tmp_path / "cache").iterdir()]


def test_submit_args_put_the_folder_on_both_library_paths(tmp_path):
    args = replace(discover(), library_path=tmp_path).submit_args()
    assert f"spark.driver.extraLibraryPath={tmp_path}" in args
    assert f"spark.executor.extraLibraryPath={tmp_path}" in args
    assert not any("extraLibraryPath" in a for a in discover().submit_args())


@pytest.mark.slow
def test_real_bigdl_loads_mkl_from_the_unpacked_folder(tmp_path):
    """A real BigDL job (local[2]): MKL says where it loaded its libraries from."""
    env = discover()
    env = replace(env, library_path=natives.ensure(env, env.cache_dir),
                  driver_java_options=("-Dcom.intel.analytics.bigdl.mkl.MKL.DEBUG=true",))
    app = tmp_path / "mkl_app.py"
    app.write_text("from bigdl.dllib.utils.common import create_spark_conf, init_engine\n"
                   "from pyspark import SparkContext\n"
                   "sc = SparkContext.getOrCreate(create_spark_conf().setMaster('local[1]'))\n"
                   "init_engine()\nsc.stop()\n")
    proc = subprocess.run([str(env.spark_submit), "--master", "local[1]", "--driver-memory", "1g",
                           *env.submit_args(), str(app)], env=env.environ(), capture_output=True, text=True,
                          timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Loaded native libraries from java.library.path" in out, out[-3000:]
