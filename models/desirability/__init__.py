"""Derringer-Suich desirability over fitted response surfaces.

    python -m models.desirability runs/NAME --factors learning_rate,batch_size,epochs \\
        --response wall_clock_s:min --response accuracy:max:0.5:0.9 --confirm confirm.csv

:func:`parse_goal` and :func:`desirability` / :func:`overall` are the functions; :func:`compromise`
searches the region; :func:`confirmation_design` writes the confirmation runs.
"""

from models.desirability.confirm import ConfirmationDesign, confirmation_design
from models.desirability.functions import GOALS, Goal, desirability, overall, parse_goal
from models.desirability.optimum import Compromise, ObservedRun, ResponseAtOptimum, compromise

__all__ = ["GOALS", "Compromise", "ConfirmationDesign", "Goal", "ObservedRun", "ResponseAtOptimum", "compromise",
           "confirmation_design", "desirability", "overall", "parse_goal"]
