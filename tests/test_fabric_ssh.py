"""cluster.remote against real sshd instances on this machine (see tests/fabric_hosts.py).

Fast: the one-line errors for a refused key, a closed port, an unknown host key, an
encrypted key without its passphrase, and hostile values through a real remote shell.
Slow: provision two hosts and prepare a runtime on them, start a master and two workers over
SSH, run a design with a BigDL row (runtime bigdl) and a PyTorch row (TorchDistributor, gloo
between the two hosts; runtime torch) through `python -m harness.submit --cluster` (RemoteBackend +
Campaign: it prepares the second runtime on the hosts from the shipped wheels and restarts the
cluster on it), and find results, the runtimes' own spark-submit and logs.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cluster import runtime as runtimes
from cluster.bundle import build_bundle, build_wheelhouse, project_root
from cluster.group import GroupFailure
from cluster.inventory import load_inventory
from cluster.remote import RemoteCluster
from cluster.ssh import FabricTransport, HostKeyProblem, KeyRefused, Unreachable
from harness.store import ResultStore
from tests.fabric_hosts import PASSPHRASE, HostSet, lab_cache, start_hosts

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def hosts(tmp_path_factory) -> HostSet:
    h = start_hosts(tmp_path_factory.mktemp("sshhosts"))
    try:
        yield h
    finally:
        h.close()


def inventory_file(hosts: HostSet, tmp_path: Path, name: str = "inventory.toml", **kw) -> Path:
    workers = kw.pop("workers", [(hosts.addresses[0], 1, "1g"), (hosts.addresses[1], 1, "1g")])
    base_dir = kw.pop("base_dir", str(tmp_path / "remote"))
    p = tmp_path / name
    p.write_text(hosts.inventory_text(base_dir, workers, **kw))
    return p


def one_line(e: BaseException) -> str:
    message = str(e)
    assert "\n" not in message, message
    return message


# ---------------------------------------------------------------- errors against a real sshd


def test_a_command_reaches_the_host_and_hostile_values_stay_data(hosts, tmp_path):
    t = FabricTransport(load_inventory(inventory_file(hosts, tmp_path)))
    target = tmp_path / "pwned"
    hostile = f"a b $(touch {target}) `touch {target}`; touch {target} | & > 'x' \"y\" \\ ~"
    try:
        r = t.run(hosts.addresses[1], ["printf", "%s", hostile])
        ip = t.run(hosts.addresses[1], ["ip", "-4", "-o", "addr", "show"])
    finally:
        t.close()
    assert r.ok and r.stdout == hostile and not target.exists()
    assert hosts.mode != "netns" or f"inet {hosts.addresses[1]}/24" in ip.stdout  # really the other host


def test_the_loopback_fallback_hosts_work_too(tmp_path):
    """Where namespaces cannot be made, sshd instances on 127.0.0.2, 127.0.0.3 stand in for hosts."""
    loop = start_hosts(tmp_path / "loop", force_loopback=True)
    try:
        t = FabricTransport(load_inventory(inventory_file(loop, tmp_path)))
        try:
            assert [t.run(h, ["printf", "%s", h]).stdout for h in loop.addresses] == ["127.0.0.2", "127.0.0.3"]
        finally:
            t.close()
    finally:
        loop.close()
    assert all(p.poll() is not None for p in loop.sshd)


def test_wrong_key_is_refused_in_one_line(hosts, tmp_path):
    inv = load_inventory(inventory_file(hosts, tmp_path, key=hosts.other_key))
    with pytest.raises(KeyRefused) as e:
        FabricTransport(inv).run(hosts.addresses[0], ["true"])
    message = one_line(e.value)
    assert message.startswith(f"{hosts.addresses[0]}: refused key {hosts.other_key} for user 'root'")
    assert "authorized_keys" in message
    # through an operation: one result per host, each naming the refusal
    with pytest.raises(GroupFailure) as g:
        RemoteCluster(inv).start_workers().raise_on_failure()
    assert [r.host for r in g.value.result.failed] == hosts.addresses
    assert all(r.detail.startswith("refused key") for r in g.value.result.failed)


def test_closed_port_is_unreachable_in_one_line(hosts, tmp_path):
    inv = load_inventory(inventory_file(hosts, tmp_path, port=9))  # nothing listens on the discard port
    with pytest.raises(Unreachable) as e:
        FabricTransport(inv).run(hosts.addresses[0], ["true"])
    assert one_line(e.value) == (f"{hosts.addresses[0]}: unreachable: cannot connect to root@{hosts.addresses[0]}:9 "
                                 "(Connection refused); check the address, the port and that sshd runs")


def test_unknown_host_key_is_refused_in_one_line(hosts, tmp_path):
    hosts_file = tmp_path / "empty_known_hosts"
    hosts_file.write_text("")
    text = inventory_file(hosts, tmp_path).read_text().replace(str(hosts.known_hosts), str(hosts_file))
    inv_path = tmp_path / "unknown.toml"
    inv_path.write_text(text)
    with pytest.raises(HostKeyProblem) as e:
        FabricTransport(load_inventory(inv_path)).run(hosts.addresses[0], ["true"])
    assert f"its host key is not in {hosts_file}: check its fingerprint, then `ssh-keyscan" in one_line(e.value)


def test_an_encrypted_key_needs_its_passphrase_which_is_never_shown(hosts, tmp_path, monkeypatch):
    monkeypatch.delenv("T8_SSH_PASS", raising=False)
    inv = load_inventory(inventory_file(hosts, tmp_path, key=hosts.encrypted_key,
                                        extra_ssh='passphrase_env = "T8_SSH_PASS"'))
    with pytest.raises(KeyRefused) as e:
        FabricTransport(inv).run(hosts.addresses[0], ["true"])
    assert "is encrypted: export its passphrase in the variable named by ssh.passphrase_env" in one_line(e.value)
    monkeypatch.setenv("T8_SSH_PASS", "wrong " + PASSPHRASE)
    with pytest.raises(KeyRefused) as e:
        FabricTransport(inv).run(hosts.addresses[0], ["true"])
    assert one_line(e.value).endswith("wrong passphrase in $T8_SSH_PASS?") and PASSPHRASE not in str(e.value)
    monkeypatch.setenv("T8_SSH_PASS", PASSPHRASE)
    t = FabricTransport(inv)
    try:
        r = t.run(hosts.addresses[0], ["sh", "-c", "env; ps -ef"])
    finally:
        t.close()
    assert r.ok and PASSPHRASE not in r.stdout + r.stderr + r.command  # not in the remote environment or commands


# ---------------------------------------------------------------- the whole path


RUNTIMES = ("bigdl", "torch")


def wheelhouse() -> Path:
    """The pinned stack and both runtimes' locks as wheels (torch's CPU wheel from its runtime's find_links), cached
    outside the repo: the namespaces reach no index."""
    h = hashlib.sha256((project_root() / "constraints.txt").read_bytes())
    for name in RUNTIMES:
        h.update(runtimes.resolve(name).lock_text().encode())
    dest = lab_cache("test-wheelhouse", h.hexdigest()[:12])
    if not (dest / ".complete").exists():
        build_wheelhouse(dest, build_bundle(dest.parent / "bundles"), [runtimes.resolve(n) for n in RUNTIMES])
        (dest / ".complete").write_text("")
    return dest


DESIGN = """run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size
1,lenet,2,1,1,1,0.05,64
2,torch-lenet,2,1,1,1,0.05,64
"""


def host_state(base: Path, host: str) -> dict:
    return json.loads((base / "hosts" / host / "state.json").read_text())


def submitted_argv(out: Path) -> dict[int, list[str]]:
    db = sqlite3.connect(out / "campaign.sqlite")
    try:
        return {run: json.loads(argv) for run, argv in db.execute("SELECT run, argv FROM attempts ORDER BY attempt")}
    finally:
        db.close()


@pytest.mark.slow
def test_provision_start_and_run_a_design_on_two_hosts(hosts, tmp_path, monkeypatch):
    a, b = hosts.addresses
    monkeypatch.setenv("T8_SSH_PASS", PASSPHRASE)
    extra = dict(key=hosts.encrypted_key, extra_ssh='passphrase_env = "T8_SSH_PASS"',
                 extra_remote=f'wheelhouse = "{wheelhouse()}"')
    inv_path = inventory_file(hosts, tmp_path, **extra)
    base = tmp_path / "remote"
    bigdl, torch = runtimes.resolve("bigdl"), runtimes.resolve("torch")
    said: list[str] = []
    cluster = RemoteCluster(load_inventory(inv_path), progress=said.append, bundle_dir=tmp_path / "bundles")
    try:
        # The hosts share this machine's disk, like hosts with an NFS home: one base dir, state per host.
        # Host A is provisioned from scratch and prepares the bigdl runtime under <base>/runtimes (from the
        # shipped wheels: the namespaces reach no index); host B then finds the same venv and runtime there.
        # (One bundle for both calls: others may edit the source tree meanwhile, which changes the digest.)
        bundle = build_bundle(tmp_path / "bundles")
        first = cluster.provision([a], bundle, runtimes=["bigdl"]).raise_on_failure()
        assert [(r.host, r.changed) for r in first.results] == [(a, True)]
        assert "runtime bigdl prepared in" in first.results[0].detail
        assert any(line.startswith(f"{a}: runtime bigdl prepared in") for line in said)
        assert runtimes.is_prepared(bigdl, base / "runtimes") and not runtimes.is_prepared(torch, base / "runtimes")
        again = cluster.provision(bundle=bundle, runtimes=["bigdl"]).raise_on_failure()
        assert [(r.host, r.changed) for r in again.results] == [(a, False), (b, False)]
        assert all("up to date" in r.detail and "bigdl already prepared" in r.detail for r in again.results)

        # A worker that offers more cores than its host has: one line naming the host and the fix.
        too_big = RemoteCluster(load_inventory(inventory_file(hosts, tmp_path, "big.toml", workers=[(b, 64, "1g")],
                                                              **extra)))
        try:
            res = too_big.provision([b], bundle)
            (bad,) = res.failed
            assert bad.host == b and bad.detail.startswith("worker-1 offers cores=64 but the host has ")
            started = too_big.start_workers()
            (bad,) = started.failed
            assert bad.host == b and "offers cores=64 but this host has" in bad.detail and "exited 2" in bad.detail
        finally:
            too_big.close()

        # Master and both workers over SSH on the bigdl runtime, idempotently; each host's state records it.
        cluster.use("bigdl")
        assert cluster.start_master().raise_on_failure().changed
        assert cluster.start_workers(2).raise_on_failure().changed
        assert not cluster.start_master().raise_on_failure().changed
        assert not cluster.start_workers(2).raise_on_failure().changed
        assert [host_state(base, h)["runtime"] for h in (a, b)] == ["bigdl", "bigdl"]
        # the remote daemons' JVMs run with the control-plane options too (the hosts share this machine's /proc)
        for h, role in ((a, "master"), (a, "worker-1"), (b, "worker-2")):
            pid = host_state(base, h)["records"][role]["pid"]
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            assert {"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"} <= set(argv), (h, role, argv)
        report = cluster.status()
        assert report.master is not None and sorted(w.host for w in report.master.alive_workers) == [a, b]
        fab = subprocess.run([str(Path(sys.executable).with_name("fab")), "status", "--inventory", str(inv_path)],
                             cwd=project_root(), capture_output=True, text=True, timeout=120)
        assert fab.returncode == 0, fab.stderr
        assert "2 worker(s) alive, 2 cores" in fab.stdout
        assert f"{b} host: ok: running: worker-2 (runtime bigdl)" in fab.stdout
        cluster.stop().raise_on_failure()  # the backend starts it again (and stops what it started)
        assert host_state(base, a)["runtime"] is None  # nothing runs, so no runtime

        # A row on each runtime through `python -m harness.submit --cluster`: run 1 (BigDL LeNet) on bigdl on both
        # workers, then (torch prepared on the hosts, the cluster restarted on it) run 2, LeNet in PyTorch with one
        # gloo process on each host (their names resolve to no address of the namespaces' network: the job binds
        # gloo to the interface that reaches the rendezvous host, or rank 0 is told to reach its peer at loopback).
        design = tmp_path / "design.csv"
        design.write_text(DESIGN)
        out = tmp_path / "campaign"
        proc = subprocess.run(
            [sys.executable, "-m", "harness.submit", str(design), "--cluster", str(inv_path), "--out", str(out),
             "--driver-memory", "1g", "--train-samples", "300", "--test-samples", "100", "--timeout", "900",
             "--retries", "0"],
            cwd=project_root(), capture_output=True, text=True, timeout=1800)
        said.extend(proc.stdout.splitlines() + proc.stderr.splitlines())
        assert proc.returncode == 0, proc.stdout + proc.stderr
        store = ResultStore(out)
        summary_results = store.results()
        meta = store.meta()
        store.close()
    finally:
        cluster.close()

    assert meta["cluster"]["backend"] == "remote" and meta["cluster"]["master_host"] == a
    assert meta["cluster"]["runtimes_dir"] == str(base / "runtimes")
    results = {r.run: r for r in summary_results}
    assert set(results) == {1, 2}
    for r in results.values():
        assert r.status == "ok", r.reason
        assert 0 < r.wall_clock_s < r.elapsed_s and 0 <= r.accuracy <= 1
    # Spark's own log names each application: on stdout with the bigdl runtime's log configuration, on
    # stderr with Spark 4's (the job renames its application, so the master cannot be asked by name)
    logged = {run: "".join((out / "logs" / f"{run}-1.{ext}").read_text() for ext in ("out", "err")) for run in (1, 2)}
    app_ids = {run: re.search(r"with app ID (app-[0-9-]+)", text).group(1) for run, text in logged.items()}
    assert results[1].outcome.app_id == app_ids[1]
    # torch was prepared on the hosts by the campaign (host A built it, host B found it), then the cluster moved
    # (the two hosts prepare side by side; one builds it under <base>/runtimes while the other waits for it)
    built = sorted(line.split(":")[0] for line in said if re.match(r"\S+: runtime torch prepared in", line))
    found = sorted(line.split(":")[0] for line in said if re.match(r"\S+: runtime torch already prepared", line))
    assert len(built) == 1 and sorted(built + found) == sorted([a, b]), [line for line in said if "torch" in line]
    assert "restarting the remote cluster on runtime torch (it ran bigdl)" in said
    # the PyTorch run trained with one process on each host, and validated after its epoch
    figures = json.loads((out / "runs" / "2-1" / "metrics.json").read_text())
    assert figures["processes"] == 2 and figures["epochs_trained"] == 1 and len(figures["accuracy_history"]) == 1
    # each row was submitted with its runtime's own spark-submit, prepared on the hosts under <base>/runtimes
    argv = submitted_argv(out)
    for run, rt in ((1, bigdl), (2, torch)):
        assert argv[run][0] == str(runtimes.home(rt, base / "runtimes") / "lib" / "python3.11" / "site-packages"
                                   / "pyspark" / "bin" / "spark-submit")
        assert f"spark.pyspark.python={runtimes.home(rt, base / 'runtimes')}/bin/python" in argv[run]
    # the torch job's figures were written on the master host and fetched back (BigDL's come from its log)
    assert (base / "hosts" / a / "runs" / "2-1" / "metrics.json").is_file()
    assert "accuracy" in json.loads((out / "runs" / "2-1" / "metrics.json").read_text())
    assert "Top1Accuracy is Accuracy(" in logged[1]
    # the master's and both workers' logs, and the executors' stderr from host B (run 1 used it)
    logs = out / "cluster-logs"
    master_log = (logs / a / "logs" / "master.log").read_text()
    assert "Master" in master_log and "starting master (runtime bigdl)" in master_log
    assert "starting master (runtime torch)" in master_log
    assert "starting worker-1 (runtime torch)" in (logs / a / "logs" / "worker-1.log").read_text()
    worker_2 = (logs / b / "logs" / "worker-2.log").read_text()
    assert "Successfully registered with master" in worker_2 and "starting worker-2 (runtime bigdl)" in worker_2
    (executor_stderr,) = (logs / b / "work" / "worker-2").glob(f"{app_ids[1]}/*/stderr")
    # its JVM read the log configuration installed on host B with the project's wheel (not this checkout)
    config = Path(re.search(r'"-Dlog4j2\.configurationFile=([^"]+)"', executor_stderr.read_text()).group(1))
    assert config.name == "log4j2.xml" and config.is_file() and project_root() not in config.parents
    for host, worker in ((a, "worker-1"), (b, "worker-2")):  # run 2: an executor, so a gloo process, on each host
        assert list((logs / host / "work" / worker).glob(f"{app_ids[2]}/*/stderr")), host
    assert (out / "results.csv").exists()

    # the backend started the cluster, so it stopped it; nothing of ours runs on either host
    final = RemoteCluster(load_inventory(inv_path))
    try:
        assert final.status().master is None
        assert all(r.detail == "running: nothing" for r in final.status().hosts.results)
    finally:
        final.close()

    # no secret anywhere: progress, local logs and results, the hosts' logs and state
    texts = said + [p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and p.suffix != ".sqlite"]
    texts += [p.read_text(errors="replace") for p in (tmp_path / "remote" / "hosts").rglob("*")
              if p.is_file() and p.suffix in (".log", ".json", "")]
    assert not [t for t in texts if PASSPHRASE in t]
