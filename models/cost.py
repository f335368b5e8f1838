"""The cost of a job from its wall clock and accuracy now lives in the shared base: :mod:`sparkdl.cost`
(harness's MLflow export computes it too). This module re-exports it for ``from models.cost import ...``.
"""

from sparkdl.cost import *  # noqa: F401,F403
