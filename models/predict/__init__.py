"""Performance prediction: one interface (fit / predict / evaluate) over six models.

``linear`` (ANOVA-linear, Albo Martínez 2021), ``loglinear`` (the log target on the log factors and their
two-factor interactions: times are products, their noise a ratio), ``rf`` (Courier's random forest), ``gb`` (gradient boosting
baseline), ``generic`` (Kavarakuntla 2024's power law, its exponents from Extra-P's normal form chosen by
cross-validation, or free and fitted by differential evolution), and the scaling curves ``ernest`` (NNLS on the
times with features 1, s/m, log m, m, as Ernest's predictor fits them), ``amdahl`` and ``usl`` (``scaling``: they can saturate and, the USL, turn back;
a curve the training levels cannot determine says "not identified"). ``scaleout`` gives the time at a parallelism
the runs do not reach with an interval over model form, and the next run to make; ``parallelism`` says which
column is the scale and ``work`` which is the amount of work (Ernest's s). Every model gets CV+ prediction intervals (``intervals``), the table's noise ceiling
(``ceiling``) bounds its R^2, and ``flags`` names what makes a result untrustworthy. Run
``sparkdl predict RESULTS`` for the comparison table.
"""

from models.predict._base import Evaluation, Predictor, evaluation
from models.predict.ceiling import NoiseCeiling, noise_ceiling
from models.predict.compare import compare, make_splits
from models.predict.result import Comparison, ComparisonRow
from models.predict.ernest import ernest_design
from models.predict.scaling import ErnestModel
from models.predict.generic import PowerLawFit, PowerLawModel, describe_exponent
from models.predict.intervals import ConformalPredictor, Intervals
from models.predict.linear import LinearModel
from models.predict.loglinear import LogLinearModel
from models.predict.splits import Split, extrapolation_split, random_split
from models.predict.table import read_results, with_derived
from models.predict.trees import GradientBoostingModel, RandomForestModel

__all__ = [
    "Comparison", "ComparisonRow", "ConformalPredictor", "ErnestModel", "Evaluation", "GradientBoostingModel",
    "Intervals", "LinearModel", "LogLinearModel", "NoiseCeiling", "PowerLawFit", "PowerLawModel", "Predictor", "RandomForestModel",
    "Split", "compare", "describe_exponent", "ernest_design", "evaluation", "extrapolation_split", "make_splits",
    "noise_ceiling", "random_split", "read_results", "with_derived",
]
