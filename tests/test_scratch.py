"""A run's driver keeps its temporary files in the campaign folder, and a resumed campaign removes those of killed runs.

The argv checks are pure; the real check runs a LeNet campaign on the local cluster, kills the harness, the
driver and the worker with SIGKILL while the job runs (the driver's ``spark-*`` scratch left in the campaign, the
executor's in the cluster's state folder, where both were left in /tmp before), stops the cluster (which removes
both) and resumes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from cluster.sparkenv import SparkEnv
from harness.command import SubmitOptions, submit_argv
from harness.job import JobChoice, resolve_job
from sparkdl.runspec import RunSpec
from tests.test_campaign_faults import HEADER, harness, query, stop_harnesses, wait_for  # noqa: F401 (a fixture)


def _spec() -> RunSpec:
    return RunSpec.from_row({"run": "1", "replicate": "1", "nodes": "1", "executors": "1", "executor_cores": "1",
                             "model": "lenet", "epochs": "1", "learning_rate": "0.05", "batch_size": "32"})


def _env(tmp_path: Path) -> SparkEnv:
    return SparkEnv(python=tmp_path / "bin" / "python", java_home=tmp_path / "java", spark_home=tmp_path / "spark",
                    java_options=("-XX:+UseParallelGC",))


def _conf(argv: list[str], key: str) -> list[str]:
    return [argv[i + 1].split("=", 1)[1] for i, a in enumerate(argv[:-1]) if a == "--conf"
            and argv[i + 1].startswith(f"{key}=")]


def test_the_driver_scratch_is_the_runs_folder_in_the_campaign(tmp_path: Path) -> None:
    out = tmp_path / "my camp"
    argv = submit_argv(_spec(), SubmitOptions("spark://h:7077", out=out, driver_scratch=True), _env(tmp_path))
    folder = out.absolute() / "spark-tmp" / "1-1"
    assert _conf(argv, "spark.local.dir") == [str(folder)]
    (driver,) = _conf(argv, "spark.driver.extraJavaOptions")
    assert driver == f'-XX:+UseParallelGC "-Djava.io.tmpdir={folder}"'  # the runtime's options kept, the path quoted
    assert "java.io.tmpdir" not in " ".join(_conf(argv, "spark.executor.extraJavaOptions"))
    plain = submit_argv(_spec(), SubmitOptions("spark://h:7077", out=out), _env(tmp_path))  # drivers elsewhere
    assert not _conf(plain, "spark.local.dir") and "java.io.tmpdir" not in " ".join(plain)


def test_a_jobs_own_local_dir_and_java_options_are_kept(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    job_file = tmp_path / "job.toml"
    job_file.write_text('[job]\nname = "own"\napp = "app.py"\nargs = []\n'
                        '[spark]\n"spark.local.dir" = "/scratch/fast"\n'
                        '"spark.driver.extraJavaOptions" = "-Dmine=1"\n')
    options = SubmitOptions("spark://h:7077", out=tmp_path / "c", driver_scratch=True,
                            jobs=JobChoice(resolve_job(str(job_file))))
    argv = submit_argv(_spec(), options, _env(tmp_path))
    assert _conf(argv, "spark.local.dir") == ["/scratch/fast"]
    (driver,) = _conf(argv, "spark.driver.extraJavaOptions")
    assert driver.endswith("-Dmine=1") and "-Djava.io.tmpdir=" in driver


def _scratch_dirs(out: Path) -> list[Path]:
    root = out / "spark-tmp"
    return sorted(root.rglob("spark-*")) if root.is_dir() else []


def _maps(pid: int) -> list[str]:
    """The files process ``pid`` maps (none if it has just exited)."""
    try:
        return Path(f"/proc/{pid}/maps").read_text().splitlines()
    except OSError:
        return []


@pytest.mark.slow
@pytest.mark.cluster
def test_a_killed_drivers_scratch_is_in_the_campaign_and_resume_removes_it(local_cluster, tmp_path: Path) -> None:
    local_cluster.start(workers=1, cores=1, memory="700m")
    design = tmp_path / "design.csv"
    design.write_text(HEADER + "1,lenet,1,1,1,1,0.05,32\n")
    out = tmp_path / "campaign"
    small = ("--train-samples", "256", "--test-samples", "128", "--executor-memory", "600m")
    proc = harness(design, out, local_cluster.state_dir, *small)
    wait_for(lambda: query(out, "SELECT pid FROM attempts WHERE run=1 AND pid IS NOT NULL"), 600, "run 1 to start")
    (pid,) = query(out, "SELECT pid FROM attempts WHERE run=1")[0]
    wait_for(lambda: _scratch_dirs(out), 300, "the driver to make its scratch in the campaign")
    executors = local_cluster.state_dir / "scratch" / "worker-1"
    wait_for(lambda: list(executors.glob("spark-*/executor-*")), 300, "the executor to make its scratch")
    # the executor JVM's own temporary files too: lz4-java unpacks its library in java.io.tmpdir (the worker's
    # JAVA_TOOL_OPTIONS), and a SIGKILLed JVM never deletes it
    (worker,) = local_cluster.worker_pids()

    def lz4_libraries() -> set[str]:
        return {line.split()[-1] for child in psutil.Process(worker).children() for line in _maps(child.pid)
                if "liblz4-java" in line}

    wait_for(lz4_libraries, 300, "the executor to load lz4-java's library")
    mapped = lz4_libraries()
    assert mapped and all(Path(m).parent == executors for m in mapped), mapped
    drivers = subprocess.run(["pgrep", "-g", str(os.getpgid(pid))], capture_output=True, text=True).stdout.split()
    cmdlines = [Path(f"/proc/{p}/cmdline").read_bytes() for p in drivers if Path(f"/proc/{p}/cmdline").exists()]
    assert any(f"-Djava.io.tmpdir={out.absolute()}/spark-tmp/1-1".encode() in c for c in cmdlines)
    proc.kill()  # the harness, then its driver, then the worker and its executor (kill -9: nothing cleans up)
    for p in drivers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(p), signal.SIGKILL)
    os.killpg(worker, signal.SIGKILL)
    proc.wait(30)
    time.sleep(1)
    left = _scratch_dirs(out)
    assert left, "a SIGKILLed driver leaves its scratch"
    assert list(executors.glob("spark-*/executor-*")), "a SIGKILLed worker leaves its executors' scratch"
    # `cluster stop` removes it: the campaign ran on this cluster and its harness is dead
    stop = subprocess.run([sys.executable, "-m", "sparkdl", "cluster", "stop", "--state-dir",
                           str(local_cluster.state_dir)], capture_output=True, text=True, timeout=300)
    assert stop.returncode == 0, stop.stderr
    assert f"removed the driver scratch of 1 run(s) of the ended campaign {out.absolute()}" in stop.stdout
    assert not any(p.exists() for p in left) and _scratch_dirs(out) == []
    assert not (local_cluster.state_dir / "scratch").exists()  # and the executors' scratch, never in /tmp
    # so does --resume (a killed run's scratch found on a campaign whose cluster was not stopped)
    planted = out / "spark-tmp" / "1-1" / "spark-0000"
    planted.mkdir(parents=True)
    resumed = harness(design, out, local_cluster.state_dir, "--resume", *small)
    text, _ = resumed.communicate(timeout=900)
    assert resumed.returncode == 0, text
    assert "removed the driver scratch of 1 run(s)" in text
    assert not planted.exists() and _scratch_dirs(out) == []
    assert query(out, "SELECT run, status FROM results") == [(1, "ok")]


def test_cluster_stop_sweeps_the_scratch_of_ended_campaigns_and_keeps_a_running_ones(tmp_path: Path) -> None:
    from cluster.local import LocalCluster
    from sparkdl.campaign import CampaignDir

    ended, running, gone = (tmp_path / n for n in ("ended", "running", "gone"))
    for folder in (ended, running):
        (folder / "spark-tmp" / "1-1" / "spark-abc").mkdir(parents=True)
    said: list[str] = []
    cluster = LocalCluster(tmp_path / "state", progress=said.append)
    for folder in (ended, running, gone, ended):
        cluster.serve(folder)
    busy = CampaignDir(running).lock()  # its harness still runs
    try:
        assert cluster.sweep_campaigns() == [str(ended.absolute())]
    finally:
        busy.unlock()
    assert not (ended / "spark-tmp").exists() and (running / "spark-tmp" / "1-1" / "spark-abc").is_dir()
    assert said == [f"removed the driver scratch of 1 run(s) of the ended campaign {ended.absolute()}"]
    assert not (ended / CampaignDir.OWNER).exists()  # the sweep's own hold on the folder is released
    # the running campaign stays on the list, for the next stop; the ended and the vanished ones leave it
    assert cluster.sweep_campaigns() == [str(running.absolute())]
    assert cluster.sweep_campaigns() == []
