"""The campaign report: sections, embedded images, numbers against independent computations, edge cases, CLI,
and a real headless browser rendering the page."""

from __future__ import annotations

import base64
import html as html_lib
import itertools
import math
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.design import fractional, make_factors, parse_generators
from report import build_report
from report.cli import main
from sparkdl.cli import run_cli as run_command
from report.recover import recover_design
from sparkdl.runspec import SPEC_FIELDS
from sparkdl.campaign import EXECUTION_COLUMNS, OUTCOME_COLUMNS, RunRecord
from harness.store import ResultStore
from models.anova import fit_anova

ROOT = Path(__file__).resolve().parents[1]
TABLE2 = ROOT / "examples" / "marinos2021" / "table2.csv"
FACTORS = ["nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size"]
SECTIONS = ["provenance", "findings", "design", "status", "results", "anova", "checks", "plots", "queueing", "method"]
CHROMIUM = Path("/usr/bin/chromium")


# --- helpers ---------------------------------------------------------------------------------


class Tables(HTMLParser):
    """Every <table id=...>: rows of (text, data-value or None) cells, header rows included."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, float | None]]]] = {}
        self._id: str | None = None
        self._row: list[tuple[str, float | None]] | None = None
        self._cell: list[str] | None = None
        self._value: float | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and a.get("id"):
            self._id = a["id"]
            self.tables[self._id] = []
        elif tag == "tr" and self._id:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
            self._value = float(a["data-value"]) if a.get("data-value") else None

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(("".join(self._cell).strip(), self._value))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._id:
            self.tables[self._id].append(self._row)
            self._row = None
        elif tag == "table":
            self._id = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables_of(html: str) -> dict[str, list[list[tuple[str, float | None]]]]:
    p = Tables()
    p.feed(html)
    return p.tables


def as_frame(rows: list[list[tuple[str, float | None]]]) -> pd.DataFrame:
    """A table as a frame of cells; the first row is the header."""
    head = [t for t, _ in rows[0]]
    return pd.DataFrame([row for row in rows[1:]], columns=head)


def close(shown: str, value: float, digits: int) -> bool:
    """The displayed text is ``value`` rounded to ``digits`` significant digits."""
    return math.isclose(float(shown), value, rel_tol=0.51 * 10 ** (1 - digits), abs_tol=1e-300)


@pytest.fixture(scope="module")
def table2_report():
    return build_report(TABLE2, generated="fixed")


def campaign(tmp: Path, rows: list[dict], meta: dict | None = None, logs: dict[str, str] | None = None) -> Path:
    """A campaign directory written the harness's way: ResultStore rows, results.csv, meta, logs."""
    store = ResultStore(tmp)
    store.set_meta(meta or {"design_path": "design.csv", "design_sha256": "ab" * 32, "seed": 42,
                            "tool_revision": "deadbeef", "python": "3.11", "host": "test", "cluster": {"workers": 2}})
    for row in rows:
        store.record(RunRecord.from_row(row))
    store.close()
    (tmp / "logs").mkdir(exist_ok=True)
    for name, text in (logs or {}).items():
        (tmp / "logs" / name).write_text(text)
    return tmp


def job(run: int, rep: int, nodes: int, executors: int, lr: float, *, status: str = "ok", reason: str = "",
        wall: float | None = None, acc: float | None = None, kind: str | None = None) -> dict:
    return dict(run=run, replicate=rep, model="lenet", nodes=nodes, executors=executors, executor_cores=1, epochs=1,
                learning_rate=lr, batch_size=64, status=status, reason=reason, wall_clock_s=wall, accuracy=acc,
                elapsed_s=(wall or 5.0) + 3, start=f"2024-01-01T00:{run:02d}:{rep:02d}", end="2024-01-01T01:00:00",
                app_id=f"app-{run}-{rep}" if status == "ok" else None, failure_kind=kind,
                log=f"logs/{run}-{rep}.out")


@pytest.fixture
def fake_campaign(tmp_path: Path) -> Path:
    """A 2^3 full factorial x 2 replicates: 14 ok jobs, one job failure, one timeout, and an lr_search.csv."""
    rng = np.random.default_rng(7)
    rows, run = [], 0
    for lr, ex, nodes in itertools.product((0.05, 0.1), (1, 2), (1, 2)):
        run += 1
        for rep in (1, 2):
            if (run, rep) == (3, 2):
                rows.append(job(run, rep, nodes, ex, lr, status="failed", kind="job",
                                reason="BigDL rejected the batch size"))
                continue
            if (run, rep) == (6, 1):
                rows.append(job(run, rep, nodes, ex, lr, status="failed", kind="timeout",
                                reason="no result within 60 s: the run was stopped (raise --timeout)"))
                continue
            wall = 40 / nodes + 6 * ex + rng.normal(0, 1.5)
            acc = min(0.99, 0.80 + 1.2 * lr + rng.normal(0, 0.01))
            rows.append(job(run, rep, nodes, ex, lr, wall=round(wall, 3), acc=round(acc, 4)))
    logs = {"3-2.err": "starting\njava.lang.IllegalArgumentException: batch size 64 is not a multiple of 3\n",
            "6-1.err": "epoch 1 started\n"}
    out = campaign(tmp_path / "runs" / "fake", rows, logs=logs)
    # optimize.lr's files: lr_search.csv (its columns) and lr_search.png
    pd.DataFrame({"order": [1, 2, 3, 4], "learning_rate": [0.002, 0.004, 0.008, 0.016],
                  "step": ["start", "double", "double", "double"], "replications": [2, 2, 2, 2],
                  "mean_cost": [0.05, 0.03, 0.02, 0.025], "min_cost": [0.04, 0.02, 0.01, 0.02],
                  "max_cost": [0.06, 0.04, 0.03, 0.03], "best": [0, 0, 1, 0]}).to_csv(out / "lr_search.csv", index=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    fig.subplots().plot([1, 2, 3])
    fig.savefig(out / "lr_search.png", dpi=50)
    return out


# --- sections, images, references -------------------------------------------------------------


def test_table2_has_every_section_and_table(table2_report) -> None:
    html = table2_report.html
    for sid in SECTIONS:
        assert f'<section id="{sid}">' in html
    tables = tables_of(html)
    for tid in ("provenance", "factors", "points", "anova", "checks", "vif", "queueing", "log-checks", "kruskal"):
        assert tid in tables, tid
    assert "jobs" not in tables  # 320 rows: per-point summary instead of the job list
    assert len(tables["points"]) == 1 + 32
    assert "I = ABCDEF" in html and "resolution: VI" in html and "F=ABCDE" in html


def test_images_are_embedded_and_nothing_is_external(table2_report) -> None:
    html = table2_report.html
    imgs = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" width="(\d+)" height="(\d+)"', html)
    assert len(imgs) == len(table2_report.analysis.figures) == 6
    for data, w, h in imgs:
        png = base64.b64decode(data)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (int(w), int(h))
    refs = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']*)', html, flags=re.I)
    assert refs and not [r for r in refs if not (r.startswith("data:") or r.startswith("#"))]
    assert not re.search(r"https?://", html.replace("http://localhost", ""))
    assert "<script" not in html.lower() and "<link" not in html.lower() and "@import" not in html


# --- numbers against independent computations --------------------------------------------------


def test_anova_table_numbers_equal_models_anova(table2_report) -> None:
    data = pd.read_csv(TABLE2)
    ref = fit_anova(data, "cost", factors=FACTORS)  # the default model, as the report chose
    assert table2_report.analysis.anova.summary.terms == ref.summary.terms
    shown = as_frame(tables_of(table2_report.html)["anova"])
    assert list(shown["term"].map(lambda c: c[0])) == [r.term for r in ref.rows]
    for (_, cells), r in zip(shown.iterrows(), ref.rows):
        for col, value, digits in (("df", r.df, 4), ("sum of squares", r.sum_sq, 4), ("F", r.F, 4),
                                   ("p", r.p, 3), ("% of variation", r.pct_variation, 3)):
            text, raw = cells[col]
            if not math.isfinite(value):
                assert text == "\u2013" and raw is None
                continue
            assert raw == pytest.approx(value, rel=1e-12), (r.term, col)
            if col == "% of variation":  # two decimals
                assert abs(float(text) - value) <= 0.005 + 1e-12, (r.term, text)
            else:
                assert close(text, value, digits), (r.term, col, text)
    summary = table2_report.html
    assert f"R^2 = {ref.summary.r_squared:.4g}" in summary


def test_anova_residual_and_one_term_by_least_squares(table2_report) -> None:
    """Residual SS and learning_rate's Type II SS from numpy least squares, not statsmodels."""
    data = pd.read_csv(TABLE2)
    y = data["cost"].to_numpy(float)
    cols = {f: data[f].to_numpy(float) for f in FACTORS}
    terms = FACTORS + [f"{a}:{b}" for a, b in itertools.combinations(FACTORS, 2)]

    def rss(ts: list[str]) -> float:
        x = np.column_stack([np.ones(len(y))] + [np.prod([cols[p] for p in t.split(":")], axis=0) for t in ts])
        beta, *_ = np.linalg.lstsq(x, y, rcond=None)
        return float(np.sum((y - x @ beta) ** 2))

    full = rss(terms)
    anova = {r[0][0]: r for r in tables_of(table2_report.html)["anova"][1:]}
    assert anova["Residual"][2][1] == pytest.approx(full, rel=1e-9)
    # Type II: learning_rate after every term that does not contain it.
    without = [t for t in terms if "learning_rate" not in t.split(":")]
    assert anova["learning_rate"][2][1] == pytest.approx(rss(without) - rss(without + ["learning_rate"]), rel=1e-9)
    sst = float(np.sum((y - y.mean()) ** 2))
    assert anova["Residual"][6][1] == pytest.approx(100 * full / sst, rel=1e-9)


def test_point_summary_equals_pandas_groupby(table2_report) -> None:
    data = pd.read_csv(TABLE2)
    expect = data.groupby(FACTORS)["cost"].agg(["mean", "std", "size"]).reset_index()
    shown = as_frame(tables_of(table2_report.html)["points"])
    assert len(shown) == len(expect)
    for (_, cells), (_, e) in zip(shown.iterrows(), expect.iterrows()):
        assert [float(cells[f][0]) for f in FACTORS] == [float(e[f]) for f in FACTORS]
        assert cells["n"][1] == e["size"]
        assert cells["cost mean"][1] == pytest.approx(e["mean"], rel=1e-12)
        assert cells["cost sd"][1] == pytest.approx(e["std"], rel=1e-12)


def erlang_c(k: int, a: float) -> float:
    """P(wait) in M/M/k from the textbook sum (offered load a = lambda / mu)."""
    rho = a / k
    top = a**k / math.factorial(k) / (1 - rho)
    return top / (sum(a**n / math.factorial(n) for n in range(k)) + top)


def test_queueing_rows_match_closed_forms(table2_report) -> None:
    cost = pd.read_csv(TABLE2)["cost"].to_numpy(float)
    mu = 1 / cost.mean()
    q = as_frame(tables_of(table2_report.html)["queueing"])
    assert len(q) == 9
    for _, cells in q.iterrows():
        u, k = cells["utilization"][1], int(cells["servers k"][1])
        lam = u * k * mu
        assert cells["arrival rate"][1] == pytest.approx(lam, rel=1e-12)
        pw = erlang_c(k, lam / mu)
        assert cells["P(wait) M/M/k"][1] == pytest.approx(pw, rel=1e-9)
        et = 1 / mu + pw / (k * mu - lam)
        assert cells["E[T] M/M/k"][1] == pytest.approx(et, rel=1e-9)
        if k == 1:
            assert et == pytest.approx(1 / (mu - lam))
            scv = cost.var(ddof=1) / cost.mean() ** 2  # Pollaczek-Khinchine
            assert cells["E[T] M/G/k"][1] == pytest.approx(1 / mu + u / (1 - u) * (1 + scv) / 2 / mu, rel=1e-9)
    assert "Marinos 2021's cost" in html_lib.unescape(table2_report.html)  # the job size is named


def test_findings_follow_the_numbers(table2_report) -> None:
    ref = table2_report.analysis.anova
    top = max((r for r in ref.rows if r.term != "Residual"), key=lambda r: r.pct_variation)
    text = " ".join(table2_report.findings)
    assert top.term == "learning_rate"
    assert f"The largest effect is learning_rate: it explains {top.pct_variation:.2f}%" in text
    assert "normality of residuals (Shapiro-Wilk" in text and "equal variances across design points" in text
    assert "Analysing log(cost) instead" in text
    sig = sum(r.pct_variation for r in ref.rows if r.term != "Residual" and r.p < 0.05)  # balanced: shares add
    assert f"(together {sig:.2f}% of the variation)" in text
    data = pd.read_csv(TABLE2)
    means = data.groupby(FACTORS)["cost"].mean()
    assert f"Lowest mean cost: {means.min():.4g} over 10 job(s)" in text
    best = dict(zip(FACTORS, means.idxmin()))
    assert f"learning_rate = {best['learning_rate']:g}" in text


# --- design recovery --------------------------------------------------------------------------


@pytest.mark.parametrize("k,gens", [(5, "D=AB E=AC"), (6, "E=ABC F=BCD"), (7, "E=ABC F=BCD G=-ACD"), (4, "D=-ABC")])
def test_recovered_relation_equals_the_generated_design(k: int, gens: str) -> None:
    names = [f"f{i}" for i in range(k)]
    fs = make_factors({n: [1, 4] for n in names})
    d = fractional(fs, parse_generators(gens, fs))
    rows = pd.DataFrame(list(d.points) * 2, columns=names)
    got = recover_design(rows, tuple(names))
    assert got.kind == "fractional factorial"
    assert got.resolution == d.resolution
    assert set(map(str, got.defining_relation)) == set(map(str, d.defining_relation))
    assert got.replicated and got.n_points == d.n_runs


def test_irregular_and_full_designs() -> None:
    fs = make_factors({n: [0, 1] for n in "abc"})
    full = pd.DataFrame(list(fractional(make_factors({n: [0, 1] for n in "abcd"}),
                                        parse_generators("D=ABC", make_factors({n: [0, 1] for n in "abcd"}))).points),
                        columns=list("abcd"))
    assert recover_design(full[list("abc")], tuple("abc")).kind == "full factorial"
    assert recover_design(full.iloc[:-1], tuple("abcd")).kind == "irregular two-level"
    three = pd.DataFrame({"a": [1, 2, 3, 1, 2, 3], "b": ["x", "x", "x", "y", "y", "y"]})
    assert recover_design(three, ("a", "b")).title.startswith("3x2 full factorial")
    assert fs.letters == "ABC"


# --- campaigns --------------------------------------------------------------------------------


def test_fake_campaign_report(fake_campaign: Path) -> None:
    out = fake_campaign / "report.html"
    assert main([str(fake_campaign), "--no-plots"]) == 0
    html = out.read_text()
    t = tables_of(html)
    counts = {r[0][0]: r[1][1] for r in t["status-counts"][1:]}
    assert counts == {"ok": 14, "failed": 2, "incomplete": 0, "total": 16}
    reasons = as_frame(t["failure-reasons"])
    assert set(reasons["reason"].map(lambda c: c[0])) == {"BigDL rejected the batch size",
                                                          "no result within 60 s: the run was stopped (raise --timeout)"}
    assert "not a multiple of 3" in html  # the failed run's log tail
    assert "Failures by reason: 1 failed: &#x27;BigDL rejected the batch size&#x27;" in html
    assert "shares do not add up" in html  # two failed jobs leave the design unbalanced
    assert len(t["jobs"]) == 1 + 16
    prov = {r[0][0]: r[1][0] for r in t["provenance"]}
    assert prov["seed"] == "42" and prov["tool revision"] == "deadbeef" and prov["cluster"] == "workers=2"
    assert '<section id="extra-lr_search">' in html
    assert ("Chosen by the tool, and the lowest mean_cost: order = 3, learning_rate = 0.008, step = double, "
            "replications = 2, mean_cost = 0.02") in html
    png = base64.b64encode((fake_campaign / "lr_search.png").read_bytes()).decode()
    assert f'<img src="data:image/png;base64,{png}" width="150" height="100"' in html
    assert len(t["extra-lr_search"]) == 1 + 4
    assert "2^3 full factorial" in html
    # the analysed jobs and their cost are Marinos 2021's T / (A*100)^2 of the ok rows
    raw = pd.read_csv(fake_campaign / "results.csv")
    ok = raw[raw["status"] == "ok"]
    cost = ok["wall_clock_s"] / (ok["accuracy"] * 100) ** 2
    ref = fit_anova(ok.assign(cost=cost), "cost", factors=["nodes", "executors", "learning_rate"])
    shown = {r[0][0]: r[2][1] for r in t["anova"][1:]}
    assert shown == pytest.approx({r.term: r.sum_sq for r in ref.rows}, rel=1e-12)


def test_reading_a_campaign_changes_nothing_in_it(fake_campaign: Path) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in fake_campaign.rglob("*")}
    report = build_report(fake_campaign, plots=False)
    assert {p.name: p.stat().st_mtime_ns for p in fake_campaign.rglob("*")} == before  # no -shm/-wal either
    assert report.campaign.meta["seed"] == 42 and len(report.campaign.attempts) == 0


def test_cost_option_changes_the_response(fake_campaign: Path, tmp_path: Path) -> None:
    out = tmp_path / "time.html"
    assert main([str(fake_campaign), "--out", str(out), "--cost", "time", "--no-plots"]) == 0
    t = tables_of(out.read_text())
    raw = pd.read_csv(fake_campaign / "results.csv")
    ok = raw[raw["status"] == "ok"]
    ref = fit_anova(ok.assign(cost=ok["wall_clock_s"]), "cost", factors=["nodes", "executors", "learning_rate"])
    assert {r[0][0]: r[2][1] for r in t["anova"][1:]} == pytest.approx({r.term: r.sum_sq for r in ref.rows}, rel=1e-12)
    assert dict((r[0][0], r[1][0]) for r in t["provenance"])["cost"] == "T"


def test_demo_sized_campaign_renders_without_residual_df(tmp_path: Path) -> None:
    # a demo-sized design whose learning rate is aliased with executors (resolution II)
    design = pd.DataFrame({"run": [1, 2, 3, 4], "nodes": [1, 2, 1, 2], "executors": [1, 1, 2, 2],
                           "executor_cores": [1, 2, 2, 1], "learning_rate": [0.05, 0.05, 0.1, 0.1]})
    rows = [job(int(r.run), 1, int(r.nodes), int(r.executors), float(r.learning_rate), wall=20.0 + 3 * i,
                acc=0.9 - 0.01 * i) for i, r in enumerate(design.itertuples())]
    for row, cores in zip(rows, design["executor_cores"]):
        row["executor_cores"] = int(cores)
    d = campaign(tmp_path / "demo", rows)
    report = build_report(d)
    html = report.html
    # Lenth's Pareto, half-normal and main effects; no residual plots for a saturated fit
    assert sorted(report.analysis.figures) == ["half_normal", "interactions", "main_effects", "pareto"]
    # four effect plots and the time-against-accuracy front
    assert html.count("<img ") == 5 and "residuals are zero by construction" in html
    assert "1 of 4 ok runs are on the front" in html  # run 1 is both the fastest and the most accurate
    assert "The largest effect is executors (confounded with learning_rate" in html
    assert "resolution: II" in html and "B = D" in html
    assert "learning_rate is confounded with executors" in html
    assert "leave no residual degrees of freedom: 4 jobs and 3 model terms" in html
    assert "F and p cannot be computed" in html
    t = tables_of(html)
    assert [r[0][0] for r in t["anova"][1:]] == ["nodes", "executors", "executor_cores", "Residual"]
    assert t["anova"][-1][2][0] == "0"  # a saturated fit's residual SS is shown as 0, not 1e-33


def test_failed_only_campaign_renders(tmp_path: Path) -> None:
    rows = [job(1, 1, 1, 1, 0.05, status="failed", kind="infrastructure", reason="executor lost"),
            job(2, 1, 2, 1, 0.05, status="failed", kind="infrastructure", reason="executor lost"),
            job(3, 1, 1, 2, 0.1, status="incomplete", reason="the log ends before the final validation")]
    d = campaign(tmp_path / "bad", rows, logs={"1-1.err": "ERROR executor lost\n"})
    assert main([str(d)]) == 0
    html = (d / "report.html").read_text()
    for sid in SECTIONS:
        assert f'<section id="{sid}">' in html
    assert "None of the 3 jobs produced a usable result" in html
    assert "no usable jobs" in html and "<img" not in html
    counts = {r[0][0]: r[1][1] for r in tables_of(html)["status-counts"][1:]}
    assert counts == {"ok": 0, "failed": 2, "incomplete": 1, "total": 3}
    assert "ERROR executor lost" in html


@pytest.mark.parametrize("seed", range(4))
def test_random_campaigns_always_render(tmp_path: Path, seed: int) -> None:
    """Random subsets of points, replicates, statuses, accuracies of 0 and a text factor: never a crash."""
    rng = np.random.default_rng(seed)
    points = list(itertools.product((0.05, 0.1), (1, 2), (1, 2)))
    rows = []
    for run, (lr, ex, nodes) in enumerate(points[: int(rng.integers(1, 9))], start=1):
        for rep in range(1, int(rng.integers(1, 3)) + 1):
            status = str(rng.choice(["ok", "ok", "ok", "failed", "incomplete"]))
            acc = 0.0 if rng.random() < 0.1 else 0.8 + 0.15 * rng.random()
            row = (job(run, rep, nodes, ex, lr, wall=10 + 5 * rng.random(), acc=acc) if status == "ok" else
                   job(run, rep, nodes, ex, lr, status=status, reason="boom", kind="job"))
            row["model"] = "birnn" if rng.random() < 0.3 else "lenet"
            rows.append(row)
    html = build_report(campaign(tmp_path / f"c{seed}", rows), plots=False).html
    for sid in SECTIONS:
        assert f'<section id="{sid}">' in html
    counts = {r[0][0]: r[1][1] for r in tables_of(html)["status-counts"][1:]}
    assert counts.pop("total") == sum(counts.values()) == len(rows)


def test_empty_campaign_and_csv_without_cost(tmp_path: Path) -> None:
    d = campaign(tmp_path / "empty", [])
    (d / "results.csv").write_text(",".join([*SPEC_FIELDS, *OUTCOME_COLUMNS, *EXECUTION_COLUMNS]) + "\n")
    assert "The results table has no rows yet" in build_report(d, plots=False).html
    csv = tmp_path / "plain.csv"
    pd.DataFrame({"a": [1, 2, 1, 2], "b": [1, 1, 2, 2], "y": [1.0, 2.0, 3.0, 5.0]}).to_csv(csv, index=False)
    html = build_report(csv, plots=False).html
    assert "no cost could be computed" in html
    html = build_report(csv, response="y", plots=False).html
    assert tables_of(html)["anova"][1][0][0] == "a"


# --- CLI --------------------------------------------------------------------------------------


def cli(argv: list[str]) -> int:
    return run_command(main, argv)


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli([str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no results at") and err.count("\n") == 1
    (tmp_path / "emptydir").mkdir()
    assert cli([str(tmp_path / "emptydir")]) == 2
    assert "results.csv" in capsys.readouterr().err
    assert cli([str(TABLE2), "--cost", "time", "--out", str(tmp_path / "x.html")]) == 2
    assert "wall_clock_s" in capsys.readouterr().err


def test_cli_on_plain_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert cli([str(TABLE2), "--out", str(out), "--no-plots", "--response", "cost"]) == 0
    assert "320 of 320 jobs analysed; 0 plot(s)" in capsys.readouterr().out
    assert out.read_text().startswith("<!DOCTYPE html>") and "<img" not in out.read_text()


# --- a real browser -----------------------------------------------------------------------------


@pytest.mark.slow
def test_headless_chromium_renders_tables_and_plots(table2_report, tmp_path: Path) -> None:
    assert CHROMIUM.exists(), (
        "Debian's chromium is needed for this test: apt-get install -y chromium (it provides /usr/bin/chromium)")
    from PIL import Image

    page = table2_report.write(tmp_path / "report.html")
    shot = tmp_path / "shot.png"
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1280,4000",
           page.resolve().as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert shot.is_file(), f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr[-500:]}"
    im = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert im.shape == (4000, 1280, 3)
    ink = (im < 235).any(axis=2)
    assert ink.mean() > 0.04, f"only {ink.mean():.1%} of the page is not white"
    bands = [float(ink[i:i + 500].mean()) for i in range(0, 4000, 500)]
    assert min(bands) > 0.01, f"a blank stretch of page: ink share per 500 px band {bands}"
    # Tables: the zebra stripes (#f6f8fa) and header rows (#eef1f5) of rendered tables.
    zebra = (np.abs(im - [246, 248, 250]).sum(axis=2) <= 3).sum()
    assert zebra > 100_000, "no table stripes: the tables did not render"
    # Plots: the Pareto chart's significant bars (matplotlib tab:red) and the half-normal points (tab:blue).
    red = (np.abs(im - [214, 39, 40]).sum(axis=2) <= 30).sum()
    blue = (np.abs(im - [31, 119, 180]).sum(axis=2) <= 30).sum()
    assert red > 20_000, f"{red} tab:red pixels: the Pareto chart did not render"
    assert blue > 300, f"{blue} tab:blue pixels: the half-normal plot did not render"


# --- absurd values, no ok rows, no status ----------------------------------------------


def test_a_wall_clock_of_1e308_neither_crashes_nor_enters_the_analysis(tmp_path: Path) -> None:
    rows = [job(run, rep, nodes, ex, 0.05, wall=10.0 + run + rep, acc=0.9)
            for run, (nodes, ex) in enumerate(itertools.product((1, 2), (1, 2)), start=1) for rep in (1, 2)]
    rows[0]["wall_clock_s"] = 1e308
    report = build_report(campaign(tmp_path / "c", rows), plots=False)
    assert report.campaign.table.dropped == {"wall_clock_s not a time in [0, 31536000] s": 1}
    assert len(report.campaign.frame) == 7 and report.analysis.anova is not None
    assert report.queue is not None and report.queue.sizes.count == 7
    # without accuracy no cost exists, the rows are analysed unfiltered: the job sizes still average
    plain = tmp_path / "plain.csv"
    pd.DataFrame({"nodes": [1, 2, 1], "wall_clock_s": [1e308, 1e308, 5e307]}).to_csv(plain, index=False)
    report = build_report(plain, plots=False, factors=["nodes"])
    assert report.queue is not None and report.queue.sizes.mean == pytest.approx(1e308 * (2.5 / 3), rel=1e-12)


def test_the_surface_section_reads_only_plausible_times_and_a_huge_surface_has_its_ridge(tmp_path: Path) -> None:
    """Found by the fuzz test: a wall clock of -1e308 reached the response-surface section (it read the ok rows
    without rule 2), and its ridge's root search then solved a singular system at mu = edge + 1e-13 (lost
    beside eigenvalues near 1e300): an internal error, where the report should be written."""
    from models.rsm.canonical import ridge_point
    from models.rsm.fit import fit_surface

    table = tmp_path / "t.csv"
    table.write_text("b,wall_clock_s,accuracy\n" + "0.1,0.0,0.0\n" * 5 + "0.2,0.0,0.0\n0.4,-1e+308,0.0\n")
    assert cli([str(table), "--no-plots", "--out", str(tmp_path / "t.html")]) == 0
    frame = pd.DataFrame({"x": [-1.0, -1.0, 0.0, 0.0, 1.0, 1.0], "y": [1e300, 1.2e300, 3e300, 2.9e300, 1e300, 0.8e300]})
    fit = fit_surface(frame, "y", ["x"])
    x = ridge_point(fit, 0.5, "max")  # on the sphere of radius 0.5 in coded units: -0.5 or 0.5
    assert abs(float(x[0])) == pytest.approx(0.5)


def test_no_ok_rows_and_no_status_are_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [job(r, 1, 1 + r % 2, 1, 0.05, status="failed", reason="boom", kind="job") for r in range(1, 4)]
    rows.append(job(4, 1, 1, 1, 0.05, status="incomplete", reason="cut"))
    report = build_report(campaign(tmp_path / "bad", rows), plots=False)
    assert report.analysis.unavailable == "no usable jobs: 0 of 4 rows are ok (3 failed, 1 incomplete): nothing to analyse"
    plain = tmp_path / "plain.csv"
    pd.DataFrame({"a": [1, 2, 1, 2], "b": [1, 1, 2, 2], "y": [1.0, 2.0, 3.0, 5.5]}).to_csv(plain, index=False)
    assert cli([str(plain), "--response", "y", "--no-plots", "--out", str(tmp_path / "p.html")]) == 0
    err = capsys.readouterr().err
    assert "note: no 'status' column: all 4 rows assumed ok" in err
    assert "note: factors taken from the columns (no manifest.json, no --factors): a, b" in err


def test_the_manifest_declares_what_the_report_analyses(tmp_path: Path) -> None:
    from sparkdl.campaign import CampaignDir, Manifest

    rng = np.random.default_rng(11)
    rows = [job(run, rep, nodes, ex, lr, wall=10 + 3 * nodes + rng.normal(0, 0.5), acc=0.9)
            for run, (lr, ex, nodes) in enumerate(itertools.product((0.05, 0.1), (1, 2), (1, 2)), start=1)
            for rep in (1, 2)]
    d = campaign(tmp_path / "m", rows)
    CampaignDir(d).write_manifest(Manifest(factors=("nodes", "learning_rate")))
    report = build_report(d, plots=False)
    assert report.campaign.candidates == ("nodes", "learning_rate")
    assert report.campaign.table.factors_from == "manifest.json"
    assert report.analysis.anova.factors == ("nodes", "learning_rate")
    assert "executors" not in report.analysis.anova.summary.terms
    # without the manifest the harness's design columns are the factors: executors is one
    (d / "manifest.json").unlink()
    assert "executors" in build_report(d, plots=False).analysis.anova.factors


def test_the_anova_section_states_the_noise_ceiling_of_the_replicated_design_points():
    """The ceiling is the R^2 of the cell means (checked by hand here); a saturated model reaches all of it."""
    import numpy as np
    import pandas as pd

    from report.build import _ceiling, _ceiling_line

    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"a": [1, 1, 1, 2, 2, 2, 3, 3], "b": ["x", "x", "y", "y", "x", "x", "y", "y"]})
    frame["t"] = frame["a"] * 2.0 + (frame["b"] == "y") + rng.normal(0, 0.3, len(frame))
    cells = frame.groupby(["a", "b"])["t"].transform("mean")
    expected = 1 - ((frame["t"] - cells) ** 2).sum() / ((frame["t"] - frame["t"].mean()) ** 2).sum()
    ceiling = _ceiling(frame, "t", ["a", "b"])
    assert ceiling is not None and abs(ceiling.r2 - expected) < 1e-12
    line = _ceiling_line(ceiling, expected)
    assert f"= {expected:.4g}" in line and "100.00 % of it" in line and "3 replicated design point(s)" in line
    unreplicated = _ceiling(frame.drop_duplicates(["a", "b"]), "t", ["a", "b"])
    assert _ceiling_line(unreplicated, 0.5).startswith("noise ceiling: not known")
