"""``sparkdl concurrent``'s options are checked before a cluster starts: an impossible value is one line, exit 2
(found by bench/fuzz.py's concurrent-options kind: --learning-rate inf, nan and 1e400 were taken)."""

from __future__ import annotations

import pytest

from optimize.cli.concurrent import build_parser, planned_groups
from tests.inputs import run_main


def _main(argv):
    planned_groups(build_parser().parse_args(argv))
    return 0


@pytest.mark.parametrize("extra", [["--learning-rate", "inf"], ["--learning-rate", "nan"], ["--learning-rate", "0"],
                                   ["--learning-rate", "-0.1"], ["--learning-rate", "1e400"], ["--epochs", "0"],
                                   ["--epochs", "-1"], ["--batch-sizes", "0"], ["--batch-sizes", "64", "-1"],
                                   ["--cpus", "0"], ["--njobs", "-2"]])
def test_an_impossible_value_is_refused_in_one_line(tmp_path, extra):
    o = run_main(_main, ["--out", str(tmp_path / "out"), *extra])
    errors = [line for line in o.err.splitlines() if "error:" in line]
    assert o.code == 2 and len(errors) == 1 and extra[0] in errors[0], o.err
    assert not (tmp_path / "out").exists()


def test_the_groups_hold_the_options_as_given(tmp_path):
    args = build_parser().parse_args(["--out", str(tmp_path), "--cpus", "2", "--njobs", "3", "--batch-sizes", "64",
                                      "128", "--learning-rate", "0.1", "--epochs", "2"])
    groups = planned_groups(args)
    assert [g for g, _ in groups] == [1, 2]
    assert [[s.as_row()["batch_size"] for s in specs] for _, specs in groups] == [[64] * 3, [128] * 3]
    assert {s.as_row()["learning_rate"] for _, specs in groups for s in specs} == {0.1}
    assert [s.run for s in groups[1][1]] == [4, 5, 6]
