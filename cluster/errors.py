"""Errors raised by cluster/: each message says what is wrong and how to fix it."""

from sparkdl.errors import EXIT_CLUSTER, ToolError


class ClusterError(ToolError):
    """Base class for every error a cluster backend raises."""

    exit_code = EXIT_CLUSTER


class EnvironmentProblem(ClusterError):
    """Java, Spark or BigDL is missing or unusable in this environment."""


class PortInUse(ClusterError):
    """A port the cluster needs is taken by another process."""


class StartupTimeout(ClusterError):
    """A master or worker did not come up (or register) in time."""


class NotRunning(ClusterError):
    """An operation needs a running cluster and there is none."""


class HostLost(ClusterError):
    """A host the work needs does not answer over SSH; ``host``, ``role`` and ``detail`` say which and why.

    ``fatal``: the host is the master's, so no run can go on without it.
    """

    def __init__(self, host: str, role: str, detail: str, message: str | None = None, fatal: bool = False) -> None:
        self.host, self.role, self.detail = host, role, detail
        self.fatal = fatal  # nothing can run without it (the master's host)
        super().__init__(message or f"lost the {role} {host}: SSH fails ({detail})")
