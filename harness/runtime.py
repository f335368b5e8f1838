"""A runtime's checks: is it prepared, does its Java start, do its Python and Spark report the declared versions.

``sparkdl runtime doctor`` prints them for the runtimes it is given (:mod:`harness.cli.runtime`, the command that
also lists, prepares and locks runtimes), ``sparkdl doctor`` for every built-in runtime (:mod:`harness.doctor`).
A runtime itself is :mod:`cluster.runtime`'s.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass

from cluster import runtime as runtimes
from cluster.runtime import Runtime, RuntimeProblem
from sparkdl.cli import run_cli

#: What ``doctor`` runs in a runtime's Python: its numpy and pyspark, and Spark's own version.
PROBE = ("import sys, numpy, pyspark; print(sys.version.split()[0], numpy.__version__, pyspark.__version__)")


@dataclass(frozen=True)
class DoctorLine:
    runtime: str
    check: str
    ok: bool
    detail: str

    def text(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.runtime:<8} {self.check:<8} {self.detail}"


def java_version_line(output: str) -> str:
    """The line of ``java -version``'s output that names the version.

    The launcher prints ``NOTE: Picked up JDK_JAVA_OPTIONS: ...`` (or ``Picked up JAVA_TOOL_OPTIONS``) first when
    those are set: that line says nothing about the Java the runtime found.
    """
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return next((line for line in lines if "Picked up" not in line), lines[0] if lines else "no output")


def prepare_name(runtime: Runtime) -> str:
    """What ``prepare`` resolves to this runtime: a built-in's name, else its file (quoted for a shell)."""
    return runtime.name if runtime.builtin else shlex.quote(str(runtime.source))


def doctor(runtime: Runtime, required: bool = True) -> list[DoctorLine]:
    """Is the runtime prepared, is its Java there, do its Python and Spark start and report the right versions.

    A runtime not prepared yet is a failure only when ``required`` (named on the command line).
    """
    say = lambda check, ok, detail: DoctorLine(runtime.name, check, ok, detail)  # noqa: E731
    if not runtimes.is_prepared(runtime):
        return [say("prepared", not required, f"not prepared: sparkdl runtime prepare {prepare_name(runtime)}"
                    + ("" if required else " (or the first campaign that needs it)"))]
    lines = [say("prepared", True, str(runtimes.home(runtime)))]
    try:
        env = runtimes.spark_env(runtime)
    except RuntimeProblem as e:
        return lines + [say("java", False, str(e))]
    java = subprocess.run([str(env.java), "-version"], capture_output=True, text=True, timeout=60)
    version = java_version_line(java.stderr or java.stdout)
    lines.append(say("java", java.returncode == 0, f"{version} ({env.java_home})"))
    probe = subprocess.run([str(env.python), "-c", PROBE], capture_output=True, text=True, timeout=120,
                           env=env.environ())
    if probe.returncode != 0:
        tail = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        return lines + [say("python", False, f"{env.python}: {tail}")]
    py, numpy, spark = probe.stdout.split()
    lines.append(say("python", True, f"{py} numpy {numpy} ({env.python})"))
    lines.append(say("spark", spark == runtime.spark_version,
                     f"pyspark {spark}" + ("" if spark == runtime.spark_version else
                                           f", declared {runtime.spark_version}: prepare it again")))
    return lines


if __name__ == "__main__":
    from harness.cli.runtime import main
    sys.exit(run_cli(main))
