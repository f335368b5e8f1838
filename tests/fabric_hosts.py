"""Test hosts on this machine: network namespaces joined by a bridge, each with its own sshd.

Every host is a network namespace with a veth pair into a private bridge (addresses in a
10.231.N.0/24 that exists only inside this machine), running Debian's openssh-server with
a throwaway host key and one authorized key, all under a temporary directory. Where
namespaces cannot be made (no root), sshd instances listen on separate loopback
addresses (127.0.0.2, 127.0.0.3, ...) instead. :meth:`HostSet.close` ends every process
in our namespaces and the sshd processes we started, then deletes the namespaces and the
bridge, also after a failure.
"""

from __future__ import annotations

import contextlib
import itertools
import getpass
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")
PASSPHRASE = "correct horse battery staple 8"  # of the encrypted test key; must never appear in any output


def _run(*argv: str) -> None:
    subprocess.run(list(argv), check=True, capture_output=True, text=True)


def keygen(path: Path, passphrase: str = "") -> Path:
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", "sparkdl-test", "-f", str(path))
    return path


def namespaces_work() -> bool:
    name = f"sdlprobe{os.getpid() % 100000}"
    try:
        _run("ip", "netns", "add", name)
    except (OSError, subprocess.CalledProcessError):
        return False
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        _run("ip", "netns", "del", name)
    return True


_HOST_SETS = itertools.count()


def _free_subnet() -> str:
    routes = subprocess.run(["ip", "-4", "route"], capture_output=True, text=True).stdout
    for n in range(os.getpid() % 200 + 20, 255):
        prefix = f"10.231.{n}"
        if f"{prefix}.0/24" not in routes:
            return prefix
    raise RuntimeError("no free 10.231.N.0/24 subnet for the test hosts")


@dataclass
class HostSet:
    root: Path
    addresses: list[str]
    port: int
    key: Path
    other_key: Path
    encrypted_key: Path
    known_hosts: Path
    mode: str  # "netns" or "loopback"
    namespaces: list[str] = field(default_factory=list)
    bridge: str | None = None
    sshd: list[subprocess.Popen] = field(default_factory=list)

    def inventory_text(self, base_dir: str, workers: list[tuple[str, int, str]], master: str | None = None,
                       key: Path | None = None, port: int | None = None, extra_ssh: str = "",
                       extra_remote: str = "") -> str:
        """An inventory for these hosts; ``workers`` is (address, cores, memory) per worker."""
        lines = ["[ssh]", f'user = "{getpass.getuser()}"', f'key_file = "{key or self.key}"', f"port = {port or self.port}",
                 f'known_hosts = "{self.known_hosts}"', "connect_timeout = 5", extra_ssh, "",
                 "[remote]", f'base_dir = "{base_dir}"', 'python = "/usr/bin/python3"', extra_remote, "",
                 "[master]", f'host = "{master or self.addresses[0]}"', "port = 7077", "webui_port = 8080", ""]
        for host, cores, memory in workers:
            lines += ["[[workers]]", f'host = "{host}"', f"cores = {cores}", f'memory = "{memory}"', ""]
        return "\n".join(lines)

    # -- faults (tests/test_remote_faults.py, bench/remote_faults.py); ``i`` is the host's index in ``addresses``
    def pids(self, i: int) -> list[int]:
        """Every process in host ``i``'s namespace (netns mode only)."""
        out = subprocess.run(["ip", "netns", "pids", self.namespaces[i]], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def crash(self, i: int) -> list[int]:
        """Host ``i`` crashes: SIGKILL every process in its namespace (its sshd too); returns their pids."""
        pids = self.pids(i)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.sshd[i].wait(10)
        return pids

    def kill_sshd(self, i: int) -> None:
        """Host ``i``'s sshd dies (the listener and its sessions); everything else there keeps running."""
        for pid in self.pids(i) if self.mode == "netns" else []:
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/exe").resolve() == SSHD.resolve():
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.sshd[i].pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.sshd[i].wait(10)

    def start_sshd(self, i: int) -> None:
        """Host ``i`` is back: its sshd starts again (with the same key and configuration)."""
        self.sshd[i] = _spawn_sshd(self, i)

    def mount_tmpfs(self, i: int, path: Path, size_mb: int) -> None:
        """A small disk at ``path`` as host ``i``'s processes see it (mounted in its sshd's mount namespace)."""
        path.mkdir(parents=True, exist_ok=True)
        _run("nsenter", "--target", str(self.sshd[i].pid), "--mount", "--", "mount", "-t", "tmpfs", "-o",
             f"size={size_mb}m", "tmpfs", str(path))

    def unmount(self, i: int, path: Path) -> None:
        subprocess.run(["nsenter", "--target", str(self.sshd[i].pid), "--mount", "--", "umount", "-l", str(path)],
                       capture_output=True)

    def link(self, i: int, up: bool) -> None:
        """Take host ``i``'s network link down (a partition: its processes keep running) or up again."""
        outer = f"{self.namespaces[i]}a"
        _run("ip", "link", "set", outer, "up" if up else "down")

    def close(self) -> None:
        for ns in self.namespaces:  # everything left in our namespaces is ours (Spark daemons, drivers)
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
        for proc in self.sshd:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        if self.bridge:
            subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)


def _wait_port(address: str, port: int, proc: subprocess.Popen, log: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd for {address} exited: {log.read_text()[-500:]}")
        with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1.0):
            return
        time.sleep(0.1)
    raise RuntimeError(f"sshd for {address}:{port} did not listen within {timeout} s")


def _sshd_config(root: Path, i: int, address: str, port: int, host_key: Path, authorized: Path) -> Path:
    cfg = root / f"sshd_{i}.conf"
    cfg.write_text("\n".join([
        f"ListenAddress {address}", f"Port {port}", f"HostKey {host_key}", f"AuthorizedKeysFile {authorized}",
        f"PidFile {root}/sshd_{i}.pid", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
        "UsePAM no", "StrictModes no", "PermitRootLogin prohibit-password", "Subsystem sftp internal-sftp",
        "LogLevel ERROR", "MaxStartups 50", "MaxSessions 50",
        # the suite's JVM options (tests/conftest.py) reach the hosts' JVMs as they reach this machine's
        *([f"SetEnv \"JDK_JAVA_OPTIONS={os.environ['JDK_JAVA_OPTIONS']}\""]
          if os.environ.get("JDK_JAVA_OPTIONS") else []),
        "",
    ]))
    return cfg


def _spawn_sshd(hosts: HostSet, i: int) -> subprocess.Popen:
    """Start host ``i``'s sshd (its configuration written by :func:`_sshd_config`) and wait until it listens."""
    cfg, log = hosts.root / f"sshd_{i + 1}.conf", hosts.root / f"sshd_{i + 1}.log"
    prefix_cmd = ["ip", "netns", "exec", hosts.namespaces[i]] if hosts.mode == "netns" else []
    with open(log, "ab") as out:
        proc = subprocess.Popen([*prefix_cmd, str(SSHD), "-D", "-e", "-f", str(cfg)], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    _wait_port(hosts.addresses[i], hosts.port, proc, log)
    return proc


def start_hosts(root: Path, count: int = 2, force_loopback: bool = False) -> HostSet:
    """``count`` hosts with sshd each; call :meth:`HostSet.close` when done (also on failure)."""
    if not SSHD.exists():
        raise RuntimeError("sshd is missing: apt-get install -y openssh-server")
    root.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):  # sshd's privilege separation directory (needed when run as root)
        Path("/run/sshd").mkdir(exist_ok=True)
    key, other, enc = keygen(root / "client_key"), keygen(root / "other_key"), keygen(root / "enc_key", PASSPHRASE)
    host_key = keygen(root / "host_key")
    authorized = root / "authorized_keys"
    authorized.write_text((root / "client_key.pub").read_text() + (root / "enc_key.pub").read_text())
    os.chmod(authorized, 0o600)
    mode = "loopback" if force_loopback or not namespaces_work() else "netns"
    # A name of its own per host set: a namespace's veth pair is destroyed asynchronously after `ip netns
    # delete`, so the next set of the same process reusing the names met "File exists" (a failure seen in CI,
    # right after a failed test's close). 3 + 5 + 2 + 3 characters: under the kernel's 15.
    tag = f"sdl{os.getpid() % 100000}{next(_HOST_SETS) % 100:02d}"
    hosts = HostSet(root, [], 22, key, other, enc, root / "known_hosts", mode)
    try:
        if mode == "netns":
            prefix = _free_subnet()
            hosts.bridge = f"{tag}br"
            _run("ip", "link", "add", hosts.bridge, "type", "bridge")
            _run("ip", "addr", "add", f"{prefix}.1/24", "dev", hosts.bridge)
            _run("ip", "link", "set", hosts.bridge, "up")
            for i in range(1, count + 1):
                ns, outer, inner = f"{tag}h{i}", f"{tag}h{i}a", f"{tag}h{i}b"
                address = f"{prefix}.{i + 1}"
                _run("ip", "netns", "add", ns)
                hosts.namespaces.append(ns)
                _run("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
                _run("ip", "link", "set", inner, "netns", ns)
                _run("ip", "link", "set", outer, "master", hosts.bridge)
                _run("ip", "link", "set", outer, "up")
                _run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{address}/24", "dev", inner)
                _run("ip", "netns", "exec", ns, "ip", "link", "set", inner, "up")
                _run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
                hosts.addresses.append(address)
        else:
            hosts.port = 22000 + os.getpid() % 20000
            hosts.addresses = [f"127.0.0.{i + 1}" for i in range(1, count + 1)]
        pub = (root / "host_key.pub").read_text().split()
        known = []
        for i, address in enumerate(hosts.addresses, start=1):
            _sshd_config(root, i, address, hosts.port, host_key, authorized)
            hosts.sshd.append(_spawn_sshd(hosts, i - 1))
            name = address if hosts.port == 22 else f"[{address}]:{hosts.port}"
            known.append(f"{name} {pub[0]} {pub[1]}")
        hosts.known_hosts.write_text("\n".join(known) + "\n")
        return hosts
    except BaseException:
        hosts.close()
        raise


#: Where the slow Fabric tests keep what is costly to build (a wheelhouse of the pinned stack, a provisioned base),
#: one folder per key of the stack it was built from; shared by checkouts and runs of the suite.
LAB_CACHE = Path.home() / ".cache" / "sparkdl-lab"

#: A folder of another key untouched this long is left over from an older stack: removed (each is 1-3 GB, and
#: a machine whose CI shares the disk with its sessions ran out of space at 2 GB a stack change).
STALE_AFTER_S = 24 * 3600


def lab_cache(kind: str, key: str, root: Path = LAB_CACHE, now: float | None = None) -> Path:
    """``root/<kind>-<key>``, marked as in use; siblings of the same kind left untouched a day are removed.

    A sibling whose lock another process holds (a run of the suite on that stack) is kept, however old.
    """
    import fcntl
    import shutil

    dest = root / f"{kind}-{key}"
    root.mkdir(parents=True, exist_ok=True)
    now = time.time() if now is None else now
    for other in root.glob(f"{kind}-*"):
        if other == dest or other.suffix == ".lock" or not other.is_dir():
            continue
        if now - other.stat().st_mtime < STALE_AFTER_S:
            continue
        lock_path = other.parent / f"{other.name}.lock"
        with open(lock_path, "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # in use
            shutil.rmtree(other, ignore_errors=True)
        lock_path.unlink(missing_ok=True)
    if dest.is_dir():
        os.utime(dest)
    return dest
