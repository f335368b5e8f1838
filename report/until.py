"""The report's "Replicate until sure" section: the stopping rule of ``harness.submit --until`` and each design
point's final interval and the reason it stopped, as the campaign's manifest records them (harness.until)."""

from __future__ import annotations

from pathlib import Path

from harness.until import REASONS, UntilResult, point_table
from report import html as h
from sparkdl.campaign import CampaignDir
from sparkdl.errors import CampaignError


def until_result(source: Path | None) -> UntilResult | None:
    """The campaign's replicate-until-sure record (None: a fixed number of replicates, or no readable manifest)."""
    folder = CampaignDir.of(source) if source is not None else None
    try:
        manifest = folder.read_manifest() if folder is not None else None
    except CampaignError:
        return None
    return None if manifest is None or manifest.until is None else UntilResult.from_dict(manifest.until)


def until_section(result: UntilResult) -> str:
    """The rule, why the campaign stopped, and one row per point."""
    rule = result.rule
    budget = "none" if rule.budget_s is None else f"{rule.budget_s / 60:.1f} min of cluster time"
    intro = (f"Replicates were added one at a time, to the design point whose {rule.confidence:.0%} t interval of "
             f"the mean was widest against the target {rule.text} (the interval's half-width"
             f"{', as a percentage of the mean' if rule.relative else ''}), after a first pass of "
             f"{rule.min_replications} replicates; at most {rule.max_replications} a point; budget {budget}. "
             "Failed runs, and runs without a value of the response, are not replicates. The rule looks at the "
             "width only, never at an effect or a p-value, so the intervals keep close to their nominal coverage.")
    header, *rows = point_table(result)
    table = h.table(header, [[h.tcell(c) for c in row] for row in rows], table_id="until-points",
                    numeric_headers=[True, False, True, True, True, False, True, False])
    reasons = [f"{reason}: {text}" for reason, text in REASONS.items() if result.counts.get(reason)]
    return "\n".join([h.para(intro), table, h.bullets(reasons), h.para(result.summary_line(), "small")])
