"""harness.history without Java: which logs it serves and its errors (the real server: test_sparkmetrics.py)."""

from __future__ import annotations

import pytest

from harness.cli.history import main
from harness.history import HistoryError, event_logs, link_logs


def test_finds_every_runs_event_log_and_links_them_by_name(tmp_path):
    for key, name in (("1-1", "app-20261125020000-0000.lz4"), ("2-1", "app-20261125020100-0001.lz4.inprogress")):
        (tmp_path / "runs" / key).mkdir(parents=True)
        (tmp_path / "runs" / key / name).write_bytes(b"x")
    (tmp_path / "runs" / "1-1" / "spark_stages.csv").write_text("")
    logs = event_logs(tmp_path)
    assert [p.name for p in logs] == ["app-20261125020000-0000.lz4", "app-20261125020100-0001.lz4.inprogress"]
    dest = tmp_path / "served"
    dest.mkdir()
    linked = link_logs(logs + logs[:1], dest)  # the same application twice is linked once
    assert [p.name for p in linked] == [p.name for p in logs]
    assert all(p.is_symlink() and p.resolve() == q.resolve() for p, q in zip(linked, logs))


def test_no_logs_is_a_one_line_error(tmp_path, capsys):
    with pytest.raises(HistoryError, match="no event logs under runs"):
        main([str(tmp_path)])
    with pytest.raises(HistoryError, match="no such campaign folder"):
        main([str(tmp_path / "missing")])
    assert HistoryError.exit_code == 4
