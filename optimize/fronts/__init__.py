"""The front of a replicated campaign's configurations (design points), sure only as far as the replicates allow.

:mod:`optimize.fronts.compute` computes (means, t intervals, the seeded bootstrap over replicates),
:mod:`optimize.fronts.result` holds the frozen results, :mod:`optimize.fronts.format` renders them as text
and CSV (JSON is ``ConfigurationFront.to_dict``).
"""

from optimize.fronts.compute import (DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, DEFAULT_THRESHOLD,
                                     UNREPLICATED_NOTE, bootstrap_means, configuration_front, hypervolumes,
                                     is_replicated, non_dominated_share, point_columns)
from optimize.fronts.format import format_csv, format_text, front_figure
from optimize.fronts.result import ConfigurationFront, DesignPoint

__all__ = ["DEFAULT_LEVEL", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "DEFAULT_THRESHOLD", "UNREPLICATED_NOTE",
           "ConfigurationFront", "DesignPoint", "bootstrap_means", "configuration_front", "format_csv", "format_text",
           "front_figure", "hypervolumes", "is_replicated", "non_dominated_share", "point_columns"]
