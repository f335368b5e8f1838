"""harness.ingest on hostile folders and options: each class is one line and exit 2 naming the thing (or the
right rows), never a traceback, a silent change or a folder left behind. The study is bench/studylogs.py's,
made from the real fixture logs."""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest

from bench.studylogs import FIELDS, make_study
from harness.cli import ingest as ingest_mod
from tests.inputs import run_main


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("study")
    make_study(root / "study", points=3, replicates=1, min_mb=0.03, max_mb=0.05, seed=3)
    return root / "study"


def copy_of(study: Path, tmp_path: Path) -> Path:
    shutil.copytree(study, tmp_path / "study")
    return tmp_path / "study"


def ingest(*argv: str):
    outcome = run_main(ingest_mod.main, list(argv), timeout=120)
    assert not outcome.hung and not outcome.traceback, outcome.err
    return outcome


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def one_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_dangling_or_looping_log_link_is_an_unreadable_row(study, tmp_path, kind):
    folder = copy_of(study, tmp_path)
    point = folder / "experiment9_0.5_32_2_1_0.001"  # a point of its own
    point.mkdir()
    link = point / "broken.out"
    if kind == "dangling":
        link.symlink_to(point / "nowhere.out")
    else:
        link.symlink_to(link)
    out = tmp_path / "runs"
    o = ingest(str(folder), "--fields", FIELDS, "--out", str(out))
    assert o.code == 2 and str(link) in one_line(o.err), o.err
    got = {r["log"]: r for r in rows(out / "results.csv")}
    mine = got[os.path.realpath(link)]  # the log column holds the real path (the link's target, or the loop)
    assert mine["status"] == "failed" and "cannot" in mine["reason"] and mine["wall_clock_s"] == ""
    assert sum(r["status"] == "ok" for r in got.values()) == 3  # the real logs beside it are read as before
    o = ingest(str(folder), "--fields", FIELDS, "--out", str(out), "--copy")  # never copied, never a traceback
    assert o.code == 2 and not (out / "logs" / "broken.out").exists()


def test_a_folder_name_that_is_not_utf8_is_refused_naming_it(study, tmp_path):
    folder = copy_of(study, tmp_path)
    point = next(folder.iterdir())
    odd = os.fsencode(point) + b"\xff"
    os.rename(os.fsencode(point), odd)
    out = tmp_path / "runs"
    o = ingest(str(folder), "--fields", FIELDS, "--out", str(out))
    line = one_line(o.err)
    assert o.code == 2 and "not UTF-8" in line and "\\xff" in line and line.isprintable() and not out.exists()


@pytest.mark.parametrize("digits", [20, 200])
def test_a_run_number_beyond_the_store_is_refused_naming_the_log(study, tmp_path, digits):
    folder = copy_of(study, tmp_path)
    log = next(folder.rglob("*.out"))
    (folder / ("r" + "9" * digits)).mkdir()
    shutil.move(log, folder / ("r" + "9" * digits) / log.name)
    out = tmp_path / "runs"
    o = ingest(str(folder), "--fields", r"(?:experiment|r)(?P<run>\d+)(?:_(?P<learning_rate>[^_/]+))?",
               "--skip-unmatched", "--out", str(out))
    line = one_line(o.err)
    assert o.code == 2 and "run" in line and "from 1 to 1,000,000,000" in line and log.name in line
    assert not out.exists()


def test_factors_that_name_no_group_are_refused(study, tmp_path):
    out = tmp_path / "runs"
    for value in ("--", ",", "nodes,,--"):
        o = ingest(str(study), "--fields", FIELDS, "--out", str(out), f"--factors={value}")
        assert o.code == 2 and "--factors" in one_line(o.err) and not out.exists(), (value, o.err)


@pytest.mark.parametrize("name", ["epoch", "run_status", "iterations", "cost", "mean_loss"])
def test_a_group_named_like_a_column_another_stage_writes_is_refused(study, tmp_path, name):
    out = tmp_path / "runs"
    o = ingest(str(study), "--fields", FIELDS.replace("nodes", name), "--out", str(out), "--per-epoch")
    line = one_line(o.err)
    assert o.code == 2 and name in line and "other stages write" in line and not out.exists()


def test_a_vanished_log_is_named_and_copy_says_it_cannot_copy_it(study, tmp_path):
    folder = copy_of(study, tmp_path)
    out = tmp_path / "runs"
    assert ingest(str(folder), "--fields", FIELDS, "--out", str(out)).code == 0
    gone = sorted(folder.rglob("*.out"))[0]
    gone.unlink()
    o = ingest(str(folder), "--fields", FIELDS, "--out", str(out))
    assert o.code == 0 and f"warning: {gone}: the log is gone" in o.err
    assert str(gone) in {r["log"] for r in rows(out / "results.csv")}  # its row is kept, as it was read
    o = ingest(str(folder), "--fields", FIELDS, "--out", str(out), "--copy")
    assert o.code == 2 and f"{gone}: cannot copy it (--copy): the log is gone" in one_line(o.err)
    logs = {r["log"] for r in rows(out / "results.csv")}
    assert str(gone) in logs and sum(x.startswith("logs/") for x in logs) == 2  # the others were copied


def test_a_changed_log_read_again_keeps_its_epoch_rows(study, tmp_path):
    folder = copy_of(study, tmp_path)
    out = tmp_path / "runs"
    assert ingest(str(folder), "--fields", FIELDS, "--out", str(out), "--per-epoch").code == 0
    before = rows(out / "epochs.csv")
    log = sorted(folder.rglob("*.out"))[0]
    with open(log, "ab") as f:
        f.write(b"printed after training\n")
    o = ingest(str(folder), "--fields", FIELDS, "--out", str(out))
    assert "1 read again" in o.out and rows(out / "epochs.csv") == before


def test_a_refused_first_ingest_leaves_no_folder(study, tmp_path):
    folder = copy_of(study, tmp_path)
    src = next(folder.rglob("*.out"))
    shutil.copy(src, src.with_name("twin.out"))  # the same settings and replicate twice: refused inside the lock
    out = tmp_path / "runs"
    o = ingest(str(folder), "--fields", FIELDS, "--out", str(out))
    assert o.code == 2 and "are both run" in one_line(o.err) and not out.exists()
    existing = tmp_path / "kept"
    existing.mkdir()
    (existing / "mine.txt").write_text("x")
    o = ingest(str(folder), "--fields", FIELDS, "--out", str(existing))
    assert o.code == 2 and (existing / "mine.txt").exists()  # a folder that was there is never removed
