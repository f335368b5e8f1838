"""The run record and the campaign folder now live in the shared base: :mod:`sparkdl.campaign`.

This module re-exports them for the many ``from harness.schema import ...`` lines (harness's own
modules, tests, scripts); models and optimize import :mod:`sparkdl.campaign` directly.
"""

from sparkdl.campaign import *  # noqa: F401,F403
