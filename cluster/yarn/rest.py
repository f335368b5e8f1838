"""YARN's REST APIs: the ResourceManager's (``/ws/v1/cluster``) and a NodeManager's (``/ws/v1/node``).

What the tool asks: the cluster's capacity (metrics, nodes), one application's state and diagnostics, the
applications of a name, killing one (``PUT .../state {"state": "KILLED"}``), and, from the NodeManagers, the
containers of an application and their log files. Every answer is parsed into a small record here.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from cluster.errors import ClusterError, NotRunning

TIMEOUT_S = 10.0
#: An answer of the REST API is a few kB (a log file is read by :meth:`NodeManager.log` with its own limit)
MAX_ANSWER_BYTES = 16 * 1024 * 1024
#: States after which an application does not change
FINAL_STATES = frozenset({"FINISHED", "FAILED", "KILLED"})


class YarnRestError(ClusterError):
    """The ResourceManager or a NodeManager answered with an error."""


def _request(url: str, method: str = "GET", body: dict[str, Any] | None = None, timeout: float = TIMEOUT_S,
             limit: int = MAX_ANSWER_BYTES, accept: str = "application/json") -> bytes:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Accept": accept, **({"Content-Type": "application/json"} if data else {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            return answer.read(limit)
    except urllib.error.HTTPError as e:
        detail = e.read(2000).decode(errors="replace")
        try:
            detail = json.loads(detail)["RemoteException"]["message"]
        except (ValueError, KeyError, TypeError):
            pass
        raise YarnRestError(f"{method} {url}: HTTP {e.code}: {str(detail)[:300]}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise NotRunning(f"YARN at {url.split('/ws/')[0]} does not answer ({reason}): is the cluster up, and is "
                         "HADOOP_CONF_DIR the cluster's?") from None


def _json(url: str, **kw: Any) -> dict[str, Any]:
    raw = _request(url, **kw)
    try:
        answer = json.loads(raw)
    except ValueError:
        raise YarnRestError(f"{url}: the answer is not JSON ({raw[:80]!r}): is this a YARN web address?") from None
    if not isinstance(answer, dict):
        raise YarnRestError(f"{url}: the answer is not a JSON object")
    return answer


def _items(answer: dict[str, Any], outer: str, inner: str) -> list[dict[str, Any]]:
    """The records of a list answer, wrapped as YARN's docs show (``{"nodes": {"node": [...]}}``), or unwrapped in
    Java bean names as Jersey's fallback writer gives them when JAXB does not see the records' annotations (the
    shaded hadoop-client-minicluster does that: ``{"nodes": [...]}``, ``nodeId`` for ``id``); an empty list is ``{}``
    or ``null``. The local cluster runs the unshaded daemons, which answer as documented; the fallback shape stays
    readable for clusters that run a shaded build."""
    value = answer.get(outer)
    if isinstance(value, dict):  # {"queue": [...]}, or Java 17's field name ({"queueInfoList": [...]})
        value = value.get(inner, next((v for v in value.values() if isinstance(v, list)), None))
    if isinstance(value, dict):
        value = [value]
    return [v for v in value or [] if isinstance(v, dict)]


def _record(answer: dict[str, Any], name: str) -> dict[str, Any]:
    """One record, wrapped (``{"app": {...}}``) or not."""
    value = answer.get(name, answer)
    if not isinstance(value, dict):
        raise YarnRestError(f"the answer holds no {name} record")
    return value


@dataclass(frozen=True)
class Node:
    """One NodeManager as the ResourceManager sees it."""

    id: str
    state: str
    http_address: str
    vcores: int
    memory_mb: int
    vcores_used: int
    memory_used_mb: int

    @property
    def vcores_free(self) -> int:
        return self.vcores - self.vcores_used

    @property
    def memory_free_mb(self) -> int:
        return self.memory_mb - self.memory_used_mb

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Node":
        used_v = int(d.get("usedVirtualCores", 0))
        used_m = int(d.get("usedMemoryMB", d.get("usedMemory", 0)))
        free_m = int(d.get("availMemoryMB", d.get("availableMemory", 0)))
        node_id = d.get("id", d.get("nodeId"))
        if node_id is None:
            raise YarnRestError("a node in the ResourceManager's answer has no id")
        return cls(str(node_id), str(d.get("state", "")), str(d.get("nodeHTTPAddress", "")),
                   used_v + int(d.get("availableVirtualCores", 0)), used_m + free_m, used_v, used_m)


@dataclass(frozen=True)
class Metrics:
    vcores: int
    memory_mb: int
    vcores_free: int
    memory_free_mb: int
    active_nodes: int
    lost_nodes: int
    apps_running: int
    apps_pending: int


@dataclass(frozen=True)
class App:
    """One YARN application (``/ws/v1/cluster/apps/{id}``)."""

    id: str
    name: str
    state: str
    final_status: str
    diagnostics: str
    queue: str
    started_ms: int
    finished_ms: int

    @property
    def done(self) -> bool:
        return self.state in FINAL_STATES

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "App":
        return cls(str(d["id"]), str(d.get("name", "")), str(d.get("state", "")), str(d.get("finalStatus", "")),
                   str(d.get("diagnostics", "") or ""), str(d.get("queue", "")), int(d.get("startedTime", 0) or 0),
                   int(d.get("finishedTime", 0) or 0))


class ResourceManager:
    """The ResourceManager's web services at ``url`` (``http://host:8088``)."""

    def __init__(self, url: str, timeout: float = TIMEOUT_S) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    def metrics(self) -> Metrics:
        m = _record(_json(f"{self.url}/ws/v1/cluster/metrics", timeout=self.timeout), "clusterMetrics")
        if "totalVirtualCores" not in m:
            raise YarnRestError(f"{self.url}/ws/v1/cluster/metrics: no cluster metrics in the answer")
        return Metrics(int(m.get("totalVirtualCores", 0)), int(m.get("totalMB", 0)),
                       int(m.get("availableVirtualCores", 0)), int(m.get("availableMB", 0)),
                       int(m.get("activeNodes", 0)), int(m.get("lostNodes", 0)), int(m.get("appsRunning", 0)),
                       int(m.get("appsPending", 0)))

    def nodes(self) -> list[Node]:
        """The NodeManagers in state RUNNING."""
        answer = _json(f"{self.url}/ws/v1/cluster/nodes", timeout=self.timeout)
        return sorted((Node.from_json(n) for n in _items(answer, "nodes", "node") if n.get("state") == "RUNNING"),
                      key=lambda n: n.id)

    def queues(self) -> list[str]:
        """The leaf queues of the scheduler (the names ``--queue`` takes)."""
        info = _record(_record(_json(f"{self.url}/ws/v1/cluster/scheduler", timeout=self.timeout), "scheduler"),
                       "schedulerInfo")
        leaves: list[str] = []

        def walk(q: dict[str, Any]) -> None:
            children = _items(q, "queues", "queue")
            if not children and q.get("queueName"):
                leaves.append(str(q["queueName"]))
            for c in children:
                walk(c)

        walk(info)
        return leaves

    def app(self, app_id: str) -> App:
        d = _json(f"{self.url}/ws/v1/cluster/apps/{urllib.parse.quote(app_id)}", timeout=self.timeout)
        return App.from_json(_record(d, "app"))

    def apps(self, states: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> list[App]:
        """The applications in ``states`` (all when empty) that carry one of ``tags`` (any when empty)."""
        params = {**({"states": ",".join(states)} if states else {}),
                  **({"applicationTags": ",".join(tags)} if tags else {})}
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        return [App.from_json(a) for a in _items(_json(f"{self.url}/ws/v1/cluster/apps{query}", timeout=self.timeout),
                                                  "apps", "app")]

    def attempts(self, app_id: str) -> list[tuple[str, str]]:
        """The application's attempts as (master container id, its NodeManager's http address), first to last."""
        d = _json(f"{self.url}/ws/v1/cluster/apps/{urllib.parse.quote(app_id)}/appattempts", timeout=self.timeout)
        return [(str(a["containerId"]), str(a.get("nodeHttpAddress", ""))) for a in _items(d, "appAttempts", "appAttempt")
                if a.get("containerId")]

    def kill(self, app_id: str) -> None:
        """Ask the ResourceManager to kill ``app_id`` (a no-op for an application that has ended)."""
        _request(f"{self.url}/ws/v1/cluster/apps/{urllib.parse.quote(app_id)}/state", method="PUT",
                 body={"state": "KILLED"}, timeout=self.timeout)


class NodeManager:
    """A NodeManager's web services at ``http_address`` (``host:8042``): an application's containers and logs."""

    def __init__(self, http_address: str, timeout: float = TIMEOUT_S) -> None:
        self.url = f"http://{http_address}"
        self.timeout = timeout

    def containers(self, app_id: str) -> list[str]:
        d = _record(_json(f"{self.url}/ws/v1/node/apps/{urllib.parse.quote(app_id)}", timeout=self.timeout), "app")
        ids = d.get("containerids") or []
        return [str(c) for c in (ids if isinstance(ids, list) else [ids])]

    def log_files(self, container_id: str) -> list[str]:
        url = f"{self.url}/ws/v1/node/containers/{urllib.parse.quote(container_id)}/logs"
        raw = json.loads(_request(url, timeout=self.timeout))
        entries = raw if isinstance(raw, list) else [raw]
        names: list[str] = []
        for entry in entries:
            files = (entry.get("containerLogsInfo") or entry).get("containerLogInfo") or []
            names += [str(f["fileName"]) for f in (files if isinstance(files, list) else [files])]
        return names

    def log(self, container_id: str, name: str, limit: int = 256 * 1024 * 1024) -> bytes:
        url = (f"{self.url}/ws/v1/node/containerlogs/{urllib.parse.quote(container_id)}/"
               f"{urllib.parse.quote(name)}")
        return _request(url, timeout=max(self.timeout, 60.0), limit=limit, accept="text/plain")
