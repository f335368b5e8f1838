"""The campaign report: one self-contained HTML page from a campaign directory or a results CSV.

    sparkdl report runs/NAME [-o report.html] [--response cost] [--cost EXPR]

>>> from report import build_report
>>> report = build_report("examples/marinos2021/table2.csv")  # doctest: +SKIP
>>> report.write("/tmp/table2.html")  # doctest: +SKIP
"""

from report.build import Report, build_report
from report.extras import ExtraSection, register

__all__ = ["ExtraSection", "Report", "build_report", "register"]
