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
