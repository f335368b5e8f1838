"""Where a run's driver keeps its temporary files: inside the campaign folder, never in /tmp.

A Spark driver writes its scratch (``spark-<uuid>`` folders: block manager files, the files it
serves to executors, pyspark's) under ``spark.local.dir`` and the JVM's ``java.io.tmpdir``, both
/tmp by default, and removes them only when it ends cleanly: a driver killed with SIGKILL (a
timeout, a harness killed mid-run) leaves them there for good. Each run's driver is pointed at
``<campaign>/spark-tmp/<key>/`` instead (:func:`driver_confs`); the folder is made before the
run, removed after it (:func:`clear`), and the whole ``spark-tmp`` folder of a campaign whose
lock was just taken (so every earlier harness and its drivers are dead) is removed by :func:`sweep`,
and ``sparkdl cluster stop`` removes those of the campaigns that ran on the local cluster and have ended.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from cluster.sparkenv import java_option
from sparkdl.campaign import CampaignDir

SCRATCH = CampaignDir.SCRATCH


def driver_dir(out: Path, key: str) -> Path:
    """The run's driver scratch folder (absolute: the driver's working folder may differ)."""
    return Path(out).absolute() / SCRATCH / key


def driver_confs(out: Path, key: str, own: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The ``--conf`` arguments and the job settings (``own``, its extraJavaOptions joined) that put the driver's
    scratch under the campaign. A job that sets ``spark.local.dir`` itself keeps it."""
    folder = driver_dir(out, key)
    tmpdir = java_option(f"-Djava.io.tmpdir={folder}")
    merged = dict(own)
    merged["spark.driver.extraJavaOptions"] = " ".join(v for v in (tmpdir, own.get("spark.driver.extraJavaOptions"))
                                                        if v)
    confs = [] if "spark.local.dir" in own else ["--conf", f"spark.local.dir={folder}"]
    return confs, merged


def make(out: Path, key: str) -> Path:
    folder = driver_dir(out, key)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def clear(out: Path, key: str) -> None:
    """Remove the run's driver scratch (its driver has ended)."""
    shutil.rmtree(driver_dir(out, key), ignore_errors=True)


def sweep(out: Path) -> list[str]:
    """Remove every run's driver scratch of the campaign (called with its lock held: no driver of it is alive)."""
    return CampaignDir(out).sweep_scratch()
