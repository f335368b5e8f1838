"""Lost hosts without hosts: the pure logic behind tests/test_remote_faults.py.

The campaign loop with a scripted runner and a backend that loses hosts, logparse's reasons for lost
executors and full disks, the jobs' one line for a lost cluster, the inventory's new fields, the resume
command, and the owner a host's daemon state records.
"""

from __future__ import annotations

import gzip
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import logparse
from cluster.errors import HostLost
from cluster.inventory import InventoryError, parse_inventory
from harness.campaign import NOT_RUN, NotRun
from harness.submit import resume_command
from jobs.errors import LOSS_SIGNS, SparkLost, run_job, spark_loss
from tests.test_campaign import RecordingBackend, campaign, spec

B = "10.0.0.12"


@dataclass
class LosingBackend(RecordingBackend):
    """Host B (worker-2) is lost after the first run; the master's host too when ``master_lost``."""

    master_lost: bool = False
    down: dict[str, str] = field(default_factory=dict)
    probes: list[tuple[int, bool]] = field(default_factory=list)

    def lost(self, spec):
        self.down[B] = "unreachable: Connection refused"
        return [HostLost(B, "worker-2 host", self.down[B])]

    def unavailable(self, spec, retry=False):
        self.probes.append((spec.run, retry))
        if self.master_lost and self.down:
            return HostLost("10.0.0.11", "master/worker-1 host", "unreachable: no answer", fatal=True)
        if B in self.down and spec.nodes > 1:
            return HostLost(B, "worker-2 host", self.down[B], f"nodes={spec.nodes} needs the workers of {B}")
        return None


def losing_campaign(tmp_path: Path, logs: list[str], master_lost: bool = False):
    c, runner, _ = campaign(tmp_path, logs)
    c.backend = LosingBackend(master_lost=master_lost)
    return c, runner, c.backend


def test_a_lost_worker_host_names_itself_and_the_runs_that_fit_go_on(tmp_path):
    c, runner, backend = losing_campaign(tmp_path, ["lenet-killed", "lenet-4000-2ep"])
    summary = c.run([spec(1, nodes=2), spec(2, nodes=1), spec(3, nodes=2)])
    # run 1 failed on the infrastructure, its retry could not start, run 2 ran, run 3 was not tried
    assert len(runner.calls) == 2 and [r.run for r in summary.records] == [2]
    assert backend.probes == [(1, False), (1, True), (2, False), (3, False)]
    rows = list(c.store.db.execute("SELECT run, attempt, status, reason, failure_kind FROM attempts ORDER BY run, attempt"))
    assert [r[:3] for r in rows] == [(1, 1, "incomplete"), (1, 2, NOT_RUN), (2, 1, "ok"), (3, 1, NOT_RUN)]
    assert rows[0][3].startswith(f"lost the worker-2 host {B}: SSH fails (unreachable: Connection refused); Spark: ")
    assert rows[1][3] == f"nodes=2 needs the workers of {B}" and rows[1][4] == "infrastructure"
    assert not summary.all_ok and [n.spec.key for n in summary.not_run] == ["1-1", "3-1"]
    assert summary.lost_hosts_line() == (f"2 run(s) not run (1-1, 3-1): lost the worker-2 host {B}: SSH fails "
                                         "(unreachable: Connection refused)")
    assert c.store.finished_cells() == {(2, 1)}  # the cells not run stay open for --resume
    assert (tmp_path / "logs" / "1-1.attempt1.out").exists()


def test_a_lost_master_host_stops_the_campaign_with_the_attempt_recorded(tmp_path):
    c, runner, _ = losing_campaign(tmp_path, ["lenet-killed"], master_lost=True)
    with pytest.raises(NotRun) as e:
        c.run([spec(1), spec(2)])
    assert e.value.fatal and e.value.exit_code == 4
    assert str(e.value) == "run 1-1 not run: lost the master/worker-1 host 10.0.0.11: SSH fails (unreachable: no answer)"
    rows = list(c.store.db.execute("SELECT run, attempt, status FROM attempts ORDER BY run, attempt"))
    assert rows == [(1, 1, "incomplete"), (1, 2, NOT_RUN)] and len(runner.calls) == 1


def test_the_resume_command_repeats_the_arguments_quoted():
    cmd = resume_command(["my design.csv", "--cluster", "inv.toml", "--out", "runs/x"])
    assert shlex.split(cmd) == ["sparkdl", "submit", "my design.csv", "--cluster", "inv.toml", "--out",
                                "runs/x", "--resume"]
    assert resume_command(["d.csv", "--resume"]).count("--resume") == 1


# ---------------------------------------------------------------- logparse's reasons


def judged(tmp_path: Path, text: str) -> logparse.JobLog:
    out = tmp_path / "x.out"
    out.write_text(text)
    return logparse.parse(out)


def test_a_lost_worker_reason_is_the_executor_line_naming_the_host(tmp_path):
    log = judged(tmp_path, "2026-11-26 11:13:17 INFO  StandaloneAppClient$ClientEndpoint:57 - Executor updated: "
                           "app-1/1 is now LOST (worker lost)\n"
                           "2026-11-26 11:13:17 ERROR TaskSchedulerImpl:73 - Lost executor 1 on 10.0.0.12: worker lost\n")
    assert (log.status, log.reason, log.failure_kind) == ("failed", "Lost executor 1 on 10.0.0.12: worker lost",
                                                          "infrastructure")
    alone = judged(tmp_path, "2026-11-26 11:13:17 INFO  StandaloneAppClient$ClientEndpoint:57 - Executor updated: "
                             "app-1/1 is now LOST (worker lost)\n")
    assert alone.reason == "Executor updated: app-1/1 is now LOST (worker lost)"  # whole, not "worker lost)"


def test_a_full_disk_is_the_reason_and_the_jobs_loss_line_is_infrastructure(tmp_path):
    log = judged(tmp_path, "2026-11-26 11:13:17 ERROR TaskSchedulerImpl:73 - Lost executor 1 on h: Unable to create "
                           "executor due to ./x.jar: No space left on device\nerror: Spark lost an executor (y)\n")
    assert log.reason == "Lost executor 1 on h: Unable to create executor due to ./x.jar: No space left on device"
    assert log.failure_kind == "infrastructure"
    log = judged(tmp_path, "error: Spark lost the connection to the driver's JVM (x)\n")
    assert (log.reason, log.failure_kind) == ("Spark lost the connection to the driver's JVM (x)", "infrastructure")
    log = judged(tmp_path, "error: --epochs must be > 0\n")
    assert (log.reason, log.failure_kind) == ("error: --epochs must be > 0", "job")  # other job errors stay the job's


def test_a_run_carried_through_a_full_disk_is_failed_with_that_reason():
    from logparse.judgement import loss_reason

    assert loss_reason(("ERROR X:1 - Lost executor 1 on h: oom", "ERROR X:1 - Lost executor 2 on h: No space left on "
                        "device")) == "No space left on device on a worker: ERROR X:1 - Lost executor 2 on h: No space " \
                                      "left on device"
    assert loss_reason(("Lost executor 1 on h: gone",)).startswith("Spark recovered from a lost executor")


# ---------------------------------------------------------------- the job's one line


FIXTURES = Path(__file__).parent / "fixtures" / "logs"


def py4j(name: str, text: str) -> Exception:
    cls = type(name, (Exception,), {})
    cls.__module__ = "py4j.protocol"
    return cls(text)


def test_a_lost_executor_or_jvm_is_a_one_line_job_failure_not_a_bug(capsys):
    e = py4j("Py4JJavaError", "An error occurred while calling o95.optimize.\n: com.intel.X: Job aborted due to stage "
                              "failure: Lost task 1.3 (10.0.0.11 executor 0): Didn't find weight block. This is usually "
                              "because executor crashed.\n\tat com.intel.Y")
    lost = spark_loss(e)
    assert isinstance(lost, SparkLost) and lost.exit_code == 4 and "\n" not in str(lost)
    assert str(lost).startswith("Spark lost an executor during the job (: com.intel.X: Job aborted") or \
        str(lost).startswith("Spark lost an executor during the job (com.intel.X: Job aborted")
    assert "executor crashed" in str(lost)
    assert str(spark_loss(py4j("Py4JNetworkError", "Answer from Java side is empty"))).startswith(
        "Spark lost the connection to the driver's JVM")
    assert spark_loss(py4j("Py4JJavaError", "java.lang.IllegalArgumentException: bad shape")) is None  # the job's own
    assert spark_loss(ValueError("Lost executor 1")) is None  # not py4j: not Spark's

    def main(argv):
        raise py4j("Py4JJavaError", "x\n: org.apache.spark.SparkException: Master removed our application: FAILED")

    assert run_job(main, []) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: Spark lost the master during the job (")

    def bug(argv):
        raise KeyError("k")

    with pytest.raises(KeyError):  # anything else is unchanged
        run_job(bug, [])


def test_bigdls_all_reduce_losing_a_crashed_hosts_gradient_partition_is_a_lost_executor_not_a_bug():
    """A real job log (tests/fixtures/logs/README.md): a worker host crashed in the all-reduce stage; Spark retried
    the task on the other executor, which died of a NullPointerException in AllReduceParameter. The job called it
    "internal error ... (a bug)"; the error's text names no lost executor, the driver's log 5 s before it does."""
    log = gzip.decompress((FIXTURES / "lenet-host-crashed-allreduce.out.gz").read_bytes()).decode()
    assert "Lost executor 1 on 10.231.86.3: worker lost" in log
    head = "internal error: Py4JJavaError: "
    text = log[log.index(head) + len(head):log.index(" (a bug; its traceback is above)")]
    assert not any(sign in text for sign, _ in LOSS_SIGNS)  # none of the old signs: it was a bug to the job
    lost = spark_loss(py4j("Py4JJavaError", text))
    assert isinstance(lost, SparkLost) and lost.exit_code == 4 and "\n" not in str(lost)
    assert str(lost).startswith("Spark lost an executor during the job: BigDL's all-reduce found the gradient")
    assert "java.lang.NullPointerException" in str(lost)
    # the frame alone (another error inside it) or the exception alone (elsewhere) is still the job's own
    assert spark_loss(py4j("Py4JJavaError", text.replace("NullPointerException", "IllegalStateException"))) is None
    assert spark_loss(py4j("Py4JJavaError", text.replace("AllReduceParameter", "Other"))) is None


# ---------------------------------------------------------------- inventory, daemon state


def inventory(**remote) -> dict:
    return {"ssh": {"user": "u", "key_file": "/etc/hostname"}, "remote": {"base_dir": "/opt/x", **remote},
            "master": {"host": "10.0.0.11"}, "workers": [{"host": B, "cores": 1, "memory": "1g"}]}


def test_host_wait_and_min_free_are_read_and_checked():
    r = parse_inventory(inventory(), Path("/tmp/i.toml")).remote
    assert (r.host_wait_s, r.min_free_mb) == (120.0, 2048)
    r = parse_inventory(inventory(host_wait=5, min_free="3g"), Path("/tmp/i.toml")).remote
    assert (r.host_wait_s, r.min_free_mb) == (5.0, 3072)
    with pytest.raises(InventoryError, match=r"remote.host_wait = -1 must be seconds between 0 and 86400"):
        parse_inventory(inventory(host_wait=-1), Path("/tmp/i.toml"))
    with pytest.raises(InventoryError, match=r"remote.min_free = 'lots' is not a size"):
        parse_inventory(inventory(min_free="lots"), Path("/tmp/i.toml"))


def test_a_host_state_records_its_owner_while_something_runs(tmp_path):
    from cluster.daemon import HostState, free_mb

    st = HostState(tmp_path, {"master": object()}, {}, "bigdl", "ctl:/runs/a")  # type: ignore[dict-item]
    st.path.write_text(json.dumps({"records": {}, "pending": {}, "runtime": "bigdl", "owner": "ctl:/runs/a"}))
    assert HostState.load(tmp_path).owner == "ctl:/runs/a"
    st.records = {}
    st.save()  # nothing runs: nobody owns it
    assert json.loads(st.path.read_text())["owner"] is None
    free = free_mb([tmp_path / "not" / "made" / "yet"])["free_mb"]
    assert list(free) == [str(tmp_path / "not" / "made" / "yet")] and free[str(tmp_path / "not" / "made" / "yet")] > 0


def test_a_driver_whose_ssh_to_the_master_breaks_is_an_infrastructure_failure(tmp_path):
    from cluster.ssh import Unreachable
    from harness.remote_backend import RemoteRunner

    class BrokenMaster:
        def run_driver(self, argv, out, err, timeout):
            out.write("2026-11-26 11:13:17 INFO  SparkContext:57 - Running Spark version 3.1.3\n")
            raise Unreachable("10.0.0.11", "the connection broke while running `spark-submit` (EOF)")

    out, err = tmp_path / "1-1.out", tmp_path / "1-1.err"
    done = RemoteRunner(BrokenMaster(), "/opt/x/train.py").run(["spark-submit", "job.py"], {}, out, err, 60)  # type: ignore[arg-type]
    assert done.returncode == 255 and not done.timed_out
    j = logparse.judge_json_run(out, logparse.ProcessFacts(255, False, 1.0), None)
    assert (j.status, j.failure_kind) == ("failed", "infrastructure")
    assert j.reason == ("Spark lost its driver: SSH to the master host broke (10.0.0.11: the connection broke while "
                        "running `spark-submit` (EOF))")


def test_the_local_machine_is_warned_about_below_its_free_disk_floor(tmp_path):
    from harness.backends import low_disk_warning

    assert low_disk_warning(tmp_path / "state", floor_mb=0) is None
    line = low_disk_warning(tmp_path / "state", floor_mb=10 ** 12)
    assert line is not None and line.startswith("warning: this machine has ") and \
        f"MB free under {tmp_path / 'state'}, below {10 ** 12} MB" in line and "\n" not in line


# ---------------------------------------------------------------- the remote backend over a scripted transport


def owned_transport():
    from tests.test_fabric_commands import FakeTransport, answer

    @dataclass
    class OwnedTransport(FakeTransport):
        """FakeTransport whose hosts record the owner of the master, as cluster.daemon does."""

        owner: str | None = None

        def run(self, host, argv, timeout=None, out=None, err=None):
            cmd = argv[3] if argv[1:3] == ["-m", "cluster.daemon"] else argv[0]
            if host not in self.down and cmd == "start-master" and "--owner" in argv and self.master is None:
                self.owner = argv[argv.index("--owner") + 1]
            if host not in self.down and cmd == "status":
                self.calls.append((host, argv))
                return answer(host, argv, {"running": {"master": {}} if self.master else {}, "runtime": self.master,
                                           "owner": self.owner if self.master else None})
            if host not in self.down and cmd == "free":
                self.calls.append((host, argv))
                paths = [argv[i + 1] for i, a in enumerate(argv) if a == "--path"]
                return answer(host, argv, {"free_mb": {p: 100 if p.endswith("worker-2") else 10 ** 6 for p in paths}})
            if host not in self.down and cmd == "true":
                return answer(host, argv, {})
            return super().run(host, argv, timeout, out, err)

    return OwnedTransport(always_alive=False)


def test_the_remote_backend_leaves_a_lost_worker_host_out_and_takes_it_back(tmp_path):
    from cluster.remote import RemoteCluster
    from harness.remote_backend import RemoteBackend
    from tests.test_fabric_commands import inventory

    t, said = owned_transport(), []
    backend = RemoteBackend(RemoteCluster(inventory(tmp_path, host_wait=0, min_free="1g"), transport=t), 700,
                            provision=False, progress=said.append, owner="ctl:/runs/a")
    two, one = spec(1, nodes=2), spec(2, nodes=1)
    backend.open([two], "bigdl")
    assert t.owner == "ctl:/runs/a" and backend.started_here
    assert "warning: 10.0.0.12 has 100 MB free under /opt/sparkdl/hosts/10.0.0.12/work/worker-2, below " \
           "remote.min_free = 1024 MB: its runs may fail with `No space left on device` (free some space, or lower " \
           "min_free)" in said
    backend.prepare(two)
    t.down.add("10.0.0.12")  # worker-2's host crashes: the master forgets its worker
    t.running.pop("worker-2")
    (lost,) = backend.lost(two)
    assert str(lost) == "lost the worker-2 host 10.0.0.12: SSH fails (unreachable: cannot connect (Connection refused))"
    assert str(backend.unavailable(two, retry=True)) == (
        "nodes=2 needs the workers of 10.0.0.12, which does not answer over SSH (unreachable: cannot connect "
        "(Connection refused))")
    assert backend.unavailable(one) is None
    t.calls.clear()
    backend.prepare(one)  # on worker-1 alone; the lost host is not asked to stop anything
    assert sorted(t.running) == ["worker-1"] and {h for h, _ in t.calls} <= {"10.0.0.10", "10.0.0.11"}
    t.down.clear()  # it is back
    assert backend.unavailable(two, retry=True) is None
    assert "10.0.0.12 answers over SSH again: its workers are used again" in said
    backend.prepare(two)
    assert sorted(t.running) == ["worker-1", "worker-2"]
    t.down.add("10.0.0.10")  # the master's host: nothing can run
    with pytest.raises(HostLost) as e:
        backend.prepare(one)
    assert e.value.fatal and str(e.value) == ("lost the master host 10.0.0.10: SSH fails (unreachable: cannot connect "
                                              "(Connection refused))")
    said.clear()
    backend.close()
    assert said[-1] == ("could not stop the Spark daemons on 10.0.0.10 (unreachable: cannot connect (Connection "
                        f"refused)): they may still run; stop them with `fab stop --inventory {tmp_path / 'inventory.toml'}` "
                        "once the host answers")

    # the campaign resumed: it adopts the master its predecessor started and stops it at its end; another leaves it
    t.down.clear()
    other = RemoteBackend(RemoteCluster(inventory(tmp_path), transport=t), 700, provision=False, owner="ctl:/runs/b",
                          progress=said.append)
    other.open([one], "bigdl")
    assert not other.started_here and any(line.startswith("reusing the master") for line in said)
    again = RemoteBackend(RemoteCluster(inventory(tmp_path), transport=t), 700, provision=False, owner="ctl:/runs/a",
                          progress=said.append)
    said.clear()
    again.open([one], "bigdl")
    assert again.started_here and ("adopting the master this campaign started before it stopped: the master "
                                   "spark://10.0.0.10:7077 (runtime bigdl)") in said
    again.close()
    assert t.master is None


def test_a_host_lost_before_the_campaign_starts_is_one_line_naming_it(tmp_path):
    from cluster.remote import RemoteCluster
    from harness.remote_backend import RemoteBackend
    from tests.test_fabric_commands import inventory

    t = owned_transport()
    t.down.add("10.0.0.10")
    backend = RemoteBackend(RemoteCluster(inventory(tmp_path), transport=t), 700, provision=False, owner="o")
    with pytest.raises(HostLost) as e:
        backend.open([spec(1, nodes=1)], "bigdl")
    assert e.value.fatal and e.value.exit_code == 4
    assert str(e.value) == ("cannot start the remote cluster: lost the master host 10.0.0.10: SSH fails (unreachable: "
                            "cannot connect (Connection refused))")


def test_a_run_the_cluster_cannot_take_is_recorded_before_the_campaign_stops(tmp_path):
    from cluster.errors import StartupTimeout

    c, runner, backend = campaign(tmp_path, ["lenet-4000-2ep"])

    def prepare(spec):
        raise StartupTimeout("after 120 s the master lists 0 alive worker(s), expected 1")

    backend.prepare = prepare
    with pytest.raises(StartupTimeout):
        c.run([spec(1)])
    rows = list(c.store.db.execute("SELECT run, attempt, status, reason FROM attempts"))
    assert rows == [(1, 1, NOT_RUN, "after 120 s the master lists 0 alive worker(s), expected 1")] and not runner.calls
