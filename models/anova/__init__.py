"""ANOVA of a results table, split as statsmodels splits it: computation, result object, formatting.

=====================  ===============================================================
``design``             factor coding, the model matrix, the one rank loop (estimability)
``terms``              the default right-hand side, alias groups, Type III contrasts
``fit``                :func:`fit_anova`: OLS, sums of squares, transforms, the summary
``effects``            coded effects and Lenth's PSE
``result``             the result dataclasses (:class:`AnovaResult` and its parts)
``shares``             LMG shares of R^2 (they add up when the design is not orthogonal)
``splitplot``          :func:`fit_split_plot`: REML with a random intercept per whole plot,
                       each term tested in its stratum (containment df)
``splitplot_result``   its result dataclasses (:class:`SplitPlotResult`)
``format``             text and CSV renderings, and the one summary of each result
``analysis``           :func:`~models.anova.analysis.analyse`: fit + checks + plots, used by
                       the CLI and by ``report``
``cli``                ``sparkdl anova``
=====================  ===============================================================

This ``__init__`` re-exports the computation and the result objects only; ``analysis`` and
``cli`` sit above :mod:`models.diagnostics` and :mod:`models.plots` and are imported by path.
"""

from models.anova.design import (
    RESPONSE_COLUMN,
    ModelMatrix,
    code_factors,
    is_numeric,
    model_matrix,
    term_parts,
    two_level_numeric,
)
from models.anova.effects import lenth
from models.anova.fit import ROBUST, TRANSFORMS, boxcox_lambda, fit_anova, press
from models.anova.format import (
    anova_summary,
    format_csv,
    format_split_plot,
    format_split_plot_csv,
    format_summary,
    format_table,
    split_plot_summary,
)
from models.anova.result import (
    RESIDUAL,
    Alias,
    AnovaResult,
    AnovaRow,
    DefaultTerms,
    Effect,
    LenthResult,
    ModelSummary,
    StandardizedEffects,
    json_safe,
)
from models.anova.splitplot import WHOLE_PLOT_COLUMN, SplitPlotError, fit_split_plot, split_plot_structure
from models.anova.splitplot_result import SplitPlotResult, SplitPlotRow
from models.anova.terms import default_terms, parse_aliases

__all__ = [
    "RESIDUAL", "RESPONSE_COLUMN", "ROBUST", "TRANSFORMS", "Alias", "AnovaResult", "AnovaRow", "DefaultTerms",
    "Effect", "LenthResult", "ModelMatrix", "ModelSummary", "StandardizedEffects", "boxcox_lambda",
    "code_factors", "default_terms", "fit_anova", "format_csv", "format_summary", "format_table", "is_numeric",
    "json_safe", "lenth", "model_matrix", "parse_aliases", "press", "term_parts", "two_level_numeric",
    "WHOLE_PLOT_COLUMN", "SplitPlotError", "SplitPlotResult", "SplitPlotRow", "fit_split_plot", "format_split_plot",
    "format_split_plot_csv", "split_plot_structure", "anova_summary", "split_plot_summary",
]
