"""Install the project into a venv on a remote host; shipped and run by ``cluster.remote.provision``.

    python3 bootstrap.py --base /opt/sparkdl --digest D --wheel W --constraints C [--wheelhouse DIR]

Runs under the host's system Python before the venv exists, so it uses the standard
library only and old-Python syntax (it must live long enough to say the Python is too old).
It is idempotent: ``<base>/venv/.sparkdl-digest`` records the installed bundle, and a host
whose digest matches is left alone. A lock file serialises hosts that share one
``base`` (e.g. an NFS home directory). It prints one JSON object on stdout; on failure
it prints one line on stderr and exits 1 (2 for a Python that cannot run the project).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys

NEEDED = (3, 11)
STAMP = ".sparkdl-digest"


def facts() -> dict:
    """What the host offers: CPUs and memory (MB), for the capacity checks."""
    mem_mb = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_mb = int(line.split()[1]) // 1024
    except OSError:
        pass
    return {"cpus": os.cpu_count() or 1, "memory_mb": mem_mb,
            "python_version": "%d.%d.%d" % sys.version_info[:3]}


def _run(argv: list, what: str) -> None:
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        tail = " | ".join(line.strip() for line in proc.stdout.strip().splitlines()[-3:])
        raise RuntimeError("%s failed (exit %d): %s" % (what, proc.returncode, tail))


def install(base: str, digest: str, wheel: str, constraints: str, wheelhouse: str | None) -> dict:
    venv = os.path.join(base, "venv")
    python = os.path.join(venv, "bin", "python")
    stamp = os.path.join(venv, STAMP)
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, ".provision.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(stamp) as f:
                installed = f.read().strip()
        except OSError:
            installed = ""
        if installed == digest and os.access(python, os.X_OK):
            return {"changed": False, "venv": venv, "digest": digest}
        if not os.access(python, os.X_OK):
            _run([sys.executable, "-m", "venv", venv],
                 "creating the venv with %s (install the python3-venv package for it)" % sys.executable)
        pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-c", constraints]
        if wheelhouse:
            pip += ["--no-index", "--find-links", wheelhouse]
        _run(pip + [wheel], "pip install of the project")
        # The bundle's version number does not change with its contents: install it again, alone.
        _run(pip + ["--no-deps", "--force-reinstall", wheel], "pip reinstall of the project")
        tmp = stamp + ".tmp"
        with open(tmp, "w") as f:
            f.write(digest + "\n")
        os.replace(tmp, stamp)
        return {"changed": True, "venv": venv, "digest": digest}


def main(argv: list | None = None) -> int:
    p = argparse.ArgumentParser(prog="bootstrap.py", description="install the project into <base>/venv")
    p.add_argument("--base", required=True)
    p.add_argument("--digest", required=True)
    p.add_argument("--wheel", required=True)
    p.add_argument("--constraints", required=True)
    p.add_argument("--wheelhouse")
    p.add_argument("--facts-only", action="store_true")
    args = p.parse_args(argv)
    if sys.version_info[:2] != NEEDED:
        sys.stderr.write("%s is Python %d.%d; the project needs %d.%d: install python%d.%d and set remote.python "
                         "to it in the inventory\n" % ((sys.executable,) + sys.version_info[:2] + NEEDED + NEEDED))
        return 2
    if args.facts_only:
        print(json.dumps(facts()))
        return 0
    try:
        result = install(args.base, args.digest, args.wheel, args.constraints, args.wheelhouse)
    except (RuntimeError, OSError) as e:
        sys.stderr.write("%s\n" % e)
        return 1
    result.update(facts())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
