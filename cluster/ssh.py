"""SSH to the inventory's hosts: one Fabric connection per host, commands as argv lists.

Commands are built as lists and joined with :func:`shlex.join` only here, at the last
moment, because sshd hands the remote side one string for its shell: no value from the
inventory or a design can reach that shell unquoted. Connection failures become one line
that says which host and what to fix (:class:`Unreachable`, :class:`KeyRefused`,
:class:`HostKeyProblem`). Secrets (a key passphrase) go to paramiko only, never into a
command, a message or a log.

:class:`Transport` is the seam for tests: the operations in :mod:`cluster.remote` take any
object with ``run``, ``put`` and ``get``; :class:`FabricTransport` is the real one.
"""

from __future__ import annotations

import shlex
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from cluster.errors import ClusterError
from cluster.inventory import Inventory


class SSHError(ClusterError):
    """A host could not be reached or used over SSH; ``host`` names it."""

    def __init__(self, host: str, message: str) -> None:
        self.host = host
        super().__init__(f"{host}: {message}")


class Unreachable(SSHError):
    """Nothing answers on the host's SSH port (down, wrong address, closed port, firewall)."""


class KeyRefused(SSHError):
    """sshd refused the key (not in authorized_keys, wrong user, or an encrypted key without passphrase)."""


class HostKeyProblem(SSHError):
    """The host's key is unknown or does not match known_hosts."""


class RemoteCommandFailed(SSHError):
    """A remote command exited non-zero; the message is its own last error line."""

    def __init__(self, host: str, command: str, exit_code: int, detail: str) -> None:
        self.command, self.exit_code, self.detail = command, exit_code, detail
        super().__init__(host, f"`{command}` exited {exit_code}: {detail}")


class TransferFailed(SSHError):
    """An SFTP upload or download failed."""


class CommandTimeout(RemoteCommandFailed):
    """A remote command did not finish in time; its channel was closed (our daemons then stop it)."""


@dataclass(frozen=True)
class CommandResult:
    host: str
    command: str  # the exact string the remote shell received
    exit_code: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def error_line(self) -> str:
        """The command's own last error line (``error: ...`` from our daemons), or its output's tail."""
        lines = [ln.strip() for ln in (self.stderr or self.stdout).strip().splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("error:")]
        line = (errors or lines or ["(no output)"])[-1]
        return line.removeprefix("error: ")


def command_line(argv: list[str]) -> str:
    """The one string sshd passes to the remote shell: every element quoted."""
    if not argv or any(not isinstance(a, str) for a in argv):
        raise TypeError(f"a remote command is a non-empty list of strings, got {argv!r}")
    return shlex.join(argv)


class Transport(Protocol):
    def run(self, host: str, argv: list[str], timeout: float | None = None,
            out: IO[str] | None = None, err: IO[str] | None = None) -> CommandResult: ...
    def put(self, host: str, local: Path, remote: str) -> None: ...
    def get(self, host: str, remote: str, local: Path) -> None: ...
    def close(self) -> None: ...


class FabricTransport:
    """Runs argv lists on the inventory's hosts with Fabric; connections are opened once and reused."""

    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self._connections: dict[str, object] = {}
        self._lock = threading.Lock()

    # -- connections
    def _connect(self, host: str):  # -> fabric.Connection
        import paramiko
        from fabric import Config, Connection

        with self._lock:
            if host in self._connections:
                return self._connections[host]
        ssh = self.inventory.ssh
        port = self.inventory.ssh_port(host)
        kwargs: dict[str, object] = {"pkey": self._key(host), "look_for_keys": False, "allow_agent": ssh.use_agent,
                                     "banner_timeout": ssh.connect_timeout, "auth_timeout": ssh.connect_timeout}
        config = Config(overrides={"load_ssh_configs": False, "run": {"hide": True, "warn": True}})
        conn = Connection(host, user=ssh.user, port=port, connect_timeout=int(max(1, ssh.connect_timeout)),
                          connect_kwargs=kwargs, config=config)
        known = ssh.known_hosts or Path.home() / ".ssh" / "known_hosts"
        if known.exists():
            conn.client.load_host_keys(str(known))
        policy = paramiko.AutoAddPolicy() if ssh.accept_new_host_keys else paramiko.RejectPolicy()
        conn.client.set_missing_host_key_policy(policy)
        where = f"{ssh.user}@{host}:{port}"
        try:
            conn.open()
        except paramiko.BadHostKeyException as e:
            raise HostKeyProblem(host, f"its host key does not match {known} (fingerprint {e.key.fingerprint}): if the "
                                       "host was rebuilt, remove its old line with `ssh-keygen -R`, else do not connect") from None
        except paramiko.AuthenticationException:
            raise KeyRefused(host, f"refused key {ssh.key_file} for user {ssh.user!r}: add {ssh.key_file}.pub to "
                                   f"~{ssh.user}/.ssh/authorized_keys on the host, or fix ssh.user / ssh.key_file") from None
        except paramiko.SSHException as e:
            if "not found in known_hosts" in str(e):
                raise HostKeyProblem(host, f"its host key is not in {known}: check its fingerprint, then "
                                           f"`ssh-keyscan -p {port} {host} >> {known}` (or set ssh.accept_new_host_keys "
                                           "= true)") from None
            raise Unreachable(host, f"SSH to {where} failed: {e}") from None
        except (socket.timeout, TimeoutError):
            raise Unreachable(host, f"unreachable: no answer from {where} within {ssh.connect_timeout:g} s; check the "
                                    "address, the port and the firewall") from None
        except OSError as e:
            errors = list(getattr(e, "errors", {}).values())  # paramiko's NoValidConnectionsError
            cause = errors[0] if errors else e
            reason = getattr(cause, "strerror", None) or str(cause)
            raise Unreachable(host, f"unreachable: cannot connect to {where} ({reason}); check the address, the port "
                                    "and that sshd runs") from None
        with self._lock:
            self._connections[host] = conn
        return conn

    def _key(self, host: str):  # -> paramiko.PKey
        """Load the private key here, so its passphrase goes to paramiko's decryption only."""
        import paramiko

        ssh = self.inventory.ssh
        passphrase = ssh.passphrase()
        try:
            return paramiko.PKey.from_path(ssh.key_file, passphrase.encode() if passphrase else None)
        except (paramiko.SSHException, TypeError, ValueError) as e:
            # cryptography raises TypeError when a passphrase is needed but none was given
            if passphrase is None and isinstance(e, (paramiko.PasswordRequiredException, TypeError)):
                raise KeyRefused(host, f"the key {ssh.key_file} is encrypted: export its passphrase in the variable "
                                       "named by ssh.passphrase_env, or load it into ssh-agent and set ssh.use_agent "
                                       "= true") from None
            hint = f"wrong passphrase in ${ssh.passphrase_env}?" if passphrase else "is it an OpenSSH private key?"
            raise KeyRefused(host, f"cannot load the key {ssh.key_file} ({type(e).__name__}): {hint}") from None
        except OSError as e:
            raise KeyRefused(host, f"cannot read the key {ssh.key_file} ({e.strerror}): fix ssh.key_file") from None

    # -- operations
    def run(self, host: str, argv: list[str], timeout: float | None = None,
            out: IO[str] | None = None, err: IO[str] | None = None) -> CommandResult:
        from invoke.exceptions import CommandTimedOut

        conn = self._connect(host)
        command = command_line(argv)
        try:
            # Output is copied to out/err as it arrives when they are given, else only captured.
            result = conn.run(command, hide=out is None and err is None, warn=True, in_stream=False, timeout=timeout,
                              out_stream=out, err_stream=err)
        except CommandTimedOut:
            raise CommandTimeout(host, command, -1, f"no answer within {timeout:.0f} s; the command was stopped") from None
        except (OSError, EOFError) as e:
            self._drop(host)
            raise Unreachable(host, f"the connection broke while running `{command}` ({e})") from None
        return CommandResult(host, command, result.exited, result.stdout, result.stderr)

    def put(self, host: str, local: Path, remote: str) -> None:
        """Upload to ``remote.<host>.part``, then rename: hosts sharing a file system never see half a file."""
        part = f"{remote}.{host}.part"
        try:
            self._connect(host).put(str(local), part)
        except (OSError, EOFError) as e:
            raise TransferFailed(host, f"uploading {local} to {remote} failed ({e}); check free space under it") from None
        result = self.run(host, ["mv", "-f", "--", part, remote], timeout=60)
        if not result.ok:
            raise RemoteCommandFailed(host, result.command, result.exit_code, result.error_line())

    def get(self, host: str, remote: str, local: Path) -> None:
        try:
            self._connect(host).get(remote, str(local))
        except (OSError, EOFError) as e:
            raise TransferFailed(host, f"downloading {remote} to {local} failed ({e})") from None

    def forget(self, host: str) -> None:
        """Close the host's connection: the next command connects afresh (a health check after a fault)."""
        self._drop(host)

    def _drop(self, host: str) -> None:
        with self._lock:
            conn = self._connections.pop(host, None)
        if conn is not None:
            conn.close()  # type: ignore[attr-defined]

    def close(self) -> None:
        for host in list(self._connections):
            self._drop(host)
