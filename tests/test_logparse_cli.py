"""python -m logparse: CSV/JSON output, --epochs, --min-replications, exit codes, import cost."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logparse import cli, parse
from tests.test_logparse import FIXTURES, fixture_text, reference


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = cli.build_parser().parse_args(list(argv))
    code = cli.run(args, out, err)
    return code, out.getvalue(), err.getvalue()


def test_json_has_the_contract_keys_for_every_log_in_a_directory():
    code, out, _ = run_cli("--format", "json", str(FIXTURES))
    rows = json.loads(out)
    assert code == 3 and len(rows) == len(list(FIXTURES.glob("*.out.gz")))  # 3: some logs are not ok
    for row in rows:
        assert {"path", "status", "reason", "wall_clock_s", "accuracy", "epochs_completed", "learning_rate"} <= row.keys()
    by_name = {r["path"].rsplit("/", 1)[1]: r for r in rows}
    lr = by_name["lenet-lr2.5-3ep.out.gz"]
    ref = reference(fixture_text("lenet-lr2.5-3ep"))
    assert (lr["status"], lr["learning_rate"], lr["accuracy"], lr["wall_clock_s"]) == (
        "ok", 2.5, ref["accuracy"], ref["wall_clock_s"])
    assert by_name["birnn-batch65.out.gz"]["status"] == "failed"


def test_csv_round_trips_the_figures():
    code, out, _ = run_cli("--format", "csv", str(FIXTURES / "birnn-small-1ep.out.gz"),
                           str(FIXTURES / "lenet-killed.out.gz"))
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 3 and [r["status"] for r in rows] == ["ok", "incomplete"]
    ref = reference(fixture_text("birnn-small-1ep"))
    assert float(rows[0]["accuracy"]) == ref["accuracy"] and float(rows[0]["wall_clock_s"]) == ref["wall_clock_s"]
    assert rows[0]["reason"] == "" and rows[1]["failure_kind"] == "infrastructure"


def test_epochs_rows_agree_with_the_records():
    code, out, _ = run_cli("--per-epoch", "--format", "json", str(FIXTURES / "lenet-lr2.5-3ep.out.gz"))
    rows = json.loads(out)
    log = parse(FIXTURES / "lenet-lr2.5-3ep.out.gz", full=True)
    assert [r["epoch"] for r in rows] == [1, 2, 3]
    for row, end, val in zip(rows, log.epochs, log.validations):
        its = [i for i in log.iterations if i.epoch == row["epoch"]]
        assert row["iterations"] == len(its) == 4 and row["records"] == 256
        assert row["epoch_wall_clock_ms"] == end.epoch_wall_clock_ms and row["accuracy"] == val.accuracy
        assert abs(row["mean_loss"] - sum(i.loss for i in its) / 4) < 1e-12


def test_min_replications_warns_per_design_point(tmp_path):
    for point, names in {"p1": ["lenet-lr2.5-3ep", "birnn-small-1ep"], "p2": ["lenet-killed", "birnn-4000-1ep"]}.items():
        (tmp_path / point).mkdir()
        for n in names:
            shutil.copy(FIXTURES / f"{n}.out.gz", tmp_path / point / f"{n}.out.gz")
    code, _, err = run_cli("--min-replications", "2", str(tmp_path))
    assert code == 3
    assert err.strip() == f"warning: design point {tmp_path / 'p2'}: 1 ok log(s) of 2 required (0 failed, 1 incomplete)"
    code, _, err = run_cli("--min-replications", "1", "--point-pattern", r"/(p\d)/", str(tmp_path))
    assert err == ""


def test_exit_codes_for_bad_input(tmp_path):
    from sparkdl.cli import run_cli as tool_cli

    assert tool_cli(cli.main, [str(tmp_path / "missing.out")]) == 2
    assert tool_cli(cli.main, ["--min-replications", "0", str(FIXTURES)]) == 2
    assert tool_cli(cli.main, ["--point-pattern", "(", str(FIXTURES)]) == 2
    assert tool_cli(cli.main, ["--expected-epochs", "0", str(FIXTURES)]) == 2
    assert tool_cli(cli.main, [str(FIXTURES / "lenet-lr2.5-3ep.out.gz")]) == 0
    assert tool_cli(cli.main, [str(FIXTURES / "lenet-killed.out.gz")]) == 3


HEAVY = ('pandas', 'numpy', 'json', 'csv', 'argparse', 'dataclasses', 'typing', 'pathlib', 'inspect')


def test_module_entry_point_and_light_imports():
    # `python -m logparse` is timed against grep: start-up imports are part of that time
    code = ("import sys, logparse, logparse.cli; "
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    r = subprocess.run([sys.executable, "-m", "logparse", "--format", "json", str(FIXTURES / "bad-data-dir.out.gz")],
                       capture_output=True, text=True)
    assert r.returncode == 3 and json.loads(r.stdout)[0]["status"] == "failed"


def test_harness_logs_group_by_run():
    from logparse.replications import point_of

    assert point_of("runs/x/logs/12-3.out", None) == "runs/x/logs run 12"
    assert point_of("runs/x/logs/12-3.attempt1.out", None) == "runs/x/logs run 12"
    assert point_of("old/point07/rep3.out", None) == "old/point07"


def test_losses_option_applies_the_harness_rule_on_lost_executors():
    p = str(FIXTURES / "lenet-worker-killed.out.gz")
    code, out, _ = run_cli("--format", "csv", p)
    assert code == 0 and list(csv.DictReader(io.StringIO(out)))[0]["status"] == "ok"
    code, out, _ = run_cli("--format", "csv", "--losses", p)
    (row,) = csv.DictReader(io.StringIO(out))
    assert code == 3 and (row["status"], row["failure_kind"]) == ("failed", "infrastructure")
    assert "lost executor" in row["reason"]


def test_epochs_rows_of_a_local_optimizer_log():
    code, out, _ = run_cli("--per-epoch", "--format", "json", str(FIXTURES / "dllib-local-optimizer.out.gz"))
    rows = json.loads(out)
    assert code == 0 and [r["epoch"] for r in rows] == [1, 2] and [r["records"] for r in rows] == [256, 256]
    assert rows[-1]["accuracy"] == 0.546875 and rows[-1]["epoch_wall_clock_ms"] is None


def test_a_plain_command_line_starts_without_argparse_dataclasses_or_pathlib(tmp_path):
    code = ("import runpy, sys; sys.argv = ['logparse', sys.argv[1]]\n"
            "try:\n    runpy.run_module('logparse', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY[4:]!r} if m in sys.modules), file=sys.stderr)")
    (tmp_path / "a.out").write_bytes(b"")  # one log (a folder without one is an error line)
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr.strip() == "[]", r.stderr


# Command lines built from the options' own words: the fast path must give argparse's answer, or defer to it.
WORDS = st.sampled_from(["--format", "csv", "json", "text", "xml", "--per-epoch", "--full", "--losses", "--expected-epochs",
                         "--min-replications", "--point-pattern", "3", "-1", "0x5", " 7", "1_0", "logs", "a.out",
                         "-", "--", "--format=json", "--per-epoch=1", "--expected-epochs=2", "--point-pattern=(p)",
                         "--exp", "--full=", "-h", "--unknown", "--min-replications=x", "--point-pattern="])


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=7))
def test_the_fast_path_parses_as_argparse_does(argv):
    try:
        expected = vars(cli.build_parser().parse_args(argv))
    except SystemExit:
        expected = None
    fast = cli._parse_plain(list(argv))
    if fast is not None:
        assert expected is not None and vars(fast) == expected
    import contextlib
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        if expected is None:
            with pytest.raises(SystemExit):
                cli.parse_args(argv)
        else:
            assert vars(cli.parse_args(argv)) == expected


def test_the_fast_path_takes_the_plain_forms():
    fast = cli._parse_plain(["--format", "json", "--expected-epochs=3", "--losses", "a", "b"])
    assert fast is not None and (fast.paths, fast.format, fast.expected_epochs, fast.losses) == (["a", "b"], "json", 3, True)
