"""Central composite designs (Box and Wilson, 1951) for two or more numeric factors.

A CCD is a 2^k full factorial (the cube, coded +-1), 2k axial points at +-alpha on each axis
with the other factors at their centre, and ``n0`` centre points: ``2^k + 2k + n0`` runs.
The distance ``alpha`` is chosen for a property:

* ``rotatable``: alpha = (2^k)^(1/4), so the prediction variance depends only on the distance
  from the centre (k = 2: 1.414, k = 3: 1.682);
* ``orthogonal``: alpha = sqrt((sqrt(F N) - F) / 2) with F = 2^k and N = F + 2k + n0, so the
  centred quadratic columns are uncorrelated (from sum x_i^2 x_j^2 = F = (F + 2 alpha^2)^2 / N);
* ``face-centred``: alpha = 1, three levels per factor, the axial points on the cube's faces;
* a number: that alpha.

The factors file gives each factor's low and high level. By default these are the cube
(+-1) and the axial points lie beyond them (circumscribed, CCC); with ``inscribed`` the given
levels are the axial points (+-alpha) and the cube shrinks inside them (CCI), for factors
that cannot go past their limits. Integer factors (e.g. batch size) are rounded to integers;
``coded`` then holds the coded value of the rounded level, so the design says exactly what ran.

>>> from harness.design.factors import make_factors
>>> d = central_composite(make_factors({"lr": [0.02, 0.1], "batch": [32, 128]}), "face-centred", 3)
>>> d.n_runs, d.alpha, d.factors.factors[1].levels
(11, 1.0, (32, 80, 128))
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.design._base import Design
from harness.design.factors import Factor, FactorSet, Level
from harness.design.full import full_factorial
from harness.errors import DesignError

ALPHAS = ("rotatable", "orthogonal", "face-centred")
ALPHA_ALIASES = {"face-centered": "face-centred", "faced": "face-centred", "face": "face-centred"}


def rotatable_alpha(k: int) -> float:
    """alpha = F^(1/4) with F = 2^k factorial points."""
    return float((2.0**k) ** 0.25)


def orthogonal_alpha(k: int, center_points: int) -> float:
    """alpha making the centred quadratic columns orthogonal: sqrt((sqrt(F N) - F) / 2)."""
    f = 2.0**k
    n = f + 2 * k + center_points
    return float(math.sqrt((math.sqrt(f * n) - f) / 2.0))


def resolve_alpha(alpha: str | float, k: int, center_points: int) -> tuple[str, float]:
    """The alpha's name and value; a number is taken as is ('custom')."""
    if isinstance(alpha, str):
        name = ALPHA_ALIASES.get(alpha.strip().lower(), alpha.strip().lower())
        if name == "rotatable":
            return name, rotatable_alpha(k)
        if name == "orthogonal":
            return name, orthogonal_alpha(k, center_points)
        if name == "face-centred":
            return name, 1.0
        try:
            alpha = float(name)
        except ValueError:
            raise DesignError(f"--axial {alpha!r}: use rotatable, orthogonal, face-centred or a number > 0") from None
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha > 0):
        raise DesignError(f"--axial {alpha!r} must be a number > 0 (or rotatable, orthogonal, face-centred)")
    return "custom", float(alpha)


@dataclass(frozen=True)
class CentralComposite(Design):
    """A CCD: ``alpha`` and its name, whether the cube is inscribed, and the coded matrix it really ran."""

    alpha: float = 1.0
    alpha_kind: str = "face-centred"
    inscribed: bool = False
    coded_levels: tuple[tuple[float, ...], ...] = ()

    def __post_init__(self) -> None:
        coded = np.column_stack([np.asarray(c, dtype=float)[self.index[:, j]] for j, c in enumerate(self.coded_levels)])
        object.__setattr__(self, "coded", coded)

    @property
    def n_factorial(self) -> int:
        return 2 ** len(self.factors.factors)

    @property
    def n_axial(self) -> int:
        return 2 * len(self.factors.factors)

    def title(self) -> str:
        k = len(self.factors.factors)
        shape = "inscribed" if self.inscribed and self.alpha != 1 else ""
        what = f"{self.alpha_kind} alpha = {self.alpha:.4g}"
        return (f"central composite design{' (' + shape + ')' if shape else ''}, {k} factors, {self.n_runs} runs "
                f"({self.n_factorial} factorial + {self.n_axial} axial + {self.center_points} center; {what})")

    def resolution_label(self) -> str:
        return "not applicable"

    def lines(self) -> list[str]:
        """What to know about the design beyond its title (for ``describe``)."""
        if self.alpha == 1.0:
            out = ["coded levels: -1, 0, +1 (face-centred: alpha = 1, the axial points on the cube's faces)"]
        else:
            out = [f"coded levels: -alpha, -1, 0, +1, +alpha with alpha = {self.alpha:.6g} ({self.alpha_kind})"]
        for f, coded in zip(self.factors.factors, self.coded_levels):
            out.append(f"  {f.name}: " + ", ".join(f"{v} ({c:+.4g})" for v, c in zip(f.levels, coded)))
        if self.inscribed:
            out.append("inscribed: the given levels are the axial points; the cube lies inside them")
        out.append("a second-order (quadratic) response-surface design: fit it with sparkdl rsm")
        return out


def central_composite(
    factors: FactorSet, alpha: str | float = "rotatable", center_points: int = 3, inscribed: bool = False
) -> CentralComposite:
    """The CCD of ``factors`` (each with levels low, high) in standard order: cube, axial, centre."""
    k = len(factors.factors)
    if k < 2:
        raise DesignError(f"a central composite design needs at least 2 factors, the factors file has {k}")
    if center_points < 0:
        raise DesignError(f"center points must be >= 0, got {center_points}")
    kind, a = resolve_alpha(alpha, k, center_points)
    cube = full_factorial(FactorSet(tuple(Factor(f.name, f.letter, (0, 1)) for f in factors.factors))).index
    x = np.vstack([
        2.0 * cube - 1.0,
        *[_axis(k, j, s * a) for j in range(k) for s in (-1, 1)],
        np.zeros((center_points, k)),
    ])
    columns = [_column(f, x[:, j], a, inscribed) for j, f in enumerate(factors.factors)]
    new = tuple(Factor(f.name, f.letter, c[0]) for f, c in zip(factors.factors, columns))
    index = np.column_stack([c[2] for c in columns])
    return CentralComposite(kind="ccd", factors=FactorSet(new, factors.constants), index=index,
                            center_points=center_points, alpha=a, alpha_kind=kind, inscribed=inscribed,
                            coded_levels=tuple(c[1] for c in columns))


def _axis(k: int, j: int, value: float) -> np.ndarray:
    row = np.zeros((1, k))
    row[0, j] = value
    return row


def _column(f: Factor, coded: np.ndarray, alpha: float, inscribed: bool
            ) -> tuple[tuple[Level, ...], tuple[float, ...], np.ndarray]:
    """Sorted natural levels, their realised coded values, and each run's index into them."""
    if not f.numeric:
        raise DesignError(f"factor {f.name} has non-numeric levels; a central composite design needs numeric factors")
    if len(f.levels) != 2:
        raise DesignError(f"factor {f.name} has {len(f.levels)} levels; give a CCD factor 2 (low, high)")
    low, high = sorted(float(v) for v in f.levels)
    centre, half = (low + high) / 2.0, (high - low) / 2.0
    if inscribed:
        half /= alpha
    integer = all(isinstance(v, int) for v in f.levels)
    values: list[Level] = []
    for c in coded.tolist():
        v = centre + half * c
        values.append(int(round(v)) if integer else float(f"{v:.6g}"))
    if low > 0 and min(values) <= 0:  # type: ignore[type-var]
        raise DesignError(
            f"factor {f.name}: the axial level {min(values):.4g} is <= 0 "  # type: ignore[type-var]
            "though the given levels are positive; "
            "use --inscribed (the given levels become the axial points), --axial face-centred, or narrower levels"
        )
    levels = tuple(sorted(set(values)))  # type: ignore[type-var]
    if len(levels) < len(set(np.round(coded, 12).tolist())):
        raise DesignError(
            f"factor {f.name}: rounding to integers merges distinct CCD levels ({list(levels)}); widen its range "
            "or use --axial face-centred"
        )
    realised = tuple(round((float(v) - centre) / half, 12) + 0.0 for v in levels)
    index = np.array([levels.index(v) for v in values], dtype=int)
    return levels, realised, index
