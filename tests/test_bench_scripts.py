"""Every bench script still starts: its imports resolve and its options parse (`--help`), without running it.

Benches are not tests (they take minutes and print figures), but one whose imports rotted would only
be found by the next person who needs its figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
#: empty_app.py is the application the floors submit and workdir.py a helper the benches import: not commands
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name not in ("__init__.py", "empty_app.py", "workdir.py"))


def test_the_bench_folder_has_its_scripts():
    assert {"campaign.py", "jit.py", "kill_matrix.py", "overhead.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_bench_script_starts(script):
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True,
                          timeout=120, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: ")


def test_the_fresh_machine_bench_starts_under_the_base_python_without_the_venv():
    """bench/fresh_demo.py is run as ``python3 bench/fresh_demo.py`` before any venv exists: under the base
    interpreter (not the venv's, whose .pth puts the project on sys.path), from another folder."""
    base = getattr(sys, "_base_executable", sys.executable)
    done = subprocess.run([base, "-s", str(BENCH / "fresh_demo.py"), "--help"], capture_output=True, text=True,
                          timeout=120, cwd="/", env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: ")


def test_every_stage_of_the_fresh_machine_bench_is_a_command_make_runs():
    """The bench finds its stages by the commands make echoes: a Makefile change that renames one would put its
    time into the stage before it without a word."""
    code = "import json, sys; sys.path.insert(0, sys.argv[1]); import fresh_demo; print(json.dumps(fresh_demo.STAGES))"
    stages = json.loads(subprocess.run([sys.executable, "-c", code, str(BENCH)], capture_output=True, text=True,
                                       timeout=60, check=True).stdout)  # in a process of its own: it edits sys.path
    done = subprocess.run(["make", "-n", "-B", "demo", "venv-test", "PYTHON=python3.11"], capture_output=True,
                          text=True, timeout=60, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    for name, start in stages:
        assert any(line.startswith(start) for line in lines), (name, start)


def test_the_runtimes_prepare_needs_only_the_standard_library():
    """make venv prepares the BigDL runtime while uv installs the tool's packages, with ``python -S``: the prepare
    and the archive's dump must import nothing from site-packages."""
    code = "import harness.runtime, cluster.cds, sys; print(sorted(m for m in ('psutil', 'numpy') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path.insert(0, '.'); {code}"],
                          capture_output=True, text=True, timeout=60, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_fresh_machine_benchs_jvm_probe_times_the_bigdl_runtimes_java(tmp_path):
    """The JVM probe runs the prepared BigDL runtime's own java on Spark's launcher; no runtime there, no figure.
    (In a process of its own: importing the bench puts the project first on sys.path.)"""
    from cluster import runtime as runtimes

    bigdl = runtimes.resolve("bigdl")
    assert runtimes.is_prepared(bigdl)
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import fresh_demo; "
            "print(fresh_demo.jvm_probe(Path(sys.argv[2]), repeats=1), fresh_demo.jvm_probe(Path(sys.argv[3])))")
    done = subprocess.run([sys.executable, "-c", code, str(BENCH), str(runtimes.home(bigdl).parent), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    probe, empty = done.stdout.strip().rsplit(" ", 1)
    wall, cpu = (float(x) for x in probe.strip("()").split(", "))
    assert 0.1 < wall < 60 and 0.1 < cpu < 120 and empty == "None"  # loading Spark's launcher classes is not instant


def test_a_count_of_repetitions_is_spelled_repeats_in_every_bench():
    """``--repeats N`` counts repetitions; ``--repeat`` alone is bench/search.py's switch (a trial on a measured point
    runs again), so the count's old spelling is refused with the new one where it was used. (Only at parse time:
    in a bench whose only such option is ``--repeats``, argparse would take ``--repeat`` as its abbreviation and run.)"""
    for script in ("daemons.py", "kill_matrix.py", "logparse.py", "remote_faults.py", "splitplot.py"):
        done = subprocess.run([sys.executable, str(BENCH / script), "--repeat", "2"], capture_output=True,
                              text=True, timeout=120, cwd=BENCH.parent)
        assert done.returncode == 2, (script, done.stderr[-2000:])
        assert done.stderr.strip().splitlines()[-1] == (
            "error: --repeat 2 is now --repeats 2: write --repeats 2 (the rest of the command unchanged)"), script


def test_the_search_benchs_start_up_option_is_spelled_as_the_searchs():
    """bench/search.py takes optimize.search's ``--startup``; the old ``--start`` is refused with it, at parse time."""
    done = subprocess.run([sys.executable, str(BENCH / "search.py"), "--start", "random"], capture_output=True,
                          text=True, timeout=120, cwd=BENCH.parent)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (
        "error: --start random is now --startup random: write --startup random (the rest of the command unchanged)")


def test_the_campaign_bench_judges_the_goal_only_when_its_interval_is_on_one_side():
    """bench/campaign.py --repeats: the mean overhead's t interval over rounds, and a verdict on the 2 s goal that
    says when the rounds cannot tell. The interval is checked against the closed form with the textbook quantile
    t(0.975, 2) = 4.3027 (a subprocess: the bench puts the project first on sys.path when imported)."""
    code = """
import json
from bench.campaign import overhead_verdict
print(json.dumps([overhead_verdict("demo after", r) for r in ([1.5, 1.6, 1.7], [2.5, 2.6, 2.7], [1.5, 2.5, 3.5])]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    met, not_met, unsure = json.loads(done.stdout)
    half = 4.302652729911275 * 0.1 / 3 ** 0.5  # sd 0.1 over 3 rounds
    assert f"mean overhead above the floor 1.60 s over 3 rounds (1.5, 1.6, 1.7)" in met
    assert f"95 % interval {1.6 - half:.2f} to {1.6 + half:.2f} s: the 2 s goal is met" in met
    assert not_met.endswith("the 2 s goal is not met")
    assert unsure.endswith("3 rounds cannot tell whether the 2 s goal is met")


@pytest.mark.parametrize("repeats, why", [("0", "must be > 0, got '0'"), ("two", "must be a int, got 'two'")])
def test_the_campaign_bench_refuses_a_bad_number_of_rounds_in_one_line(repeats, why):
    done = subprocess.run([sys.executable, str(BENCH / "campaign.py"), "--repeats", repeats], capture_output=True,
                          text=True, timeout=120, cwd=BENCH.parent)
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1].endswith(f"argument --repeats: --repeats {why}")


def test_the_campaign_benchs_cpu_meter_charges_a_process_that_became_an_executor_by_exec():
    """bench/campaign.py's CpuMeter reads a process's command line once, and again after an exec: a shell that
    execs into a process with an executor's command line (as spark-class execs into the JVM) is charged as an
    executor, with the CPU it burned (measured by the process itself), to the segment current when it started.
    The markers are this test's own: the suite's real executors and drivers run beside it."""
    code = r"""
import json, os, subprocess, sys, time, uuid
from bench.campaign import CpuMeter
burn = "import time\nt = time.thread_time()\nwhile time.thread_time() - t < 0.6: pass\nprint(time.process_time())\ntime.sleep(0.4)"
mark = f"executor-{uuid.uuid4().hex}"  # made here: not in this process's own command line
env = dict(os.environ, PY=sys.executable, CODE=burn, MARK=mark)
with CpuMeter(executor=mark.encode(), driver=f"driver-{uuid.uuid4().hex}".encode()) as meter:
    meter.mark("run 1")
    done = subprocess.run(["sh", "-c", 'sleep 0.3; exec "$PY" -c "$CODE" "$MARK"'], env=env, capture_output=True,
                          text=True, check=True)
    time.sleep(3 * meter.period_s)
    meter.mark("run 2")
    time.sleep(3 * meter.period_s)
print(json.dumps({"own": float(done.stdout), "one": meter.of("run 1"), "two": meter.of("run 2")}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    assert got["own"] >= 0.6
    assert got["one"]["executors"] == pytest.approx(got["own"], abs=0.1)
    assert got["one"]["driver_jvm"] == got["one"]["driver_py"] == 0
    assert got["two"]["total"] == 0


def test_the_campaign_bench_alternates_the_order_of_its_arms_over_rounds():
    """With --repeats, neither arm always runs second (after the other warmed the caches): odd rounds run the arms
    as given, even rounds in reverse; one arm is one arm in every round."""
    code = """
import json
from bench.campaign import round_order
print(json.dumps([round_order(("before", "after"), r) for r in (1, 2, 3, 4)] + [round_order(("after",), 2)]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [["before", "after"], ["after", "before"], ["before", "after"],
                                       ["after", "before"], ["after"]]
