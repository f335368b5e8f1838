"""The campaign's whole plots (harness.wholeplots): order, grouping, resets and the manifest's record."""

from __future__ import annotations

from collections import Counter

from sparkdl.runspec import RunSpec
from sparkdl.campaign import Manifest
from harness.wholeplots import Planned, needs_reset, plan_whole_plots


def spec(run: int, replicate: int, nodes: int, **params) -> RunSpec:
    return RunSpec(run=run, replicate=replicate, nodes=nodes, executors=1, executor_cores=1,
                   params=tuple(params.items()))


def one_runtime(_: RunSpec) -> tuple[str, str]:
    return ("bigdl", "stock")


def test_design_whole_plots_run_together_in_order_of_first_appearance_even_when_interleaved():
    # a resumed campaign, or a design edited by hand, may list a whole plot's rows apart
    specs = [spec(1, 1, 2, lr=1, whole_plot=2), spec(2, 1, 1, lr=1, whole_plot=1), spec(3, 1, 2, lr=2, whole_plot=2),
             spec(4, 1, 1, lr=2, whole_plot=1)]
    planned = plan_whole_plots(specs, one_runtime)
    assert [(p.spec.run, p.whole_plot) for p in planned] == [(1, 2), (3, 2), (2, 1), (4, 1)]


def test_no_whole_plots_without_the_column_and_with_one_runtime_keeps_the_design_order():
    specs = [spec(i, 1, 1 + i % 2, lr=i) for i in range(1, 6)]
    planned = plan_whole_plots(specs, one_runtime)
    assert [p.spec.run for p in planned] == [1, 2, 3, 4, 5] and {p.whole_plot for p in planned} == {None}


def test_reset_at_every_whole_plot_boundary_even_at_the_same_levels_and_never_inside_one():
    a, b, c = (Planned(spec(i, 1, 2, lr=i), wp) for i, wp in ((1, 1), (2, 1), (3, 2)))
    assert not needs_reset(None, a)  # the first run: the cluster was just opened
    assert not needs_reset(a, b)
    assert needs_reset(b, c)  # same nodes, another whole plot: reset
    assert not needs_reset(Planned(a.spec, None), Planned(c.spec, None))


def test_manifest_records_the_factors_constant_inside_every_whole_plot():
    specs = [spec(r, rep, n, lr=lr, whole_plot=wp)
             for wp, (rep, n) in enumerate([(1, 1), (1, 2), (2, 2), (2, 1)], start=1)
             for r, lr in ((1, 1), (2, 2))]
    m = Manifest.for_design(specs)
    assert "whole_plot" not in m.factors and m.factors == ("nodes", "executors", "executor_cores", "lr")
    assert m.whole_plot_factors == ("nodes",) and m.whole_plots == 4
    again = Manifest.from_json(m.to_json())
    assert again.whole_plot_factors == ("nodes",) and again.whole_plots == 4
    plain = Manifest.for_design([spec(1, 1, 1, lr=1), spec(2, 1, 2, lr=2)])
    assert plain.whole_plot_factors == () and "whole_plot_factors" not in plain.to_json()
    assert Counter(Manifest.from_json(plain.to_json()).factors) == Counter(plain.factors)


# -- reference runs (harness.reference) ------------------------------------------------------------

import pytest  # noqa: E402

from harness.reference import ReferenceError, centre_row, with_reference  # noqa: E402


def test_reference_runs_go_first_every_n_and_last_as_a_run_of_their_own():
    specs = [spec(i, 1, 1, lr=i) for i in range(1, 8)]
    placed = with_reference(specs, 3)
    order = [(s.run, s.replicate) for s in placed.specs]
    assert order == [(8, 1), (1, 1), (2, 1), (3, 1), (8, 2), (4, 1), (5, 1), (6, 1), (8, 3), (7, 1), (8, 4)]
    assert placed.reference_run == 8 and placed.count == 4
    assert placed.reference_row == 4  # lr 4 is the centre of 1..7
    ref = placed.specs[0]
    assert dict(ref.params) == dict(specs[3].params) and ref.nodes == specs[3].nodes


def test_reference_runs_never_split_a_whole_plot_and_get_whole_plots_of_their_own():
    specs = [spec(r, rep, n, lr=r, whole_plot=wp) for wp, (rep, n) in enumerate([(1, 1), (1, 2), (2, 2)], start=1)
             for r in (1, 2, 3)]
    placed = with_reference(specs, 2, row=5)
    plots = [s.get("whole_plot") for s in placed.specs]
    assert plots == [4, 1, 1, 1, 5, 2, 2, 2, 6, 3, 3, 3, 7]
    assert all(s.run == 4 for s in placed.specs if s.get("whole_plot") >= 4)
    planned = plan_whole_plots(placed.specs, one_runtime)
    assert [p.whole_plot for p in planned] == plots  # the campaign keeps the placement


def test_centre_row_is_nearest_the_middle_of_each_numeric_range_ties_to_the_first():
    specs = [spec(1, 1, 1, lr=0.1, bs=32), spec(2, 1, 4, lr=0.01, bs=64), spec(3, 1, 2, lr=0.05, bs=48),
             spec(4, 1, 3, lr=0.05, bs=48)]
    assert centre_row(specs) == 2


@pytest.mark.parametrize("every, row, message", [(0, None, "from 1 to"), (2, 9, "rows 1 to 3")])
def test_bad_reference_options_name_the_fix(every, row, message):
    with pytest.raises(ReferenceError, match=message):
        with_reference([spec(i, 1, 1, lr=i) for i in range(1, 4)], every, row)
