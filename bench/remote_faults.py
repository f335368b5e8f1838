"""Faults on real (namespace) hosts, repeated: what a campaign does when a host is lost, and after --resume.

    PYTHONPATH=. .venv/bin/python bench/remote_faults.py [--repeats 5] [--fault worker-crash ...]

Needs root (network namespaces). Each trial builds two fresh hosts with tests/fabric_hosts.py (the
master and worker-1 on host A, worker-2 on host B, the tool and the bigdl runtime from the cached base
of tests/remote_campaign.py), runs a lenet design through `python -m harness.submit --cluster`, and
injects one fault at a fixed point:

* ``worker-crash``: rows (nodes 2, nodes 1); host B's every process killed (sshd too) at run 1's first
  training line. Expected: exit 4, run 1's attempt failed (infrastructure) naming host B, its retry
  recorded as not run, run 2 ok; the last line names host B and the exact --resume command; nothing left
  running. Host B's sshd back, --resume: exit 0, both rows ok once, nothing left running.
* ``master-sshd``: rows (nodes 1, nodes 1); host A's sshd killed once run 1 is ok. Expected: exit 4, the
  last line names host A and --resume, one line names what could not be stopped with `fab stop`; sshd
  back, --resume adopts the master, exit 0, both rows once, nothing left running.
* ``partition``: one row (nodes 2); host B's link down for ``--partition`` seconds (default 60) at the
  first training line. Expected: exit 0, the row ok once (retried when Spark failed it), nothing left.
* ``disk-full``: one row (nodes 2, --retries 0); worker-2's work folder a 64 MB tmpfs (the job's jars
  fill it as its executor starts). Expected: the free-disk warning before the campaign, exit 3, the row
  failed with `No space left on device`, nothing left running.

Prints one line per trial (outcome, seconds, problems) and a tally per fault; exit 0 only if every trial
passed.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before bench/, whose logparse.py would shadow the package

from tests.remote_campaign import FaultSite, attempts, design, fault_hosts, results  # noqa: E402
from sparkdl.options import CommandParser, renamed  # noqa: E402

FAULTS = ("worker-crash", "master-sshd", "partition", "disk-full")


@dataclass
class Trial:
    fault: str
    seconds: float = 0.0
    outcome: str = ""
    problems: list[str] = field(default_factory=list)

    def expect(self, ok: bool, problem: str) -> None:
        if not ok:
            self.problems.append(problem)


def worker_crash(site: FaultSite, out: Path, t: Trial, partition_s: float) -> None:
    b = site.hosts.addresses[1]
    rows = design(2, 1)
    first = site.submit(out, rows)
    site.wait_for_training(out, "1-1")
    site.hosts.crash(1)
    rc = first.wait()
    tries = attempts(out)
    t.outcome = f"exit {rc}, attempts {[(r, n, s) for r, n, s, _, _ in tries]}"
    t.expect(rc == 4, f"first exit {rc}")
    t.expect(any(r == 1 and s == "failed" and k == "infrastructure" and f"worker-2 host {b}" in why
                 for r, _, s, why, k in tries), "run 1's failed attempt does not name host B")
    t.expect(any(r == 1 and s == "not run" for r, _, s, _, _ in tries), "run 1's retry not recorded as not run")
    t.expect(first.last_line.startswith(f"error: 1 run(s) not run (1-1): lost the worker-2 host {b}")
             and first.last_line.endswith("--resume`"), f"last line: {first.last_line}")
    t.expect(site.spark_jvms() == [], f"left running after the failed campaign: {site.spark_jvms()}")
    site.hosts.start_sshd(1)
    resumed(site, out, rows, t, {1, 2})


def master_sshd(site: FaultSite, out: Path, t: Trial, partition_s: float) -> None:
    a = site.hosts.addresses[0]
    rows = design(1, 1)
    first = site.submit(out, rows)
    first.wait_line(lambda line: line.startswith("[1/2] run 1-1 ok"))
    site.hosts.kill_sshd(0)
    rc = first.wait()
    t.outcome = f"exit {rc}"
    t.expect(rc == 4, f"first exit {rc}")
    t.expect(first.last_line.startswith(f"error: run 2-1 not run: lost the master/worker-1 host {a}")
             and first.last_line.endswith("--resume`"), f"last line: {first.last_line}")
    t.expect(any(line.startswith(f"could not stop the Spark daemons on {a}") and "fab stop" in line
                 for line in first.lines), "no line names the daemons left on host A")
    site.hosts.start_sshd(0)
    resumed(site, out, rows, t, {1, 2})


def partition(site: FaultSite, out: Path, t: Trial, partition_s: float) -> None:
    run = site.submit(out, design(2))
    site.wait_for_training(out, "1-1")
    site.hosts.link(1, up=False)
    time.sleep(partition_s)
    site.hosts.link(1, up=True)
    rc = run.wait()
    found = results(out)
    t.outcome = f"exit {rc}, {found}"
    t.expect(rc == 0 and [s for s, _ in found.values()] == ["ok"], f"exit {rc}, results {found}")
    t.expect(site.spark_jvms() == [], f"left running: {site.spark_jvms()}")


def disk_full(site: FaultSite, out: Path, t: Trial, partition_s: float) -> None:
    b = site.hosts.addresses[1]
    work = site.base / "hosts" / b / "work" / "worker-2"
    site.hosts.mount_tmpfs(1, work, 64)
    try:
        run = site.submit(out, design(2), "--retries", "0")
        rc = run.wait()
    finally:
        site.hosts.unmount(1, work)
    tries = attempts(out)
    t.outcome = f"exit {rc}, {[(s, why[:60]) for _, _, s, why, _ in tries]}"
    t.expect(any(line.startswith(f"warning: {b} has ") for line in run.lines), "no free-disk warning for host B")
    t.expect(rc == 3 and [s for _, _, s, _, _ in tries] == ["failed"], f"exit {rc}")
    t.expect(all("No space left on device" in why for _, _, _, why, _ in tries), "the reason is not the full disk")
    t.expect(site.spark_jvms() == [], f"left running: {site.spark_jvms()}")


def resumed(site: FaultSite, out: Path, rows: str, t: Trial, runs: set[int]) -> None:
    again = site.submit(out, rows, "--resume")
    rc = again.wait()
    found = results(out)
    t.outcome += f"; resume exit {rc}, {found}"
    t.expect(rc == 0, f"--resume exited {rc}: {again.last_line}")
    t.expect(set(found) == runs and all(s == "ok" for s, _ in found.values()), f"results after --resume: {found}")
    t.expect(site.spark_jvms() == [], f"left running after --resume: {site.spark_jvms()}")


SCENARIOS = {"worker-crash": worker_crash, "master-sshd": master_sshd, "partition": partition,
             "disk-full": disk_full}


def trial(fault: str, partition_s: float) -> Trial:
    t = Trial(fault)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sparkdl-faults-") as tmp:
        root = Path(tmp)
        extra = 'min_free = "512m"' if fault == "disk-full" else ""
        try:
            with fault_hosts(root, host_wait=120 if fault == "partition" else 5, extra_remote=extra) as site:
                SCENARIOS[fault](site, root / "campaign", t, partition_s)
        except Exception as e:  # noqa: BLE001 - a trial that breaks is a failed trial, the matrix goes on
            t.problems.append(f"{type(e).__name__}: {e}")
    t.seconds = time.monotonic() - started
    return t


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5, help="trials per fault (default 5)")
    renamed(p, "--repeat", "--repeats")
    p.add_argument("--fault", action="append", choices=FAULTS, help="only these faults (default: all)")
    p.add_argument("--partition", type=float, default=60.0, help="seconds the link stays down (default 60)")
    args = p.parse_args(argv)
    tally: Counter[tuple[str, bool]] = Counter()
    for i in range(1, args.repeats + 1):
        for fault in args.fault or FAULTS:
            t = trial(fault, args.partition)
            passed = not t.problems
            tally[fault, passed] += 1
            print(f"{fault} #{i}: {'pass' if passed else 'FAIL'} in {t.seconds:.0f} s: {t.outcome}"
                  + ("" if passed else f"; problems: {'; '.join(t.problems)}"), flush=True)
    print()
    for fault in args.fault or FAULTS:
        print(f"{fault}: {tally[fault, True]} of {tally[fault, True] + tally[fault, False]} trials passed")
    return 0 if not any(tally[f, False] for f in FAULTS) else 1


if __name__ == "__main__":
    from sparkdl.cli import run_cli  # SIGTERM and SIGHUP unwind: the temporary folders go

    sys.exit(run_cli(main))
