"""``sparkdl batch`` and ``sparkdl epochs`` refuse an impossible SLO, margin or interval level in one line (found by
bench/fuzz.py's batch-slo and epochs-budget kinds: ``batch --slo 1e400`` answered for an SLO of inf s, ``epochs --level
2`` ended in an internal error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.inputs import run_main

ROOT = Path(__file__).resolve().parent.parent


def _batch(argv):
    from optimize.cli.batch import main
    return main(argv)


def _epochs(argv):
    from optimize.cli.epochs import main
    return main(argv)


def _one_error_line(o, word):
    errors = [line for line in o.err.splitlines() if "error:" in line]
    return o.code == 2 and len(errors) == 1 and word in errors[0] and "internal error" not in o.err


@pytest.mark.parametrize("flag,value", [("--slo", "1e400"), ("--slo", "inf"), ("--slo", "nan"), ("--slo", "0"),
                                        ("--slo", "-5"), ("--level", "2"), ("--level", "0"), ("--level", "nan"),
                                        ("--margin", "nan"), ("--margin", "-1"), ("--margin", "inf")])
def test_batch_refuses_an_impossible_value(flag, value):
    argv = [str(ROOT / "examples" / "batch_slo_lenet" / "campaign"), "--slo", "13.5", "--cpus", "1", "--njobs", "1",
            "--trees", "10", flag, value]
    o = run_main(_batch, argv)
    assert _one_error_line(o, flag), o.err[-400:]


@pytest.mark.parametrize("value", ["2", "0", "1", "nan", "-0.5"])
def test_epochs_refuses_an_impossible_level(value):
    argv = [str(ROOT / "examples" / "epochs_budget_lenet" / "campaign"), "--budget", "30m", "--trees", "10",
            "--level", value]
    o = run_main(_epochs, argv)
    assert _one_error_line(o, "--level"), o.err[-400:]
