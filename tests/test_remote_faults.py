"""Real hosts under faults (issue 30): namespace hosts with their own sshd (tests/fabric_hosts.py), a lenet
design through `python -m harness.submit --cluster`, and a fault at a fixed point:

* a worker host crashes mid-job (every process in its namespace killed, sshd too);
* the master host's sshd dies between two runs;
* a worker host's link goes down mid-job, then comes back;
* a worker's disk fills as its executor starts (a 64 MB tmpfs as its work folder).

Each checks the statuses, the attempts, the exit code, the last line and what is left running, then
(where the campaign stopped) `--resume` once the host is back: every row exactly once, and no Spark JVM
of the campaign on any host. Slow: each job takes ~1-2 min on these hosts. bench/remote_faults.py
repeats them.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.fabric_hosts import namespaces_work
from tests.remote_campaign import attempts, design, fault_hosts, results

pytestmark = [pytest.mark.slow, pytest.mark.cluster,
              pytest.mark.skipif(not namespaces_work(), reason="needs network namespaces (run as root)")]


def test_a_worker_host_that_crashes_mid_job_is_an_infrastructure_failure_and_resume_finishes(tmp_path):
    with fault_hosts(tmp_path) as site:
        a, b = site.hosts.addresses
        out = tmp_path / "campaign"
        rows = design(2, 1)  # run 1 on both hosts (host B crashes under it), run 2 on host A alone
        first = site.submit(out, rows)
        site.wait_for_training(out, "1-1")
        site.hosts.crash(1)
        assert first.wait() == 4, "\n".join(first.lines)

        tries = attempts(out)
        (run1_first, run1_retry), (run2,) = [t for t in tries if t[0] == 1], [t for t in tries if t[0] == 2]
        # the failed attempt names the lost host and what was lost, then what Spark saw (a well-formed reason)
        assert run1_first[2:5:2] == ("failed", "infrastructure")
        assert run1_first[3].startswith(f"lost the worker-2 host {b}: SSH fails (unreachable: cannot connect to "), \
            run1_first[3]
        # Spark's side: the executor lost on host B (the job died of it, or BigDL carried on without it)
        assert re.search(rf"; Spark: .*Lost executor \d+ on {re.escape(b)}: ", run1_first[3]), run1_first[3]
        assert run1_first[3].count("(") == run1_first[3].count(")")  # well-formed: not "worker lost)"
        # the retry could not start (host B still down after remote.host_wait): recorded, not run
        assert run1_retry[1:3] == (2, "not run") and run1_retry[4] == "infrastructure"
        assert f"needs the workers of {b}, which does not answer over SSH" in run1_retry[3]
        # the run that fits on host A went on
        assert run2[1:3] == (1, "ok")
        assert results(out) == {2: ("ok", 1)}
        # the job itself called it a lost executor (or BigDL trained on without it), never a bug
        job_log = "".join((out / "logs" / f"1-1.attempt1.{ext}").read_text(errors="replace") for ext in ("out", "err"))
        assert "internal error" not in job_log and "a bug" not in job_log
        assert "error: Spark lost " in job_log or "Spark recovered from a lost executor" in run1_first[3]
        assert first.last_line.startswith(f"error: 1 run(s) not run (1-1): lost the worker-2 host {b}: SSH fails")
        assert first.last_line.endswith(" --resume`") and f" --out {out} " in first.last_line, first.last_line
        assert "; once the host answers, continue with `python -m harness.submit " in first.last_line
        assert site.spark_jvms() == []  # host A's master and worker stopped, host B crashed

        site.hosts.start_sshd(1)  # host B is back (nothing of Spark runs there)
        again = site.submit(out, rows, "--resume")
        assert again.wait() == 0, "\n".join(again.lines)
        assert results(out) == {1: ("ok", 3), 2: ("ok", 1)}  # every row once; run 1's third attempt ran
        assert site.spark_jvms() == []


def test_the_master_hosts_sshd_dying_between_runs_stops_the_campaign_and_resume_adopts_its_cluster(tmp_path):
    with fault_hosts(tmp_path) as site:
        a, b = site.hosts.addresses
        out = tmp_path / "campaign"
        rows = design(1, 1)
        first = site.submit(out, rows)
        first.wait_line(lambda line: line.startswith("[1/2] run 1-1 ok"))
        site.hosts.kill_sshd(0)  # between the runs: before run 2 rescales the cluster
        assert first.wait() == 4, "\n".join(first.lines)
        assert first.last_line.startswith(f"error: run 2-1 not run: lost the master/worker-1 host {a}: SSH fails "
                                          "(unreachable: cannot connect to "), first.last_line
        assert first.last_line.endswith(" --resume`") and f" --out {out} " in first.last_line
        assert "; the campaign stopped, finished runs are kept: once the host answers, continue with `python -m " \
            "harness.submit " in first.last_line
        # what it could not stop is named in one line, with the command that stops it
        (not_stopped,) = [line for line in first.lines if line.startswith("could not stop the Spark daemons on ")]
        assert not_stopped.startswith(f"could not stop the Spark daemons on {a} (") and "`fab stop --inventory " in \
            not_stopped
        assert [t[1:3] for t in attempts(out) if t[0] == 2] == [(1, "not run")]
        assert results(out) == {1: ("ok", 1)}
        left = site.spark_jvms()
        assert sorted(line.split(" ", 3)[-1] for line in left) == ["org.apache.spark.deploy.master.Master",
                                                                    "org.apache.spark.deploy.worker.Worker"]
        assert all(line.startswith(f"{a}:") for line in left)  # host B's worker was stopped

        site.hosts.start_sshd(0)
        again = site.submit(out, rows, "--resume")
        assert again.wait() == 0, "\n".join(again.lines)
        assert any(line.startswith("adopting the master this campaign started before it stopped:")
                   for line in again.lines), again.lines
        assert results(out) == {1: ("ok", 1), 2: ("ok", 2)}
        assert site.spark_jvms() == []  # the resumed campaign stopped what its predecessor started


def test_a_worker_partitioned_mid_job_is_retried_once_its_link_is_back(tmp_path):
    with fault_hosts(tmp_path, host_wait=120) as site:
        out = tmp_path / "campaign"
        run = site.submit(out, design(2))
        site.wait_for_training(out, "1-1")
        site.hosts.link(1, up=False)
        time.sleep(30)
        site.hosts.link(1, up=True)
        assert run.wait() == 0, "\n".join(run.lines)
        (status, n), = results(out).values()
        assert status == "ok" and n in (1, 2)
        tries = attempts(out)
        assert len(tries) == n and all(t[2:5:2] == ("failed", "infrastructure") for t in tries[:-1])
        assert site.spark_jvms() == []


def test_a_worker_whose_disk_fills_gives_a_failed_run_with_that_reason_and_a_warning_before(tmp_path):
    with fault_hosts(tmp_path, extra_remote='min_free = "512m"') as site:
        a, b = site.hosts.addresses
        work = site.base / "hosts" / b / "work" / "worker-2"
        site.hosts.mount_tmpfs(1, work, 64)  # the job's jars (~120 MB) fill it as its executor starts
        try:
            out = tmp_path / "campaign"
            run = site.submit(out, design(2), "--retries", "0")
            assert run.wait() == 3, "\n".join(run.lines)
        finally:
            site.hosts.unmount(1, work)
        (warning,) = [line for line in run.lines if line.startswith("warning: ") and "min_free" in line]
        assert warning.startswith(f"warning: {b} has ") and f"MB free under {work}, below remote.min_free = 512 MB" \
            in warning
        assert results(out) == {1: ("failed", 1)}
        ((_, _, status, reason, kind),) = attempts(out)
        assert (status, kind) == ("failed", "infrastructure")
        assert reason.startswith("No space left on device on a worker: ") and "Lost executor " in reason
        assert f" on {b}: " in reason
        assert run.last_line.startswith("1 run(s): 1 failed.")
        assert site.spark_jvms() == []
