"""kill -9 of `python -m harness.submit` at every phase, then `--resume`: the tally.

    PYTHONPATH=. .venv/bin/python bench/kill_matrix.py [--repeats 20] [--phase rescale ...]

Each trial runs a two-row design on a fresh local cluster (row 1 on one worker, row 2 on two,
so the harness rescales between them) with ``SPARKDL_CRASH_AT=<phase>``: the harness SIGKILLs
itself at that instant (:mod:`sparkdl.crash`). Then the same command with ``--resume`` must
finish, and the trial passes only if

* the killed harness really died by SIGKILL at that phase (exit -9),
* the resume exits 0 and every design row is in results.csv exactly once, ok,
* no process of the state directory (master, worker, executor) outlives the resumed campaign
  (read from /proc by cwd and --work-dir, independently of cluster.processes).

Phases: ``cluster-start`` (the master spawned, its pid not yet recorded), ``worker-spawned:2``
(the second worker spawned by the rescale, not yet recorded), ``rescale``
(before the rescale), ``runtime-switch`` (the Spark 3.1.3 cluster stopped, the Spark 4 one not
started: a two-row MLlib design, one row per runtime), ``job-start``, ``mid-job`` (3 s into the job), ``parse``, ``store``.
Prints one line per trial and the tally; exit 0 only if every trial passed.
"""

from __future__ import annotations

import csv
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from sparkdl.options import CommandParser

PHASES = ("cluster-start", "worker-spawned:2", "rescale", "runtime-switch", "job-start", "mid-job", "parse", "store")
DESIGN = ("run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"
          "1,lenet,1,1,1,1,0.05,32\n"
          "2,lenet,2,1,1,1,0.05,32\n")
#: The runtime switch: MLlib's perceptron on Spark 3.1.3 (the BigDL runtime), then on Spark 4.
SWITCH_DESIGN = ("run,runtime,max_iter,nodes,executors,executor_cores,step_size,block_size\n"
                 "1,bigdl,3,1,1,1,0.5,128\n"
                 "2,spark4,3,1,1,1,0.5,128\n")


def design_for(phase: str) -> tuple[str, tuple[str, ...]]:
    """The design file's text and the job options of a phase's trial."""
    if phase == "runtime-switch":
        return SWITCH_DESIGN, ("--job", "mlp")
    return DESIGN, ()
SMALL = ("--train-samples", "256", "--test-samples", "128", "--executor-memory", "600m")


@dataclass(frozen=True)
class Trial:
    phase: str
    killed_rc: int
    resumed_rc: int
    cells: tuple[tuple[str, str, str], ...]  # (run, replicate, status) rows of results.csv
    leftover: tuple[int, ...]  # pids of the state dir alive after the resumed campaign
    seconds: float
    detail: str = ""

    @property
    def problems(self) -> list[str]:
        out = []
        if self.killed_rc != -9:
            out.append(f"the harness was not killed at {self.phase} (exit {self.killed_rc})")
        if self.resumed_rc != 0:
            out.append(f"--resume exited {self.resumed_rc}: {self.detail}")
        if sorted(self.cells) != [("1", "1", "ok"), ("2", "1", "ok")]:
            out.append(f"results.csv holds {list(self.cells)}")
        if self.leftover:
            out.append(f"processes of the state dir left running: {list(self.leftover)}")
        return out

    @property
    def passed(self) -> bool:
        return not self.problems


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def processes_of(state_dir: Path) -> list[int]:
    """Pids of Spark processes whose cwd is in ``state_dir`` or whose argv names a path in it (from /proc)."""
    root = os.path.realpath(state_dir)
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z" and len(os.listdir(f"/proc/{entry}/task")) <= 1
        except OSError:
            continue
        if zombie or not any(a.startswith("org.apache.spark.") for a in argv):
            continue
        if cwd == root or cwd.startswith(root + "/") or any(a.startswith(root + "/") for a in argv):
            pids.append(int(entry))
    return pids


def run_trial(phase: str, workdir: Path, python: str = sys.executable, timeout: float = 900) -> Trial:
    """One kill at ``phase`` and its resume, in a fresh folder under ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    design, out, state = workdir / "design.csv", workdir / "campaign", workdir / "cluster"
    text, job = design_for(phase)
    design.write_text(text)
    argv = [python, "-m", "harness.submit", str(design), *job, "--local", "--out", str(out), "--state-dir", str(state),
            "--port", str(free_port()), "--webui-port", str(free_port()), *SMALL]
    env = {k: v for k, v in os.environ.items() if k != "SPARKDL_CRASH_AT"}
    started = time.monotonic()
    with open(workdir / "killed.log", "w") as log:
        killed = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, env={**env, "SPARKDL_CRASH_AT": phase},
                                timeout=timeout)
    with open(workdir / "resumed.log", "w") as log:
        resumed = subprocess.run([*argv, "--resume"], stdout=log, stderr=subprocess.STDOUT, env=env, timeout=timeout)
    cells: tuple[tuple[str, str, str], ...] = ()
    if (out / "results.csv").exists():
        with open(out / "results.csv", newline="") as f:
            cells = tuple((r["run"], r["replicate"], r["status"]) for r in csv.DictReader(f))
    leftover: list[int] = []
    deadline = time.monotonic() + 20  # a daemon's last threads may take a moment after `stop` returned
    while (leftover := processes_of(state)) and time.monotonic() < deadline:
        time.sleep(0.5)
    tail = (workdir / "resumed.log").read_text(errors="replace").strip().splitlines()[-3:]
    return Trial(phase, killed.returncode, resumed.returncode, cells, tuple(leftover),
                 time.monotonic() - started, " | ".join(tail) if resumed.returncode else "")


def cleanup(state_dir: Path, python: str = sys.executable) -> None:
    """Stop whatever a failed trial left (so the next one starts clean)."""
    if state_dir.exists():
        subprocess.run([python, "-m", "cluster.local", "stop", "--state-dir", str(state_dir)],
                       capture_output=True, timeout=300)


def tally(trials: list[Trial]) -> str:
    lines = [f"{'phase':<18} {'trials':>6} {'passed':>6} {'median s':>9}"]
    for phase in dict.fromkeys(t.phase for t in trials):
        mine = [t for t in trials if t.phase == phase]
        secs = sorted(t.seconds for t in mine)
        lines.append(f"{phase:<18} {len(mine):>6} {sum(t.passed for t in mine):>6} {secs[len(secs) // 2]:>9.0f}")
    problems = Counter(p for t in trials for p in t.problems)
    lines.append(f"{'all':<18} {len(trials):>6} {sum(t.passed for t in trials):>6}")
    lines += [f"  {n} x {p}" for p, n in problems.most_common()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from sparkdl.options import renamed

    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=1, help="passes over the phases (default 1)")
    renamed(p, "--repeat", "--repeats")
    p.add_argument("--phase", action="append", choices=PHASES, help="only these phases (default all)")
    p.add_argument("--workdir", type=Path, help="keep the trials' folders here (default a temporary folder)")
    args = p.parse_args(argv)
    phases = args.phase or list(PHASES)
    trials: list[Trial] = []
    with tempfile.TemporaryDirectory(prefix="kill-matrix-") as tmp:
        root = args.workdir or Path(tmp)
        for i in range(1, args.repeats + 1):
            for phase in phases:
                folder = root / f"{i:02d}-{phase.replace(':', '_')}"
                try:
                    trial = run_trial(phase, folder)
                finally:
                    cleanup(folder / "cluster")
                trials.append(trial)
                verdict = "ok" if trial.passed else "FAILED: " + "; ".join(trial.problems)
                print(f"[{i}/{args.repeats}] {phase:<18} {trial.seconds:5.0f} s  {verdict}", flush=True)
    print()
    print(tally(trials))
    return 0 if all(t.passed for t in trials) else 1


if __name__ == "__main__":
    from sparkdl.cli import run_cli  # SIGTERM and SIGHUP unwind: the temporary folders go

    sys.exit(run_cli(main))
