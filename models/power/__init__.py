"""Power and sample size of a factorial design: how many replicates detect an effect of a given size.

=====================  ===============================================================
``compute``            noise, the noncentral F of each main-effect test, :func:`plan_power`
``inputs``             the design and its pilot, read from CSVs or campaign folders
``result``             the result dataclasses (:class:`PowerPlan` and its parts)
``format``             text and CSV renderings
``cli``                ``sparkdl plan``
=====================  ===============================================================
"""

from models.power.compute import (
    MAX_REPLICATES,
    SCALES,
    given_noise,
    noncentrality_for,
    parse_effect,
    parse_percent,
    pilot_noise,
    plan_power,
    point_times,
    power_of,
    with_whole_plot_noise,
)
from models.power.format import format_csv, format_table, format_text
from models.power.result import DesignInfo, Effect, FactorPower, Noise, PowerPlan

__all__ = [
    "MAX_REPLICATES", "SCALES", "DesignInfo", "Effect", "FactorPower", "Noise", "PowerPlan", "format_csv",
    "format_table", "format_text", "given_noise", "noncentrality_for", "parse_effect", "parse_percent",
    "pilot_noise", "plan_power", "point_times", "power_of", "with_whole_plot_noise",
]
