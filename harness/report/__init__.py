"""The report is its own top-level stage now, above models and optimize: :mod:`report`.

``python -m harness.report`` and ``from harness.report import build_report`` keep working through
this alias, the one import from harness up to a higher stage (tests/test_layering.py allows it by name).
"""

from report import ExtraSection, Report, build_report, register

__all__ = ["ExtraSection", "Report", "build_report", "register"]
