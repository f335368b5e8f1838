"""Check that this machine can run the project: what ``sparkdl doctor`` checks.

:func:`run_checks` gives one :class:`Check` per piece (Python, the tool's environment, each runtime's Java, Python
and Spark, BigDL's jars, the MNIST sample, the cloudpickle alias, free ports), OK or with a one-line fix;
``sparkdl doctor`` (:mod:`harness.cli.doctor`) prints them.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Callable

from cluster.errors import ClusterError
from cluster.local import port_free
from sparkdl.cli import run_cli
from cluster.sparkenv import SparkEnv
from cluster.runtime import discover


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def _python() -> Check:
    ok = sys.version_info[:2] == (3, 11)
    return Check("python", ok, f"{sys.version.split()[0]} at {sys.executable}" if ok else
                 f"{sys.version.split()[0]}: the pinned stack is tested on Python 3.11; run `make venv` with python3.11")


def _tool_environment() -> Check:
    """The tool's own environment: numpy 2, and no Spark or BigDL (those live in the runtimes)."""
    import importlib.util

    try:
        numpy = version("numpy")
    except PackageNotFoundError:
        return Check("tool environment", False, "numpy is not installed: run `make venv`")
    stray = [name for name in ("pyspark", "bigdl") if importlib.util.find_spec(name) is not None]
    ok = int(numpy.split(".")[0]) >= 2 and not stray
    return Check("tool environment", ok, f"numpy {numpy}, no pyspark or BigDL" if ok else
                 f"numpy {numpy}{', with ' + ' and '.join(stray) if stray else ''}: the tool's environment has numpy "
                 ">= 2 and neither (they belong to runtimes); rebuild it: make clean venv")


def _runtime(name: str, required: bool) -> list[Check]:
    """A runtime's own checks (harness.runtime doctor); one that is not prepared yet is fine unless required."""
    from cluster import runtime as runtimes
    from harness.runtime import doctor

    rt = runtimes.resolve(name)
    if not runtimes.is_prepared(rt) and not required:
        return [Check(f"runtime {name}", True, "not prepared yet: the first campaign that needs it prepares it "
                                               f"(or sparkdl runtime prepare {name})")]
    lines = doctor(rt)
    return [Check(f"runtime {name}", all(line.ok for line in lines),
                  "; ".join(f"{line.check} {line.detail}" for line in lines if not line.ok) or
                  "; ".join(line.detail for line in lines[1:]))]


def _jars(env: SparkEnv) -> Check:
    missing = [str(j) for j in env.jars if not j.is_file()]
    return Check("bigdl jars", not missing, ", ".join(j.name for j in env.jars) if not missing else
                 f"missing {missing}: prepare the bigdl runtime again (sparkdl runtime prepare bigdl)")


def _sample() -> Check:
    from jobs.errors import DataError
    from jobs.mnist import sample_path

    try:
        return Check("mnist sample", True, str(sample_path()))
    except DataError as e:
        return Check("mnist sample", False, str(e))


def _cloudpickle(env: SparkEnv) -> Check:
    """In the BigDL runtime's Python, started as a job's is (the sitecustomize first): pyspark 3.1.3 pickles 3.11."""
    code = ("import sys; assert sys.modules['pyspark.cloudpickle'].__name__ == 'cloudpickle'; "
            "from pyspark.serializers import CloudPickleSerializer as S; "
            "f = (lambda x: x + 1); assert S().loads(S().dumps(f))(1) == 2; print('ok')")
    out = subprocess.run([str(env.python), "-c", code], capture_output=True, text=True, timeout=120,
                         env=env.environ())
    ok = out.returncode == 0 and out.stdout.strip() == "ok"
    return Check("cloudpickle alias", ok, "pyspark 3.1.3 pickles Python 3.11 functions" if ok else
                 f"{(out.stderr.strip().splitlines() or ['?'])[-1]}: prepare the bigdl runtime again")


def _ports(host: str, ports: list[int]) -> Check:
    taken = [p for p in ports if not port_free(host, p)]
    return Check("ports", not taken, f"{', '.join(map(str, ports))} free on {host}" if not taken else
                 f"{', '.join(map(str, taken))} taken on {host}: `sparkdl cluster stop`, or start with "
                 "--port/--webui-port")


def _archive(env: SparkEnv) -> Check:
    """The class-data archive local runs share: built, or built by the first local campaign (not a fault)."""
    from cluster import cds

    path = cds.archive_path(env)
    return Check("class-data archive", True, str(path) if path.is_file() else
                 "not built yet: the first local campaign builds it (~20 s), or `python -m cluster.cds`")


def run_checks(host: str = "127.0.0.1", ports: tuple[int, ...] = (7077, 8080)) -> list[Check]:
    checks = [_python(), _tool_environment(), *_runtime("bigdl", required=True),
              *(c for name in ("spark4", "torch") for c in _runtime(name, required=False))]
    try:
        env = discover(local_ip=host, runtime="bigdl")
    except ClusterError as e:
        return checks + [Check("bigdl runtime", False, str(e))]
    steps: list[Callable[[], Check]] = [lambda: _jars(env), lambda: _archive(env), _sample,
                                        lambda: _cloudpickle(env), lambda: _ports(host, list(ports))]
    return checks + [step() for step in steps]


if __name__ == "__main__":
    from harness.cli.doctor import main
    sys.exit(run_cli(main))
