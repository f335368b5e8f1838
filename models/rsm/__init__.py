"""Response surfaces: full second-order fits on Box-Behnken, central composite and face-centred designs.

    sparkdl rsm runs/NAME --response accuracy --factors learning_rate,batch_size,epochs --format json

:func:`fit_surface` fits (coded and natural coefficients, ANOVA with lack of fit);
:func:`stationary_point` gives the canonical analysis, :func:`ridge_path` the ridge,
:func:`optimum` the best fitted setting in the region; :func:`analyse` does all of it.
"""

from models.rsm.analysis import SurfaceAnalysis, analyse
from models.rsm.canonical import Optimum, RidgePoint, StationaryPoint, optimum, ridge_path, stationary_point
from models.rsm.coding import Coding, Region, model_matrix, term_names
from models.rsm.fit import AnovaRow, Coefficient, LackOfFit, PredictionInterval, SurfaceFit, fit_surface

__all__ = [
    "AnovaRow", "Coding", "Coefficient", "LackOfFit", "Optimum", "PredictionInterval", "Region", "RidgePoint",
    "StationaryPoint", "SurfaceAnalysis", "SurfaceFit", "analyse", "fit_surface", "model_matrix", "optimum",
    "ridge_path", "stationary_point", "term_names",
]
