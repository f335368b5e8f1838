"""Hostile runtime files: requirements and lock files through the one reader, globs kept in site-packages,
one-line descriptions, ``lock --out`` and ``doctor`` naming what they can use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cluster import runtime as runtimes
from cluster.runtime import RuntimeFileError

ROOT = Path(__file__).resolve().parent.parent
HEAD = '[runtime]\nname = "spark35"\nspark = "3.5.3"\njava = [17]\n'


def cli(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.runtime", *argv], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


def runtime_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "rt.toml"
    path.write_text(HEAD + body)
    return path


def _special(tmp_path: Path, kind: str) -> str:
    """A requirements or lock file name that is no regular file: a FIFO, a device, a symlink loop, a folder."""
    if kind == "fifo":
        os.mkfifo(tmp_path / "special")
    elif kind == "device":
        (tmp_path / "special").symlink_to("/dev/zero")
    elif kind == "loop":
        (tmp_path / "special").symlink_to(tmp_path / "other")
        (tmp_path / "other").symlink_to(tmp_path / "special")
    else:
        (tmp_path / "special").mkdir()
    return "special"


KINDS = {"fifo": "FIFO", "device": "FIFO, socket or device", "loop": "symbolic link loop", "folder": "a folder"}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_requirements_file_that_is_not_a_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = runtime_file(tmp_path, f'requirements = "{_special(tmp_path, kind)}"\n')
    with pytest.raises(RuntimeFileError) as caught:
        runtimes.load_runtime(path)
    assert KINDS[kind] in str(caught.value) and "requirements" in str(caught.value)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_lock_file_that_is_not_a_file_is_refused_not_ignored(tmp_path: Path, kind: str) -> None:
    name = _special(tmp_path, kind)
    rt = runtimes.load_runtime(runtime_file(tmp_path, f'requirements = ["pyspark==3.5.3"]\nlock = "{name}"\n'))
    with pytest.raises(RuntimeFileError) as caught:
        rt.key()  # what the environment is made of: a lock that cannot be read is never replaced in silence
    assert KINDS[kind] in str(caught.value) and "lock file" in str(caught.value)
    done = cli("doctor", str(tmp_path / "rt.toml"))
    assert done.returncode == 2 and KINDS[kind] in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_lock_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.lock").write_bytes(b"# pad\n" * ((runtimes.MAX_LOCK_BYTES // 6) + 10))
    rt = runtimes.load_runtime(runtime_file(tmp_path, 'requirements = ["pyspark==3.5.3"]\nlock = "big.lock"\n'))
    with pytest.raises(RuntimeFileError, match="bytes"):
        rt.lock_text()


def test_a_readable_requirements_file_and_lock_are_the_values_given(tmp_path: Path) -> None:
    (tmp_path / "req.txt").write_text("pyspark==3.5.3  # Spark\nnumpy<2\n\n")
    (tmp_path / "x.lock").write_text("numpy==1.26.4\npyspark==3.5.3\n")
    rt = runtimes.load_runtime(runtime_file(tmp_path, 'requirements = "req.txt"\nlock = "x.lock"\n'))
    assert rt.requirements == ("pyspark==3.5.3", "numpy<2")
    assert rt.lock_text() == "numpy==1.26.4\npyspark==3.5.3\n"


@pytest.mark.parametrize("pattern", ["/usr/share/java/*.jar", "../outside/*.jar", "a/../../b.jar"])
@pytest.mark.parametrize("key", ["class_path", "natives_jar"])
def test_a_glob_outside_site_packages_is_refused(tmp_path: Path, key: str, pattern: str) -> None:
    value = f'["{pattern}"]' if key == "class_path" else f'"{pattern}"'
    path = runtime_file(tmp_path, f'requirements = ["pyspark==3.5.3"]\n[jvm]\n{key} = {value}\n')
    with pytest.raises(RuntimeFileError, match="relative to the runtime's site-packages"):
        runtimes.load_runtime(path)
    done = cli("list", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr and "NotImplementedError" not in done.stderr


def test_an_absolute_glob_would_have_crashed_the_environment_lookup(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError):  # why it is refused at load: pathlib cannot glob it
        sorted(tmp_path.glob("/usr/share/java/*.jar"))


@pytest.mark.parametrize("description", ["one\\nspark35b  3.5.3  17  3.11  yes  forged", "red \\u001b[31m text",
                                         "bell \\u0007", "rtl \\u202e", "x" * 300])
def test_a_description_that_would_forge_rows_in_list_is_refused(tmp_path: Path, description: str) -> None:
    path = runtime_file(tmp_path, f'description = "{description}"\nrequirements = ["pyspark==3.5.3"]\n')
    done = cli("list", str(path))
    assert done.returncode == 2, done.stdout
    assert "description" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "forged" not in done.stdout and "\x1b" not in done.stdout + done.stderr


def test_a_plain_description_is_listed_as_given(tmp_path: Path) -> None:
    path = runtime_file(tmp_path, 'description = "Spark 3.5 — for the old jobs"\nrequirements = ["pyspark==3.5.3"]\n')
    done = cli("list", "--format", "json", str(path))
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(done.stdout)[-1]["description"] == "Spark 3.5 — for the old jobs"


def test_lock_out_into_a_missing_folder_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    path = runtime_file(tmp_path, 'requirements = ["pyspark==3.5.3"]\n')
    done = cli("lock", str(path), "--out", str(tmp_path / "missing" / "x.lock"))
    assert done.returncode == 2 and "no such folder" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "missing").exists()
    os.mkfifo(tmp_path / "fifo.lock")
    done = cli("lock", str(path), "--out", str(tmp_path / "fifo.lock"))
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
    done = cli("lock", str(path), "--out", str(tmp_path / ("x" * 300)))
    assert done.returncode == 2 and "over 250 bytes" in done.stderr, done.stderr


def test_doctor_names_a_runtime_file_as_prepare_takes_it_and_an_empty_name_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "my runtimes"
    empty.mkdir()
    path = runtime_file(empty, 'requirements = ["pyspark==3.5.3"]\n')
    done = subprocess.run([sys.executable, "-m", "harness.runtime", "doctor", str(path)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "SPARKDL_RUNTIMES": str(tmp_path / "cache")})
    assert done.returncode == 4, done.stderr
    suggested = done.stdout.split("sparkdl runtime prepare ", 1)[1].split("\n")[0].strip()
    import shlex

    (target,) = shlex.split(suggested)
    assert runtimes.resolve(target).source == path.resolve()  # what it suggests, prepare resolves to this runtime
    for name in ("", "  "):
        done = cli("doctor", name)
        assert done.returncode == 2 and "empty runtime name" in done.stderr and "'.'" not in done.stderr, done.stderr
        assert ": ." not in done.stderr


@pytest.mark.parametrize("key", ["requirements", "lock"])
def test_a_file_name_part_over_255_bytes_is_refused_not_a_traceback(tmp_path: Path, key: str) -> None:
    name = "x" * 300  # found by bench/fuzz.py: os.stat raised ENAMETOOLONG out of Path.exists()
    body = f'requirements = "{name}"\n' if key == "requirements" else f'requirements = ["pyspark==3.5.3"]\nlock = "{name}"\n'
    path = runtime_file(tmp_path, body)
    with pytest.raises(RuntimeFileError, match="too long"):
        runtimes.load_runtime(path)
    done = cli("doctor", str(path))
    assert done.returncode == 2 and "too long" in done.stderr and "Traceback" not in done.stderr, done.stderr
