"""Per-host results of one cluster-wide operation, in the manner of Fabric's GroupResult.

An operation runs a step on several hosts (in parallel); every host gets a
:class:`HostResult`, and a failure on one host never hides the others' results.
:meth:`GroupResult.raise_on_failure` raises :class:`GroupFailure`, which carries the whole
result and whose message has one line per failed host naming the host and the command.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable, TypeVar

from cluster.errors import ClusterError
from cluster.ssh import RemoteCommandFailed, SSHError

T = TypeVar("T")


@dataclass(frozen=True)
class HostResult:
    host: str
    role: str  # "master", "worker-2", "host" ...
    ok: bool
    changed: bool = False
    detail: str = ""  # what happened, or the one-line error
    command: str | None = None  # the failing remote command, when there is one
    data: dict = field(default_factory=dict, compare=False)

    def describe(self) -> str:
        if self.ok:
            return f"{self.host} {self.role}: {'changed' if self.changed else 'ok'}{': ' + self.detail if self.detail else ''}"
        return f"{self.host} {self.role}: FAILED: {self.detail}"


@dataclass(frozen=True)
class GroupResult:
    operation: str
    results: tuple[HostResult, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def failed(self) -> tuple[HostResult, ...]:
        return tuple(r for r in self.results if not r.ok)

    @property
    def succeeded(self) -> tuple[HostResult, ...]:
        return tuple(r for r in self.results if r.ok)

    @property
    def changed(self) -> bool:
        return any(r.changed for r in self.results)

    def describe(self) -> str:
        return "\n".join(r.describe() for r in self.results)

    def raise_on_failure(self) -> "GroupResult":
        if not self.ok:
            raise GroupFailure(self)
        return self

    def __add__(self, other: "GroupResult") -> "GroupResult":
        return GroupResult(f"{self.operation}+{other.operation}", self.results + other.results)


class GroupFailure(ClusterError):
    """Some hosts failed; ``result`` keeps every host's outcome, successes included."""

    def __init__(self, result: GroupResult) -> None:
        self.result = result
        lines = [f"{result.operation} failed on {len(result.failed)} of {len(result.results)} host(s):"]
        lines += [f"  {r.host} {r.role}: {r.detail}" for r in result.failed]
        super().__init__("\n".join(lines))


def failure(host: str, role: str, error: Exception) -> HostResult:
    """A failed :class:`HostResult` from an exception, keeping the command when there is one."""
    if isinstance(error, RemoteCommandFailed):
        return HostResult(host, role, False, detail=f"`{error.command}` exited {error.exit_code}: {error.detail}",
                          command=error.command)
    if isinstance(error, SSHError):
        return HostResult(host, role, False, detail=str(error).removeprefix(f"{host}: "))
    if isinstance(error, ClusterError):
        return HostResult(host, role, False, detail=str(error))
    return HostResult(host, role, False, detail=f"{type(error).__name__}: {error}")


def on_hosts(operation: str, items: Iterable[tuple[str, str, T]],
             step: Callable[[str, str, T], HostResult], parallel: int = 8) -> GroupResult:
    """Run ``step(host, role, item)`` for every item, ``parallel`` at a time; every item gets a result.

    Items on the same host run one after another (a host's connection is not shared between
    threads); different hosts run side by side.
    """
    items = list(items)
    by_host: dict[str, list[tuple[int, str, T]]] = {}
    for i, (host, role, item) in enumerate(items):
        by_host.setdefault(host, []).append((i, role, item))
    slots: list[HostResult | None] = [None] * len(items)

    def serve(host: str) -> None:
        for i, role, item in by_host[host]:
            try:
                slots[i] = step(host, role, item)
            except Exception as e:  # noqa: BLE001 - recorded per host and raised by raise_on_failure
                slots[i] = failure(host, role, e)

    if by_host:
        with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(by_host)))) as pool:
            list(pool.map(serve, by_host))
    return GroupResult(operation, tuple(r for r in slots if r is not None))
