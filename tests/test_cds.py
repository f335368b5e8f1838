"""The class-data archive of Spark's and BigDL's classes (cluster/cds.py) and the local backend's JVM options."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from cluster import cds
from cluster.errors import EnvironmentProblem
from cluster.sparkenv import SparkEnv
from cluster.runtime import discover


def fake_env(tmp_path: Path) -> SparkEnv:
    spark = tmp_path / "pyspark"
    (spark / "jars").mkdir(parents=True)
    (spark / "jars" / "spark-core.jar").write_bytes(b"core")
    java_home = tmp_path / "java"
    (java_home / "bin").mkdir(parents=True)
    (java_home / "bin" / "java").write_bytes(b"java")
    for name in ("dllib.jar", "core.jar"):
        (tmp_path / name).write_bytes(name.encode())
    return SparkEnv(python=tmp_path / "venv" / "bin" / "python", java_home=java_home, spark_home=spark,
                    class_path=(tmp_path / "dllib.jar", tmp_path / "core.jar"))


def test_runtime_classpath_is_what_sparks_launcher_gives_drivers_and_executors(tmp_path):
    env = fake_env(tmp_path)
    assert cds.runtime_classpath(env).split(os.pathsep) == [
        str(tmp_path / "dllib.jar"), str(tmp_path / "core.jar"), str(env.spark_home / "conf"),
        str(env.spark_home / "jars" / "*")]
    # a runtime without jars of its own (Spark 4): no empty entry, which Java would read as the working folder
    assert cds.runtime_classpath(replace(env, class_path=())).split(os.pathsep) == [
        str(env.spark_home / "conf"), str(env.spark_home / "jars" / "*")]


def test_archive_key_follows_every_input(tmp_path, monkeypatch):
    env = fake_env(tmp_path)
    listed = tmp_path / "classes.lst"
    listed.write_text("java/lang/Object\n")
    key = cds.archive_key(env, listed)
    assert cds.archive_key(env, listed) == key
    (env.spark_home / "jars" / "spark-core.jar").write_bytes(b"core, rebuilt")  # a reinstalled jar
    assert cds.archive_key(env, listed) != key
    key = cds.archive_key(env, listed)
    listed.write_text("java/lang/Object\njava/lang/String\n")
    assert cds.archive_key(env, listed) != key
    key = cds.archive_key(env, listed)
    os.utime(env.java, ns=(1, 1))
    assert cds.archive_key(env, listed) != key
    key = cds.archive_key(env, listed)
    monkeypatch.setattr(cds, "DUMP_JAVA_OPTIONS", ())  # an archive dumped with other options is dumped again
    assert cds.archive_key(env, listed) != key


def test_archive_lives_in_the_environment_and_says_how_to_use_it(tmp_path):
    env = fake_env(tmp_path)
    assert cds.default_cache_dir(env) == tmp_path / "venv" / "share" / "sparkdl"
    assert cds.Archive(tmp_path / "a.jsa").java_options() == (f"-XX:SharedArchiveFile={tmp_path / 'a.jsa'}",
                                                             "-Xshare:auto")


def test_a_failing_dump_is_one_line_that_names_the_way_out(tmp_path):
    env = fake_env(tmp_path)  # its "java" is not a program
    (env.java).chmod(0o755)
    listed = tmp_path / "classes.lst"
    listed.write_text("java/lang/Object\n")
    with pytest.raises((EnvironmentProblem, OSError)) as e:
        cds.build(env, tmp_path / "out" / "a.jsa", listed)
    if isinstance(e.value, EnvironmentProblem):
        assert "--plain-jvm" in str(e.value)
    assert not list((tmp_path / "out").glob("*"))  # no half-written archive


def test_submit_args_without_shipped_jars_and_with_java_options():
    env = discover()  # the BigDL runtime
    default = env.submit_args()
    logging = f"-Dlog4j2.configurationFile={env.log_config}"
    assert env.log_config is not None and env.log_config.is_file()
    assert "--jars" in default
    assert {a for a in default if "extraJavaOptions" in a} == {f"spark.driver.extraJavaOptions={logging}",
                                                               f"spark.executor.extraJavaOptions={logging}"}
    local = replace(env, ship_jars=False, driver_java_options=("-Xa", "-Xb"), executor_java_options=("-Xc",))
    args = local.submit_args()
    assert "--jars" not in args
    assert f"spark.driver.extraJavaOptions={logging} -Xa -Xb" in args
    assert f"spark.executor.extraJavaOptions={logging} -Xc" in args
    spaced = replace(env, log_config=Path("/opt/my tools/site/log4j2.xml")).submit_args()
    assert 'spark.driver.extraJavaOptions="-Dlog4j2.configurationFile=/opt/my tools/site/log4j2.xml"' in spaced
    assert f"spark.executor.extraClassPath={env.classpath()}" in args  # executors still find BigDL


@pytest.mark.slow
def test_the_archive_is_built_once_and_the_jvm_maps_it():
    """The real archive of this environment: with -Xshare:on a JVM fails unless it can use it. The JVM has the
    tuned runs' own options (the parallel collector, C1), not the dump's (the serial collector)."""
    from harness.backends import LocalBackend

    env = discover()
    archive = cds.ensure(env)
    assert cds.ensure(env) == archive and archive.path.stat().st_size > 50e6
    assert "-XX:+UseSerialGC" in cds.DUMP_JAVA_OPTIONS and "-XX:+UseSerialGC" not in LocalBackend.GC
    done = subprocess.run([str(env.java), *LocalBackend.GC, *LocalBackend.JIT,
                           f"-XX:SharedArchiveFile={archive.path}", "-Xshare:on",
                           "-Xlog:class+load=info", "-cp", cds.runtime_classpath(env),
                           "org.apache.spark.deploy.SparkSubmit", "--version"],
                          capture_output=True, text=True, env=env.environ(), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    shared = [line for line in done.stdout.splitlines() if "source: shared objects file" in line]
    # classes of Spark's and Scala's jars, not only the JDK's; some of Spark's are never shared (they
    # link against log4j 1.2's Java 5 classes, which JDK 11 cannot archive), so no one class is named
    from_jars = [line for line in shared if " org.apache.spark." in line or " scala." in line]
    assert len(from_jars) > 200, done.stdout[-2000:]
    assert len(shared) > 1000


def test_local_backend_environment_stock_unless_a_job_asks_for_the_tuning(tmp_path):
    from cluster.local import LocalCluster
    from harness.backends import LocalBackend

    cluster = LocalCluster(tmp_path / "state")
    backend = LocalBackend(cluster, 512)
    backend.runtime = "bigdl"  # what open() records once the cluster runs (no cluster is started here)
    backend._tuning["bigdl"] = (cds.Archive(tmp_path / "a.jsa"), tmp_path / "mkl")  # what the first tuned run builds
    stock = backend.environment_for("bigdl", "stock")
    assert not stock.ship_jars and stock.driver_java_options == () and stock.executor_java_options == ()
    assert stock.library_path is None
    env = backend.environment_for("bigdl", "tuned")
    assert env.library_path == tmp_path / "mkl"
    assert env.driver_java_options == env.executor_java_options == (
        f"-XX:SharedArchiveFile={tmp_path / 'a.jsa'}", "-Xshare:auto", "-XX:+UseParallelGC", "-XX:TieredStopAtLevel=1")
    # --plain-jvm: stock JVMs even for a job that asks
    plain = LocalBackend(cluster, 512, plain_jvm=True)
    plain.runtime = "bigdl"
    assert plain.environment_for("bigdl", "tuned").driver_java_options == ()


def test_plain_jvm_option_reaches_the_backend(tmp_path):
    import argparse

    from harness.backends import LocalBackend
    from harness.campaign import make_backend
    from sparkdl.campaign import CampaignDir
    from sparkdl.options import cluster_options

    parser = argparse.ArgumentParser(parents=[cluster_options()])
    for argv, plain in (([], False), (["--plain-jvm"], True)):
        backend = make_backend(parser.parse_args(["--state-dir", str(tmp_path / "s"), *argv]),
                               CampaignDir(tmp_path / "c"), 512)
        assert isinstance(backend, LocalBackend) and backend.plain_jvm is plain


def test_a_dry_run_prints_what_the_local_backend_will_run():
    from harness.submit import dry_run_env

    env = discover()
    tuned, plain = dry_run_env("bigdl", "tuned", False, True), dry_run_env("bigdl", "tuned", True, True)
    stock = dry_run_env("bigdl", "stock", False, True)
    assert f"-XX:SharedArchiveFile={cds.archive_path(env)}" in tuned.driver_java_options
    assert tuned.library_path is not None and tuned.library_path.parent == env.cache_dir
    assert not tuned.ship_jars and not plain.ship_jars and plain.driver_java_options == ()
    assert stock.driver_java_options == () and stock.library_path is None
    spark4 = dry_run_env("spark4", "tuned", False, True)  # no archive or MKL of its own: the JVM flags only
    assert spark4.driver_java_options == ("-XX:+UseParallelGC", "-XX:TieredStopAtLevel=1")


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_leftovers_of_killed_writers_go_and_a_live_writers_stay(tmp_path):
    from cluster.processes import remove_dead_leftovers

    dead, alive = dead_pid(), os.getpid()
    (tmp_path / f".spark-bigdl-k.jsa.{dead}.tmp").write_bytes(b"half an archive")
    (tmp_path / f".mkl.{dead}.tmp").mkdir()
    (tmp_path / f".mkl.{dead}.tmp" / "libjmkl.so").write_bytes(b"half")
    (tmp_path / f".spark-bigdl-k.jsa.{alive}.tmp").write_bytes(b"being written")
    (tmp_path / "spark-bigdl-k.jsa").write_bytes(b"a whole archive")
    removed = remove_dead_leftovers(tmp_path)
    assert sorted(p.name for p in removed) == sorted([f".spark-bigdl-k.jsa.{dead}.tmp", f".mkl.{dead}.tmp"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f".spark-bigdl-k.jsa.{alive}.tmp",
                                                                 "spark-bigdl-k.jsa"])


def test_a_build_after_a_killed_one_leaves_only_the_archive(tmp_path):
    """Real dump (of a small class list): what a kill -9 mid-dump left is gone once the next build ran."""
    env = discover()
    listed = tmp_path / "classes.lst"
    listed.write_text("java/lang/Object\njava/lang/String\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    leftover = cache / f".{cds.archive_path(env, cache, listed).name}.{dead_pid()}.tmp"
    leftover.write_bytes(b"half an archive")
    archive = cds.ensure(env, cache, class_list=listed)
    assert [p.name for p in cache.iterdir()] == [archive.path.name] and archive.path.stat().st_size > 1e6


def test_the_log_configuration_keeps_bigdls_console_and_drops_its_shared_file():
    """cluster/site/log4j2.xml prints what BigDL's bundled log4j2-test.xml prints (logparse reads it), nothing else."""
    import xml.etree.ElementTree as ET
    import zipfile

    env = discover()
    with zipfile.ZipFile(env.jars[0]) as jar:
        bundled = ET.fromstring(jar.read("log4j2-test.xml"))
    ours = ET.parse(env.log_config).getroot()
    assert "/tmp/${sys:logFilename}" in {f.get("fileName") for f in bundled.iter("File")}  # what we drop

    def console(root):
        (c,) = root.iter("Console")
        return c.get("target"), c.find("PatternLayout").get("pattern")

    def levels(root):
        return {(x.tag, x.get("name"), x.get("level"), x.get("additivity")) for x in root.find("Loggers")}

    assert console(ours) == console(bundled) == ("SYSTEM_OUT", "%d{yy-MM-dd HH:mm:ss} [%t] %-5p %c{1}:%L - %msg%n")
    assert levels(ours) == levels(bundled)
    assert [a.tag for a in ours.find("Appenders")] == ["Console"]
    assert {r.get("ref") for r in ours.iter("AppenderRef")} == {"Console"}
