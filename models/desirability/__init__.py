"""Derringer-Suich desirability over fitted response surfaces.

    sparkdl desirability runs/NAME --factors learning_rate,batch_size,epochs \\
        --objective wall_clock_s:min --objective accuracy:max:0.5:0.9 --out confirm.csv

:func:`parse_goal` and :func:`desirability` / :func:`overall` are the functions; :func:`compromise`
searches the region; :func:`confirmation_design` writes the confirmation runs.
"""

from models.desirability.check import ConfirmationCheck, check_confirmation
from models.desirability.confirm import ConfirmationDesign, confirmation_design
from models.desirability.functions import GOALS, Goal, desirability, overall, parse_goal
from models.desirability.optimum import Compromise, ObservedRun, ResponseAtOptimum, compromise
from models.desirability.tradeoff import TradeoffPoint, tradeoff, tradeoff_front

__all__ = [
    "GOALS", "Compromise", "ConfirmationCheck", "ConfirmationDesign", "Goal", "ObservedRun", "ResponseAtOptimum",
    "TradeoffPoint", "check_confirmation", "compromise", "confirmation_design", "desirability", "overall",
    "parse_goal", "tradeoff", "tradeoff_front",
]
