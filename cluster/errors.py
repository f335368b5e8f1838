"""Errors raised by cluster/: each message says what is wrong and how to fix it."""


class ClusterError(Exception):
    """Base class for every error a cluster backend raises."""


class EnvironmentProblem(ClusterError):
    """Java, Spark or BigDL is missing or unusable in this environment."""


class PortInUse(ClusterError):
    """A port the cluster needs is taken by another process."""


class StartupTimeout(ClusterError):
    """A master or worker did not come up (or register) in time."""


class NotRunning(ClusterError):
    """An operation needs a running cluster and there is none."""
