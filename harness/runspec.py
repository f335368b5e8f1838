"""One run of a design and its parameter rules now live in the shared base: :mod:`sparkdl.runspec`.

This module re-exports them for the many ``from harness.runspec import ...`` lines.
"""

from sparkdl.runspec import *  # noqa: F401,F403
