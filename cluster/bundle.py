"""What ``provision`` ships to each host: the project as a wheel, its constraints, and the bootstrap.

Hosts without a package index get a wheelhouse instead (``fab wheelhouse``): wheels of the
tool's pinned stack and, for each runtime named, of that runtime's lock (``uv`` installs the
runtime on the host from it, with no index). :func:`missing_runtime_wheels` says what a
wheelhouse lacks for a runtime before anything is shipped.

The digest is a SHA-256 of the project's source files (package folders, setup.cfg,
pyproject.toml, constraints.txt, README.md), so it changes exactly when the code or the
pinned stack changes; a host whose installed digest matches is not touched again. The
wheel is built from a clean copy of those files, never from the working tree (which
holds the venv, runs and caches).
"""

from __future__ import annotations

import configparser
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import cluster
from cluster.errors import ClusterError
from cluster.runtime import Runtime

TOP_FILES = ("setup.cfg", "pyproject.toml", "constraints.txt", "README.md")


class BundleError(ClusterError):
    """The project's source tree is not available or its wheel cannot be built."""


@dataclass(frozen=True)
class Bundle:
    digest: str
    wheel: Path
    constraints: Path
    bootstrap: Path

    @property
    def short(self) -> str:
        return self.digest[:16]


def project_root() -> Path:
    """The source tree this code runs from (an editable install or a checkout)."""
    root = Path(cluster.__file__).resolve().parent.parent
    missing = [f for f in TOP_FILES[:3] if not (root / f).is_file()]
    if missing:
        raise BundleError(f"provision needs the project's source tree, but {root} has no {', '.join(missing)}: run it "
                          "from a checkout installed with `make venv`")
    return root


def package_dirs(root: Path) -> list[str]:
    """Top-level packages named in setup.cfg ``[options.packages.find] include``."""
    cfg = configparser.ConfigParser()
    cfg.read(root / "setup.cfg")
    raw = cfg.get("options.packages.find", "include", fallback="")
    names = sorted({p.strip().rstrip("*").rstrip(".") for p in raw.split() if p.strip()})
    return [n for n in names if (root / n / "__init__.py").is_file()]


def source_files(root: Path) -> list[Path]:
    """Every file that goes into the wheel, relative to ``root``, sorted."""
    files = [Path(f) for f in TOP_FILES if (root / f).is_file()]
    for pkg in package_dirs(root):
        for path in (root / pkg).rglob("*"):
            rel = path.relative_to(root)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix not in (".pyc", ".pyo"):
                files.append(rel)
    return sorted(files)


def digest(root: Path, files: list[Path]) -> str:
    h = hashlib.sha256()
    for rel in files:
        data = (root / rel).read_bytes()
        h.update(f"{rel.as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def build_bundle(dest: Path, root: Path | None = None) -> Bundle:
    """Build (or reuse) the bundle for the current source under ``dest``."""
    root = root or project_root()
    files = source_files(root)
    d = digest(root, files)
    out = dest / d[:16]
    wheels = sorted(out.glob("*.whl"))
    if not wheels:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="sparkdl-src-") as tmp:
            src = Path(tmp) / "src"
            for rel in files:
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / rel, src / rel)
            proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(src)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
                raise BundleError(f"building the project wheel failed: {tail}")
        wheels = sorted(out.glob("*.whl"))
        if len(wheels) != 1:
            raise BundleError(f"expected one wheel in {out}, found {len(wheels)}: delete {out} and retry")
    shutil.copy2(root / "constraints.txt", out / "constraints.txt")
    shutil.copy2(Path(__file__).with_name("bootstrap.py"), out / "bootstrap.py")
    return Bundle(digest=d, wheel=wheels[0], constraints=out / "constraints.txt", bootstrap=out / "bootstrap.py")


def _pip_wheel(args: list[str], what: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise BundleError(f"{what} failed: {tail}")


def build_wheelhouse(dest: Path, bundle: Bundle, runtimes: Sequence[Runtime] = ()) -> Path:
    """Wheels of the whole pinned stack in ``dest``, and of each runtime's lock, for hosts without an index."""
    dest.mkdir(parents=True, exist_ok=True)
    _pip_wheel(["-c", str(bundle.constraints), "-w", str(dest), str(bundle.wheel)], f"building the wheelhouse in {dest}")
    for own in dest.glob(f"{bundle.wheel.name.split('-')[0]}-*.whl"):
        own.unlink()  # the project itself is shipped apart, as the bundle
    for rt in runtimes:
        links = [a for f in rt.find_links for a in ("--find-links", f)]  # e.g. a CPU build of torch
        _pip_wheel(["--no-deps", *links, "-r", str(_lock_of(rt)), "-w", str(dest)],
                   f"building the wheels of runtime {rt.name} in {dest}")
    return dest


def _lock_of(rt: Runtime) -> Path:
    if rt.lock is None or not rt.lock.is_file():
        raise BundleError(f"runtime {rt.name} has no lock file, and hosts without an index install runtimes from "
                          f"their lock: run `sparkdl runtime lock {rt.source}` and name it in lock =")
    return rt.lock


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def locked_packages(rt: Runtime) -> list[tuple[str, str]]:
    """The ``(name, version)`` pairs of a runtime's lock (``name==version`` lines; comments and markers dropped)."""
    pins = []
    for line in _lock_of(rt).read_text().splitlines():
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^]]*\])?\s*==\s*([^\s;#\\]+)", line)
        if m:
            pins.append((m.group(1), m.group(2)))
    return pins


def missing_runtime_wheels(wheelhouse: Path, rt: Runtime) -> list[str]:
    """The ``name==version`` pins of the runtime's lock that have no wheel in ``wheelhouse``."""
    have = set()
    for wheel in wheelhouse.glob("*.whl"):
        parts = wheel.name.split("-")
        if len(parts) >= 2:
            have.add((_normal(parts[0]), parts[1]))
    return [f"{n}=={v}" for n, v in locked_packages(rt) if (_normal(n), v) not in have]
