"""harness.ingest: a finished study's logs, named by their settings, become a campaign the analyses read.

The study is bench/studylogs.py's: folders ``experiment<rep>_<lr>_<batch>_<epochs>_<nodes>_<reg>/<x>.out`` made
from the real fixture logs, each with its truth (status, final wall clock and accuracy) known from how it was
written; every figure in results.csv is checked against that truth, not against logparse's own output.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from bench.studylogs import FIELDS, make_study
from harness.cli import ingest as ingest_mod
from harness.ingest import kind_of, level, typed
from logparse import parse
from sparkdl.cli import run_cli


def run(capsys, module_main, *argv: str) -> tuple[int, str, str]:
    code = run_cli(module_main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def ingest(capsys, *argv: str) -> tuple[int, str, str]:
    return run(capsys, ingest_mod.main, *argv)


def rows_of(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    logs = make_study(root / "study", points=30, replicates=2, min_mb=0.03, max_mb=0.08, seed=25)
    return root, logs


def fresh_copy(study, tmp_path: Path) -> tuple[Path, dict[str, object]]:
    """The study copied to tmp_path (tests that change it), and each log's truth by its path there."""
    root, logs = study
    shutil.copytree(root / "study", tmp_path / "study")
    truth = {str(tmp_path / "study" / x.path.relative_to(root / "study")): x for x in logs}
    return tmp_path / "study", truth


def test_values_are_typed_by_their_column():
    assert kind_of(["1", "12", None]) == "int" and kind_of(["0.01", "1", "1e-3"]) == "float"
    assert kind_of(["0.01", "adam"]) == "str" and kind_of(["nan"]) == "str" and kind_of([None, ""]) == "str"
    assert typed("128", "int") == 128 and typed("1", "float") == 1.0 and typed(None, "int") is None
    assert level("0.010") == level("0.01") and level("10") == level("10.0") and level("x") == "x"


def test_a_whole_number_past_18_digits_is_kept_as_written_not_rounded_into_a_float_column(tmp_path, capsys):
    # beside a 2-digit batch size, "12345678901234567890" made the column float and was written 1.2345678901234567e+19
    # (found by bench/fuzz.py's ingest kind)
    assert kind_of(["64", "12345678901234567890"]) == "str" and kind_of(["0.5", "-1234567890123456789"]) == "str"
    assert kind_of(["64", "123456789012345678"]) == "int" and kind_of(["0.5", "123456789012345678"]) == "float"
    log = Path(__file__).resolve().parent / "fixtures" / "logs" / "dllib-print-after-training.out.gz"
    for name in ("b64", "b12345678901234567890"):
        (tmp_path / "study" / name).mkdir(parents=True)
        shutil.copyfile(log, tmp_path / "study" / name / "x.out.gz")
    code, _, err = ingest(capsys, str(tmp_path / "study"), "--fields", r"b(?P<batch_size>\d+)/", "--out",
                          str(tmp_path / "out"))
    assert code == 0, err
    assert sorted(r["batch_size"] for r in rows_of(tmp_path / "out")) == ["12345678901234567890", "64"]


def test_a_study_becomes_a_campaign_with_typed_factors_and_exact_figures(study, tmp_path, capsys):
    root, logs = study
    out = tmp_path / "runs"
    code, stdout, err = ingest(capsys, str(root / "study"), "--fields", FIELDS, "--out", str(out))
    failed = sum(x.status == "failed" for x in logs)
    assert failed and code == 3, err  # some runs failed: finished, exit 3
    assert f"{len(logs)} log(s) in {out}: {failed} failed, {len(logs) - failed} ok" in stdout
    rows = rows_of(out)
    assert len(rows) == len(logs)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["factors"] == ["learning_rate", "batch_size", "epochs", "nodes", "regularisation"]
    assert (manifest["source"], manifest["results"]) == ("ingest", "bigdl")
    truth = {str(x.path): x for x in logs}
    points: dict[tuple[str, ...], str] = {}
    for row in rows:
        t = truth[row["log"]]  # logs stay where they are: the column is the real path
        assert row["status"] == t.status, (row["log"], row["reason"])
        settings = t.settings
        assert row["replicate"] == settings["replicate"]
        # typed: integers as integers, the rest as numbers (0.0001 stays a number, not text)
        assert row["batch_size"] == settings["batch_size"] and row["nodes"] == settings["nodes"]
        assert float(row["learning_rate"]) == float(settings["learning_rate"])
        assert float(row["regularisation"]) == float(settings["regularisation"])
        key = tuple(settings[k] for k in manifest["factors"])
        assert points.setdefault(key, row["run"]) == row["run"]  # one run number per design point
        if t.status == "ok":
            assert float(row["wall_clock_s"]) == t.wall_clock_s and float(row["accuracy"]) == t.accuracy
            assert row["planned_epochs"] == settings["epochs"] == row["epochs_completed"]
        else:
            assert "No space left on device" in row["reason"] and row["failure_kind"] == "infrastructure"  # a full disk is the host's, not the job's
    assert len(set(points.values())) == len(points) == 30
    # the CSV's types as pandas reads them (what models see)
    import pandas as pd

    frame = pd.read_csv(out / "results.csv")
    assert str(frame["batch_size"].dtype) == "int64" and str(frame["regularisation"].dtype) == "float64"
    # provenance: where the logs came from and how they were matched
    con = sqlite3.connect(out / "campaign.sqlite")
    meta = {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM meta")}
    con.close()
    assert meta["ingest_fields"] == FIELDS and meta["ingest_paths"] == [os.path.realpath(root / "study")]
    assert meta["source"] == "ingest" and meta["design_sha256"].startswith("ingest:") and meta["ingest_logs"] == 60


def test_the_analyses_read_the_ingested_folder_unchanged(study, tmp_path, capsys):
    root, logs = study
    out = tmp_path / "runs"
    assert ingest(capsys, str(root / "study"), "--fields", FIELDS, "--out", str(out))[0] == 3
    from report.cli import main as report_main
    from models.anova.cli import main as anova_main
    from models.rsm.cli import main as rsm_main
    from optimize.cli.pareto import main as pareto_main

    ok = [x for x in logs if x.status == "ok"]
    code, stdout, err = run(capsys, anova_main, str(out), "--format", "json")
    assert code == 0, err
    result = json.loads(stdout)
    assert result["input"]["factors"] == ["learning_rate", "batch_size", "epochs", "nodes", "regularisation"]
    assert result["input"]["factors_from"] == "manifest.json" and result["input"]["read"] == len(logs)
    assert result["input"]["dropped"] == {"status=failed": len(logs) - len(ok)} and result["summary"]["n"] == len(ok)
    # the cost analysed is the default T/(A*100)^2 of the true figures: R^2 = 1 - SS_resid / SS_total of those
    import numpy as np

    cost = np.array([x.wall_clock_s / (x.accuracy * 100) ** 2 for x in ok])
    resid = next(r["sum_sq"] for r in result["rows"] if r["term"] == "Residual")
    assert result["summary"]["r_squared"] == pytest.approx(1 - resid / float(((cost - cost.mean()) ** 2).sum()),
                                                           rel=1e-9)
    code, stdout, err = run(capsys, rsm_main, str(out), "--response", "wall_clock_s", "--factors", "nodes,batch_size",
                            "--goal", "min")
    assert code == 0, err
    assert f"{len(ok)} jobs at" in stdout
    code, stdout, err = run(capsys, pareto_main, str(out), "--no-plot", "--format", "json")
    assert code == 0, err
    front = json.loads(stdout)  # replicated: the front of design points, named by the manifest's factors
    assert front["per"] == "design point" and front["key_columns"][-1] == "regularisation"
    assert all("regularisation" in p["settings"] for p in front["front"])
    code, stdout, err = run(capsys, pareto_main, str(out), "--no-plot", "--format", "json", "--per-run")
    assert code == 0, err
    front = json.loads(stdout)
    walls = {x.wall_clock_s for x in ok}
    assert min(walls) in {p["wall_clock_s"] for p in front["front"]}  # the fastest ok run is on the front
    assert all("regularisation" in p for p in front["front"])  # the manifest's factors beside each point
    code, stdout, err = run(capsys, report_main, str(out), "--out", str(tmp_path / "report.html"))
    assert code == 0, err
    html = (tmp_path / "report.html").read_text()
    assert "regularisation" in html and "No space left on device" in html  # factors, and failed logs' tails
    assert f"{len(ok)} of {len(logs)} jobs analysed" in stdout


def test_rerun_reads_only_new_or_changed_logs_and_keeps_run_numbers(study, tmp_path, capsys):
    folder, truth = fresh_copy(study, tmp_path)
    out = tmp_path / "runs"
    ingest(capsys, str(folder), "--fields", FIELDS, "--out", str(out))
    before = (out / "results.csv").read_bytes()
    code, stdout, _ = ingest(capsys, str(folder), "--fields", FIELDS, "--out", str(out))
    assert code == 3 and "0 new, 0 read again (changed), 60 unchanged" in stdout
    assert (out / "results.csv").read_bytes() == before  # idempotent: the same file
    # new logs: a third replicate of one point, and a point never seen; one old log grows
    known = next(r for r in rows_of(out) if r["status"] == "ok")
    src = Path(known["log"])
    third = Path(str(src.parent).replace("experiment1_", "experiment3_").replace("experiment2_", "experiment3_"))
    third.mkdir()
    shutil.copy(src, third / "7.700000.out")
    novel = folder / "experiment1_0.5_256_2_8_0.01"
    novel.mkdir()
    shutil.copy(src, novel / "1.000000.out")
    changed = Path(next(r for r in rows_of(out) if r["run"] != known["run"])["log"])
    with open(changed, "a") as f:
        f.write("Evaluation done\n")
    code, stdout, _ = ingest(capsys, str(folder), "--fields", FIELDS, "--out", str(out))
    assert "2 new, 1 read again (changed), 59 unchanged" in stdout
    rows = {r["log"]: r for r in rows_of(out)}
    old = {r["log"]: r for r in csv.DictReader(before.decode().splitlines())}
    assert all((rows[k]["run"], rows[k]["replicate"]) == (v["run"], v["replicate"]) for k, v in old.items())
    added = rows[str(third / "7.700000.out")]
    assert (added["run"], added["replicate"]) == (known["run"], "3")  # a known point keeps its run number
    assert int(rows[str(novel / "1.000000.out")]["run"]) == 31  # a new point takes the next
    # another regex on the same folder would mix two meanings of the columns: refused
    code, _, err = ingest(capsys, str(folder), "--fields", FIELDS.replace("nodes", "workers"), "--out", str(out))
    assert code == 2 and "was ingested with --fields" in err and len(err.strip().splitlines()) == 1


def test_copy_puts_each_log_and_its_err_in_the_folder(study, tmp_path, capsys):
    folder, _ = fresh_copy(study, tmp_path)
    first = sorted(folder.iterdir())[0]
    log = next(first.glob("*.out"))
    log.with_suffix(".err").write_text("stderr of the job\n")
    out = tmp_path / "runs"
    code, _, err = ingest(capsys, str(folder), "--fields", FIELDS, "--out", str(out), "--copy")
    rows = rows_of(out)
    assert code == 3 and all(r["log"] == f"logs/{r['run']}-{r['replicate']}.out" for r in rows)
    by_key = {r["log"]: r for r in rows}
    for r in rows:
        assert (out / r["log"]).is_file()
    copied = [k for k in by_key if (out / k).read_bytes() == log.read_bytes()]
    assert len(copied) == 1 and (out / copied[0]).with_suffix(".err").read_text() == "stderr of the job\n"
    mine, theirs = parse(out / copied[0]), parse(log)
    assert (mine.status, mine.wall_clock_s, mine.accuracy) == (theirs.status, theirs.wall_clock_s, theirs.accuracy)
    # the copies are never ingested again as logs of their own, even with the folder inside the study
    inside = folder / "runs"
    code, stdout, _ = ingest(capsys, str(folder), "--fields", FIELDS, "--out", str(inside), "--copy")
    code, stdout, _ = ingest(capsys, str(folder), "--fields", FIELDS, "--out", str(inside), "--copy")
    assert "0 new, 0 read again (changed), 60 unchanged" in stdout


def test_unmatched_logs_are_named_and_stop_or_are_skipped(study, tmp_path, capsys):
    folder, _ = fresh_copy(study, tmp_path)
    stray = folder / "scratch" / "debug.out"
    stray.parent.mkdir()
    shutil.copy(next(folder.rglob("*.out")), stray)
    out = tmp_path / "runs"
    code, stdout, err = ingest(capsys, str(folder), "--fields", FIELDS, "--out", str(out))
    lines = err.strip().splitlines()
    assert code == 2 and lines[0] == f"error: {stray}: its path does not match --fields"
    assert lines[-1].startswith("error: 1 of 61 log(s) do not match --fields") and "--skip-unmatched" in lines[-1]
    assert len(lines) == 2 and not out.exists()  # nothing written
    code, stdout, err = ingest(capsys, str(folder), "--fields", FIELDS, "--out", str(out), "--skip-unmatched")
    assert code == 3 and f"skipped {stray}: its path does not match --fields" in err
    assert len(rows_of(out)) == 60 and "1 skipped (unmatched)" in stdout


def test_epochs_rows_carry_the_factors(study, tmp_path, capsys):
    root, logs = study
    out = tmp_path / "runs"
    ingest(capsys, str(root / "study"), "--fields", FIELDS, "--out", str(out), "--per-epoch")
    with open(out / "epochs.csv", newline="") as f:
        epochs = list(csv.DictReader(f))
    rows = {(r["run"], r["replicate"]): r for r in rows_of(out)}
    for x in logs[:6]:
        full = parse(x.path, full=True)
        mine = [e for e in epochs if e["log"] == str(x.path)]
        assert [int(e["epoch"]) for e in mine] == sorted({i.epoch for i in full.iterations})
        row = rows[mine[0]["run"], mine[0]["replicate"]]
        for e in mine:
            assert e["learning_rate"] == row["learning_rate"] and e["run_status"] == x.status
            its = [i for i in full.iterations if i.epoch == int(e["epoch"])]
            assert int(e["iterations"]) == len(its)
            val = [v for v in full.validations if v.epoch == int(e["epoch"])]
            assert (e["accuracy"] or None) == (None if not val else repr(val[-1].accuracy))


def test_bad_input_is_one_line_and_exit_2(study, tmp_path, capsys):
    root, _ = study
    out = tmp_path / "runs"
    for argv, words in [
        (["--fields", "experiment(", "--out", str(out)], "is not a regular expression"),
        (["--fields", r"experiment\d+", "--out", str(out)], "names no group"),
        (["--fields", FIELDS, "--out", str(out), "--factors", "nodes,colour"], "--factors colour: not a group"),
        (["--fields", r"(?P<status>\d)", "--out", str(out)], "names of result columns"),
        (["--fields", r"experiment(?P<replicate>\d)", "--out", str(out)], "names only run/replicate"),
    ]:
        code, _, err = ingest(capsys, str(root / "study"), *argv)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, (argv, err)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = ingest(capsys, str(empty), "--fields", FIELDS, "--out", str(out))
    assert code == 2 and "no log in" in err and not out.exists()
    # two logs with the same settings and replicate cannot both be that run
    twice = tmp_path / "twice" / "experiment1_0.1_64_2_1_0.001"
    twice.mkdir(parents=True)
    src = next((root / "study").rglob("*.out"))
    shutil.copy(src, twice / "a.out")
    shutil.copy(src, twice / "b.out")
    code, _, err = ingest(capsys, str(tmp_path / "twice"), "--fields", FIELDS, "--out", str(out))
    assert code == 2 and "are both run 1 replicate 1" in err
    # a folder the harness ran a campaign in is not overwritten by ingested logs
    camp = tmp_path / "camp"
    from harness.store import ResultStore

    store = ResultStore(camp)
    store.set_meta({"design_sha256": "abc"})
    store.close()
    code, _, err = ingest(capsys, str(root / "study"), "--fields", FIELDS, "--out", str(camp))
    assert code == 2 and "not ingested logs" in err


def test_a_dangling_link_read_for_the_first_time_is_one_error_not_a_log_gone_since(tmp_path, capsys):
    # a first ingest said of a dangling *.out link both "cannot read" and "the log is gone; its row is kept as read
    # before" (found by bench/fuzz.py's ingest kind): it was never read before
    log = Path(__file__).resolve().parent / "fixtures" / "logs" / "dllib-print-after-training.out.gz"
    (tmp_path / "study" / "b64").mkdir(parents=True)
    shutil.copyfile(log, tmp_path / "study" / "b64" / "x.out.gz")
    (tmp_path / "study" / "b32").mkdir()
    (tmp_path / "study" / "b32" / "dead.out").symlink_to(tmp_path / "study" / "nowhere.out")
    code, _, err = ingest(capsys, str(tmp_path / "study"), "--fields", r"b(?P<batch_size>\d+)/", "--out",
                          str(tmp_path / "out"))
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "no such file" in lines[0], err
    assert sorted(r["status"] for r in rows_of(tmp_path / "out")) == ["failed", "ok"]
