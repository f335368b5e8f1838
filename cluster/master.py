"""What a Spark standalone master says about its cluster, read from its JSON endpoint.

The master's web UI serves ``/json/``: workers (state, cores, memory, what is in use)
and applications. Every backend and the harness's capacity checks read it through
:func:`fetch_state`.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass

from cluster.errors import NotRunning


@dataclass(frozen=True)
class WorkerInfo:
    id: str
    host: str
    port: int
    webui_url: str
    state: str
    cores: int
    cores_used: int
    memory_mb: int
    memory_used_mb: int

    @property
    def alive(self) -> bool:
        return self.state == "ALIVE"


@dataclass(frozen=True)
class AppInfo:
    id: str
    name: str
    state: str
    cores: int
    memory_per_executor_mb: int
    duration_ms: int


@dataclass(frozen=True)
class MasterState:
    url: str
    status: str
    workers: tuple[WorkerInfo, ...]
    active_apps: tuple[AppInfo, ...]
    completed_apps: tuple[AppInfo, ...]

    @property
    def alive_workers(self) -> tuple[WorkerInfo, ...]:
        return tuple(w for w in self.workers if w.alive)

    @property
    def cores(self) -> int:
        return sum(w.cores for w in self.alive_workers)

    @property
    def cores_free(self) -> int:
        return sum(w.cores - w.cores_used for w in self.alive_workers)


def _worker(d: dict) -> WorkerInfo:
    return WorkerInfo(
        id=str(d.get("id", "")),
        host=str(d.get("host", "")),
        port=int(d.get("port", 0)),
        webui_url=str(d.get("webuiaddress", "")),
        state=str(d.get("state", "UNKNOWN")),
        cores=int(d.get("cores", 0)),
        cores_used=int(d.get("coresused", 0)),
        memory_mb=int(d.get("memory", 0)),
        memory_used_mb=int(d.get("memoryused", 0)),
    )


def _app(d: dict) -> AppInfo:
    return AppInfo(
        id=str(d.get("id", "")),
        name=str(d.get("name", "")),
        state=str(d.get("state", "")),
        cores=int(d.get("cores", 0)),
        memory_per_executor_mb=int(d.get("memoryperslave", d.get("memoryperexecutor", 0))),
        duration_ms=int(d.get("duration", 0)),
    )


def parse_state(payload: dict) -> MasterState:
    """Turn the master's JSON document into a :class:`MasterState`."""
    return MasterState(
        url=str(payload.get("url", "")),
        status=str(payload.get("status", "UNKNOWN")),
        workers=tuple(_worker(w) for w in payload.get("workers", [])),
        active_apps=tuple(_app(a) for a in payload.get("activeapps", [])),
        completed_apps=tuple(_app(a) for a in payload.get("completedapps", [])),
    )


def fetch_state(webui_url: str, timeout: float = 5.0) -> MasterState:
    """GET ``<webui_url>/json/``; raises :class:`NotRunning` when nothing answers."""
    url = webui_url.rstrip("/") + "/json/"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            payload = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise NotRunning(f"no Spark master answers at {url} ({e}); start one with `sparkdl cluster start`") from e
    return parse_state(payload)
