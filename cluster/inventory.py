"""The inventory: which machines form a remote Spark standalone cluster, read from TOML.

    [ssh]
    user = "debian"
    key_file = "~/.ssh/id_ed25519"
    port = 22                          # optional
    known_hosts = "~/.ssh/known_hosts" # optional; host keys are always checked
    passphrase_env = "SPARKDL_SSH_PASSPHRASE"  # optional: the NAME of a variable holding it

    [remote]
    base_dir = "/opt/sparkdl"          # the same path on every host
    python = "python3.11"              # optional, default python3
    wheelhouse = "wheelhouse"          # optional: local wheels to ship to hosts without an index: the
                                       # tool's and its runtimes' (fab wheelhouse --runtime bigdl,spark4)
    host_wait = 120                    # optional: seconds a run's retry waits for a lost host to answer SSH again
    min_free = "2g"                    # optional: a campaign warns about a host with less free disk for its workers

    [master]
    host = "10.0.0.10"
    spark_host = "10.0.0.10"           # optional: the address Spark binds (default: host)
    port = 7077
    webui_port = 8080

    [[workers]]
    host = "10.0.0.11"
    cores = 4
    memory = "6g"

Everything is checked by :func:`load_inventory` before any connection is made; a problem
is one line naming the field and the fix. Secrets never go in the file.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from cluster.errors import ClusterError
from sparkdl import config
from sparkdl.errors import EXIT_INPUT

DEFAULT_SSH_PORT = 22
DEFAULT_MASTER_PORT = 7077
DEFAULT_MASTER_WEBUI_PORT = 8080
DEFAULT_WORKER_WEBUI_PORT = 8081
SECRET_FIELDS = ("password", "passphrase", "secret", "token")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_USER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class InventoryError(ClusterError):
    """The inventory file is missing, not TOML, or has a bad field: bad input (exit 2), not the cluster."""

    exit_code = EXIT_INPUT


@dataclass(frozen=True)
class SSHSettings:
    user: str
    key_file: Path
    port: int = DEFAULT_SSH_PORT
    known_hosts: Path | None = None  # None: ~/.ssh/known_hosts
    passphrase_env: str | None = None
    use_agent: bool = False
    connect_timeout: float = 10.0
    accept_new_host_keys: bool = False

    def passphrase(self) -> str | None:
        """The key's passphrase from the environment (never stored, printed or logged)."""
        return os.environ.get(self.passphrase_env) if self.passphrase_env else None


@dataclass(frozen=True)
class RemoteSettings:
    base_dir: PurePosixPath
    python: str = "python3"
    wheelhouse: Path | None = None
    oversubscribe: bool = False
    host_wait_s: float = 120.0  # a run's retry waits this long for a lost host to answer SSH again
    min_free_mb: int = 2048  # below this much free disk under a host's work dirs, a campaign warns


@dataclass(frozen=True)
class MasterSpec:
    host: str
    spark_host: str
    port: int = DEFAULT_MASTER_PORT
    webui_port: int = DEFAULT_MASTER_WEBUI_PORT
    ssh_port: int | None = None


@dataclass(frozen=True)
class WorkerSpec:
    name: str  # worker-1, worker-2, ... in inventory order
    host: str
    spark_host: str
    cores: int
    memory_mb: int
    webui_port: int = DEFAULT_WORKER_WEBUI_PORT
    ssh_port: int | None = None


@dataclass(frozen=True)
class Inventory:
    path: Path
    ssh: SSHSettings
    remote: RemoteSettings
    master: MasterSpec
    workers: tuple[WorkerSpec, ...]

    @property
    def master_url(self) -> str:
        return f"spark://{self.master.spark_host}:{self.master.port}"

    @property
    def webui_url(self) -> str:
        return f"http://{self.master.spark_host}:{self.master.webui_port}"

    @property
    def hosts(self) -> tuple[str, ...]:
        """Every distinct SSH host, master first, in inventory order."""
        seen: dict[str, None] = {self.master.host: None}
        for w in self.workers:
            seen.setdefault(w.host, None)
        return tuple(seen)

    def ssh_port(self, host: str) -> int:
        if host == self.master.host and self.master.ssh_port:
            return self.master.ssh_port
        for w in self.workers:
            if w.host == host and w.ssh_port:
                return w.ssh_port
        return self.ssh.port


# ---------------------------------------------------------------- field checks


class _Table:
    """One TOML table with its dotted name, so every message can name the field."""

    def __init__(self, name: str, data: Any, allowed: tuple[str, ...]) -> None:
        if not isinstance(data, dict):
            raise InventoryError(f"{name} must be a table ([{name}]), got {type(data).__name__}")
        self.name, self.data = name, data
        for key in data:
            if key.lower() in SECRET_FIELDS or key.lower().endswith(("password", "passphrase")):
                raise InventoryError(
                    f"{self.field(key)}: do not put secrets in the inventory; use ssh-agent (use_agent = true) or name "
                    "an environment variable with passphrase_env")
            if key not in allowed:
                near = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {near[0]!r}?" if near else f"allowed: {', '.join(allowed)}"
                raise InventoryError(f"{self.field(key)}: unknown field; {hint}")

    def field(self, key: str) -> str:
        return f"{self.name}.{key}"

    def get(self, key: str, kind: type, default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise InventoryError(f"{self.field(key)} is missing: add it to the [{self.name.split('[')[0]}] table")
            return default
        value = self.data[key]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise InventoryError(f"{self.field(key)} must be an integer, got {value!r}")
        if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise InventoryError(f"{self.field(key)} must be a number, got {value!r}")
        if kind is bool and not isinstance(value, bool):
            raise InventoryError(f"{self.field(key)} must be true or false, got {value!r}")
        if kind is str and not isinstance(value, str):
            raise InventoryError(f"{self.field(key)} must be a string, got {value!r}")
        return value

    def port(self, key: str, default: Any = ...) -> Any:
        value = self.get(key, int, default)
        if value is not None and not 1 <= value <= 65535:
            raise InventoryError(f"{self.field(key)} = {value} is not a TCP port: use 1-65535")
        return value

    def host(self, key: str, default: Any = ...) -> Any:
        value = self.get(key, str, default)
        if value is None:
            return None
        try:
            ipaddress.ip_address(value)
            return value
        except ValueError:
            pass
        if not _HOSTNAME.match(value):
            raise InventoryError(f"{self.field(key)} = {value!r} is not a host name or IP address: use e.g. 10.0.0.11 "
                                 "or worker1.example.org")
        return value


def _size_mb(table: _Table, key: str) -> int:
    """A size in MB from "700m", "4g" or a number of MB."""
    raw = table.get(key, str) if not isinstance(table.data.get(key), int) else table.get(key, int)
    if isinstance(raw, int):
        return raw
    m = re.fullmatch(r"\s*(\d+)\s*([mMgG])[bB]?\s*", raw)
    if not m:
        raise InventoryError(f"{table.field(key)} = {raw!r} is not a size: use e.g. \"700m\" or \"4g\"")
    return int(m.group(1)) * (1024 if m.group(2).lower() == "g" else 1)


def _memory_mb(table: _Table, key: str) -> int:
    raw = table.get(key, str) if not isinstance(table.data.get(key), int) else table.get(key, int)
    if isinstance(raw, int):
        value = raw
    else:
        m = re.fullmatch(r"\s*(\d+)\s*([mMgG])[bB]?\s*", raw)
        if not m:
            raise InventoryError(f"{table.field(key)} = {raw!r} is not a size: use e.g. \"700m\" or \"4g\"")
        value = int(m.group(1)) * (1024 if m.group(2).lower() == "g" else 1)
    if value < 512:
        raise InventoryError(f"{table.field(key)} = {raw!r} is below 512 MB: a worker running BigDL executors needs "
                             "at least 512m")
    return value


def _local_path(table: _Table, key: str, base: Path, must_exist: str | None) -> Path | None:
    raw = table.get(key, str, None)
    if raw is None:
        return None
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = (base / path).resolve()
    if must_exist == "file" and not path.is_file():
        raise InventoryError(f"{table.field(key)} = {raw!r}: no such file ({path}); fix the path or create the key "
                             "with ssh-keygen")
    if must_exist == "dir" and not path.is_dir():
        raise InventoryError(f"{table.field(key)} = {raw!r}: no such directory ({path}); build it with "
                             "`fab wheelhouse` or remove the field")
    if must_exist == "file" and not os.access(path, os.R_OK):
        raise InventoryError(f"{table.field(key)} = {raw!r}: the file is not readable by this user; fix its permissions")
    return path


def _ssh(data: Any, base: Path) -> SSHSettings:
    t = _Table("ssh", data, ("user", "key_file", "port", "known_hosts", "passphrase_env", "use_agent",
                             "connect_timeout", "accept_new_host_keys"))
    user = t.get("user", str)
    if not _USER.match(user):
        raise InventoryError(f"ssh.user = {user!r} is not a login name: use letters, digits, '_', '.', '-'")
    env_name = t.get("passphrase_env", str, None)
    if env_name is not None and not _ENV_NAME.match(env_name):
        raise InventoryError("ssh.passphrase_env must be the NAME of an environment variable (e.g. SPARKDL_SSH_PASSPHRASE), "
                             "not the passphrase")
    timeout = t.get("connect_timeout", float, 10.0)
    if timeout <= 0:
        raise InventoryError(f"ssh.connect_timeout = {timeout} must be > 0 seconds")
    known = t.get("known_hosts", str, None)
    known_path = None
    if known is not None:
        known_path = Path(os.path.expanduser(known))
        known_path = known_path if known_path.is_absolute() else (base / known_path).resolve()
    return SSHSettings(
        user=user,
        key_file=_local_path(t, "key_file", base, "file"),  # type: ignore[arg-type]
        port=t.port("port", DEFAULT_SSH_PORT),
        known_hosts=known_path,
        passphrase_env=env_name,
        use_agent=t.get("use_agent", bool, False),
        connect_timeout=float(timeout),
        accept_new_host_keys=t.get("accept_new_host_keys", bool, False),
    )


def _remote(data: Any, base: Path) -> RemoteSettings:
    t = _Table("remote", data, ("base_dir", "python", "wheelhouse", "oversubscribe", "host_wait", "min_free"))
    raw = t.get("base_dir", str)
    path = PurePosixPath(raw)
    if not path.is_absolute() or ".." in path.parts or "\n" in raw or "\0" in raw:
        raise InventoryError(f"remote.base_dir = {raw!r} must be an absolute path without '..' (e.g. /opt/sparkdl)")
    if len(path.parts) < 2:
        raise InventoryError("remote.base_dir = '/' would put the cluster in the root directory: use e.g. /opt/sparkdl")
    python = t.get("python", str, "python3")
    if not python.strip() or "\n" in python or "\0" in python:
        raise InventoryError(f"remote.python = {python!r} is not a program: use e.g. python3.11 or /usr/bin/python3.11")
    wait = t.data.get("host_wait", 120)
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or not 0 <= wait <= 86400:
        raise InventoryError(f"remote.host_wait = {wait!r} must be seconds between 0 and 86400 (e.g. 120)")
    min_free = _size_mb(t, "min_free") if "min_free" in t.data else 2048
    return RemoteSettings(base_dir=path, python=python, wheelhouse=_local_path(t, "wheelhouse", base, "dir"),
                          oversubscribe=t.get("oversubscribe", bool, False), host_wait_s=float(wait),
                          min_free_mb=min_free)


def _master(data: Any) -> MasterSpec:
    t = _Table("master", data, ("host", "spark_host", "port", "webui_port", "ssh_port"))
    host = t.host("host")
    m = MasterSpec(host=host, spark_host=t.host("spark_host", host), port=t.port("port", DEFAULT_MASTER_PORT),
                   webui_port=t.port("webui_port", DEFAULT_MASTER_WEBUI_PORT), ssh_port=t.port("ssh_port", None))
    if m.port == m.webui_port:
        raise InventoryError(f"master.port and master.webui_port are both {m.port}: give the web UI another port")
    return m


def _workers(data: Any, master: MasterSpec) -> tuple[WorkerSpec, ...]:
    if not isinstance(data, list) or not data:
        raise InventoryError("workers is missing: add one [[workers]] table per worker (host, cores, memory)")
    workers: list[WorkerSpec] = []
    taken: dict[tuple[str, int], str] = {(master.spark_host, master.port): "master.port",
                                         (master.spark_host, master.webui_port): "master.webui_port"}
    for i, item in enumerate(data, start=1):
        t = _Table(f"workers[{i}]", item, ("host", "spark_host", "cores", "memory", "webui_port", "ssh_port"))
        host = t.host("host")
        spark_host = t.host("spark_host", host)
        cores = t.get("cores", int)
        if cores < 1:
            raise InventoryError(f"workers[{i}].cores = {cores}: a worker must offer at least 1 core")
        same_host = sum(1 for w in workers if w.spark_host == spark_host)
        webui = t.port("webui_port", DEFAULT_WORKER_WEBUI_PORT + same_host)
        if (spark_host, webui) in taken:
            raise InventoryError(f"workers[{i}].webui_port = {webui} on {spark_host} is already used by "
                                 f"{taken[(spark_host, webui)]}: give this worker another webui_port")
        taken[(spark_host, webui)] = f"workers[{i}].webui_port"
        workers.append(WorkerSpec(name=f"worker-{i}", host=host, spark_host=spark_host, cores=cores,
                                  memory_mb=_memory_mb(t, "memory"), webui_port=webui,
                                  ssh_port=t.port("ssh_port", None)))
    return tuple(workers)


def parse_inventory(data: dict[str, Any], path: Path) -> Inventory:
    """Validate a parsed TOML document; relative local paths are relative to ``path``'s folder."""
    top = _Table("inventory", data, ("ssh", "remote", "master", "workers"))
    base = path.parent
    for section in ("ssh", "remote", "master"):
        if section not in top.data:
            raise InventoryError(f"[{section}] is missing from {path}: see `cluster/inventory.py` for an example")
    master = _master(data["master"])
    return Inventory(path=path, ssh=_ssh(data["ssh"], base), remote=_remote(data["remote"], base), master=master,
                     workers=_workers(data.get("workers"), master))


def load_inventory(path: str | Path) -> Inventory:
    """Read and validate an inventory file; raises :class:`InventoryError` with one line."""
    path = config.check_path(path, "inventory", InventoryError).absolute()
    if not path.exists() and not path.is_symlink():
        raise InventoryError(f"cannot read the inventory {path}: no such file; pass an existing file")
    data = config.read_toml(path, "inventory", error=InventoryError)
    return parse_inventory(data, path)
