"""Did the confirmation runs confirm? Each response's mean over the confirmation jobs against the
fitted surface's prediction interval for the mean of that many new jobs, at the setting they ran.

The setting is read from the confirmation jobs themselves (they must share one setting of the
factors), so the check holds even if the recommendation was computed with other options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.errors import DesirabilityError
from models.rsm.fit import PredictionInterval, SurfaceFit


@dataclass(frozen=True)
class ConfirmationCheck:
    response: str
    jobs: int
    mean: float
    interval: PredictionInterval

    @property
    def inside(self) -> bool:
        lo, hi = self.interval.prediction
        return bool(lo <= self.mean <= hi)

    def describe(self) -> str:
        lo, hi = self.interval.prediction
        verdict = "inside: confirmed" if self.inside else "OUTSIDE: not confirmed"
        return (f"{self.response}: mean of {self.jobs} confirmation job(s) {self.mean:.4g}, predicted "
                f"{self.interval.predicted:.4g}, {self.interval.level:.0%} PI [{lo:.4g}, {hi:.4g}]: {verdict}")

    def to_dict(self) -> dict:
        return {"response": self.response, "jobs": self.jobs, "mean": self.mean,
                "predicted": self.interval.predicted, "prediction_interval": list(self.interval.prediction),
                "inside": self.inside}


def check_confirmation(fits: tuple[SurfaceFit, ...], confirm: pd.DataFrame, level: float = 0.95
                       ) -> tuple[tuple[float, ...], tuple[ConfirmationCheck, ...]]:
    """The setting the confirmation jobs ran and, per fitted response, their mean against its interval."""
    if confirm.empty:
        raise DesirabilityError("the confirmation results have no ok job to check")
    factors = fits[0].factors
    missing = [f for f in factors if f not in confirm.columns]
    if missing:
        raise DesirabilityError(f"the confirmation results have no column(s) {', '.join(missing)}")
    settings = confirm[list(factors)].apply(pd.to_numeric, errors="coerce").drop_duplicates()
    if len(settings) != 1:
        raise DesirabilityError(f"the confirmation jobs ran {len(settings)} different settings of "
                                f"{', '.join(factors)}; check one setting at a time")
    at = settings.to_numpy(dtype=float)[0]
    checks = []
    for fit in fits:
        if fit.response not in confirm.columns:
            raise DesirabilityError(f"the confirmation results have no column {fit.response!r}")
        y = pd.to_numeric(confirm[fit.response], errors="coerce").dropna().to_numpy(dtype=float)
        if len(y) == 0:
            raise DesirabilityError(f"no confirmation job has a value of {fit.response!r}")
        # the mean of log y for a log fit: its interval is for the (geometric) mean on that scale
        mean = float(np.exp(np.log(y).mean())) if fit.transform == "log" else float(y.mean())
        checks.append(ConfirmationCheck(fit.response, len(y), mean, fit.interval(at, new_jobs=len(y), level=level)))
    return tuple(float(v) for v in at), tuple(checks)
