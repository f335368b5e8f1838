"""A multi-objective search over design factors on real jobs (Optuna ask-and-tell), with pruning.

``space`` (space.toml: the factors and their ranges), ``pruning`` (per-epoch rules read from a
running job's log), ``study`` (the ask-and-tell loop, the study stored in the campaign folder),
``__main__`` (``sparkdl search``).
"""

from optimize.search.pruning import CurveTail, HalvingRule, MedianRule, TargetRule, TrialWatch, make_rules
from optimize.search.space import Factor, SearchSpace, at_largest_epochs, load_space
from optimize.search.study import MultiObjectiveSearch, SearchConfig, SearchOutcome, open_study

__all__ = ["CurveTail", "Factor", "HalvingRule", "MedianRule", "MultiObjectiveSearch", "SearchConfig",
           "SearchOutcome", "at_largest_epochs", "SearchSpace", "TargetRule", "TrialWatch", "load_space", "make_rules", "open_study"]
