"""Real hosts under faults: namespace hosts with their own sshd (tests/fabric_hosts.py), a lenet
design through `python -m harness.submit --cluster`, and a fault at a fixed point:

* a worker host crashes mid-job (every process in its namespace killed, sshd too);
* the master host's sshd dies between two runs.

Each checks the statuses, the attempts, the exit code, the last line and what is left running, then
(where the campaign stopped) `--resume` once the host is back: every row exactly once, and no Spark JVM
of the campaign on any host. Slow: each job takes ~1-2 min on these hosts. bench/remote_faults.py
repeats them, and also runs the two faults kept out of the suite for its time (about 4 min each on a
loaded 2-core machine): a worker's link down mid-job (`--fault partition`) and a worker's disk filling as
its executor starts (`--fault disk-full`, a 64 MB tmpfs as its work folder); their logic (the disk-full
reason, the free-space warning, the retry wait) is covered by the fast tests of tests/test_lost_hosts.py.
"""

from __future__ import annotations

import re

import pytest

from tests.remote_campaign import attempts, design, fault_hosts, results

pytestmark = [pytest.mark.slow, pytest.mark.cluster]


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
        assert "; once the host answers, continue with `sparkdl submit " in first.last_line
        assert site.spark_jvms() == []  # host A's master and worker stopped, host B crashed
        # the crashed executor's scratch is in host B's state folder, not the host's /tmp
        scratch = site.base / "hosts" / b / "scratch"
        assert list((scratch / "worker-2").glob("spark-*/executor-*")), sorted(scratch.rglob("*"))[:5]

        site.hosts.start_sshd(1)  # host B is back (nothing of Spark runs there)
        again = site.submit(out, rows, "--resume")
        assert again.wait() == 0, "\n".join(again.lines)
        assert results(out) == {1: ("ok", 3), 2: ("ok", 1)}  # every row once; run 1's third attempt ran
        assert site.spark_jvms() == []
        assert not scratch.exists()  # stopping host B's last daemon removed what its crashed executor left


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
        assert "; the campaign stopped, finished runs are kept: once the host answers, continue with `sparkdl " \
            "submit " in first.last_line
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
