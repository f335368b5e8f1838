"""Per-epoch rows of a ``results = "output"`` job: a figures regex with a group named ``epoch``.

Pure logic on real text. ``fixtures/anyprogram/als-iterations.out`` / ``.err`` are the stdout and stderr of Apache
Spark's own example ``examples/src/main/python/als.py``, unchanged, as the pyspark 4.3.0 wheel ships it
(spark4 runtime, ``spark-submit --master local[1] als.py 40 100 5 4 2``, 2026-11-28): it prints ``Iteration i:``
then ``RMSE: x`` for i = 0, 1, 2, 3, each over three lines. The runs are read as the harness reads them (the
campaign loop with a scripted runner, the pruning watch, the MLflow export's histories); the figures they should
give are read here from the same text with plain string operations.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cluster.runtime import discover
from harness.campaign import Campaign, CampaignSettings
from harness.command import SubmitOptions
from harness.figurespec import FigureSpec, figure_spec
from harness.job import JobChoice, load_job
from harness.mlflow_export import epoch_histories
from harness.outputfigures import EpochTail, read_output_figures
from harness.runepochs import run_epochs
from harness.runner import Completed
from sparkdl.runspec import RunSpec
from sparkdl.campaign import CampaignDir
from harness.store import ResultStore
from optimize.search.pruning import CurveTail, EpochFigure, MedianRule, TargetRule, TrialWatch
from optimize.search.study import curve_of_run, output_figures

FIXTURES = Path(__file__).parent / "fixtures" / "anyprogram"
ALS = FIXTURES / "als-iterations.out"
ALS_REGEX = r"Iteration (?P<epoch>\d+):\s+RMSE: (?P<rmse>[0-9.]+)"


def printed_rmse() -> list[float]:
    """The RMSE of each iteration of the fixture, read with plain string operations."""
    return [float(line.split(": ")[1]) for line in ALS.read_text().splitlines() if line.startswith("RMSE: ")]


def spec_of(patterns: list[str], derived: dict[str, str] | None = None) -> FigureSpec:
    return figure_spec(patterns, derived, "test")


def logs(folder: Path, out: str, err: str = "", key: str = "1-1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.out").write_text(out)
    (folder / f"{key}.err").write_text(err)
    return folder / f"{key}.out"


# ---------------------------------------------------------------- the rows


def test_each_match_of_an_epoch_regex_is_a_row_counted_from_one_with_its_derived_figures():
    rmse = printed_rmse()
    assert len(rmse) == 4 and "Iteration 0:" in ALS.read_text()  # the program counts from 0
    m = read_output_figures(ALS, spec_of([ALS_REGEX, r"Running ALS with M=(?P<m>\d+)"], {"accuracy": "1 - rmse"}),
                            reserved={"status"})
    assert m.problem is None
    assert [dict(r) for r in m.epochs] == [{"epoch": i + 1, "rmse": r, "accuracy": pytest.approx(1 - r)}
                                           for i, r in enumerate(rmse)]
    # the run's columns stay the last match's values; epochs_completed is the number of epochs, an int
    assert m.figures["rmse"] == rmse[-1] and m.accuracy == pytest.approx(1 - rmse[-1])
    assert "epoch" not in m.figures and m.figures["epochs_completed"] == 4  # the counter printed 3: not a column
    assert m.epochs_completed == 4 and isinstance(m.figures["epochs_completed"], int)
    assert m.figures["m"] == 40.0 and "m" not in m.epochs[0]  # another regex's figure is a column, not a row's


def test_a_job_s_own_epochs_completed_is_kept_and_must_be_whole(tmp_path):
    spec = spec_of([r"epoch (?P<epoch>\d+) loss (?P<loss>[0-9.]+)", r"epochs run: (?P<epochs_completed>[0-9.]+)"])
    text = "epoch 1 loss 0.5\nepoch 2 loss 0.25\nepochs run: 7\n"
    own = read_output_figures(logs(tmp_path / "a", text), spec)
    assert own.problem is None and own.epochs_completed == 7 and len(own.epochs) == 2
    half = read_output_figures(logs(tmp_path / "b", text.replace("7", "7.5")), spec)
    assert half.problem == "the job's figure epochs_completed is 7.5: it must be a whole number >= 0"


@pytest.mark.parametrize("text, problem", [
    ("epoch 1 loss 0.5\nepoch 1.5 loss 0.4\n", "captured epoch '1.5': an epoch is a whole number >= 0"),
    ("epoch 2 loss 0.5\nepoch 1 loss 0.4\n", "the job printed epoch 1 after epoch 2"),
    ("epoch -1 loss 0.5\n", "captured epoch '-1': an epoch is a whole number >= 0"),
    ("epoch 1 loss 0.5 acc 1.2\n", "the job's figure accuracy at epoch 1 is 1.2: it must be a fraction in [0, 1]"),
])
def test_an_unusable_epoch_fails_the_run_with_the_reason_never_an_exception(tmp_path, text, problem):
    spec = spec_of([r"epoch (?P<epoch>-?[0-9.]+) loss (?P<loss>[0-9.]+)(?: acc (?P<accuracy>[0-9.]+))?"])
    m = read_output_figures(logs(tmp_path, text), spec)
    assert problem in m.problem and not m.figures and not m.epochs


#: pytorch/examples mnist/main.py's per-epoch lines, in its print formats (the numbers are ours): the loss at
#: each log interval, then the test set's after the epoch.
TORCH_MNIST = ("Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.301585\n"
               "Train Epoch: 1 [57600/60000 (96%)]\tLoss: 0.210457\n\n"
               "Test set: Average loss: 0.0512, Accuracy: 9838/10000 (98%)\n\n"
               "Train Epoch: 2 [0/60000 (0%)]\tLoss: 0.120318\n"
               "Train Epoch: 2 [57600/60000 (96%)]\tLoss: 0.062101\n\n"
               "Test set: Average loss: 0.0369, Accuracy: 9879/10000 (99%)\n\n")
TRAIN_LINE = r"Train Epoch: (?P<epoch>\d+) \[[^\]]*\]\tLoss: (?P<train_loss>[0-9.]+)"
TEST_AFTER = (r"Train Epoch: (?P<epoch>\d+) \[[^\]]*\]\tLoss: [0-9.]+\s+Test set: Average loss: (?P<test_loss>[0-9.]+), "
              r"Accuracy: (?P<correct>\d+)/(?P<total>\d+)")


def test_a_repeated_epoch_keeps_its_last_row_and_two_regexes_fill_one_row_per_epoch(tmp_path):
    m = read_output_figures(logs(tmp_path / "a", TORCH_MNIST), spec_of([TRAIN_LINE]))
    assert [dict(r) for r in m.epochs] == [{"epoch": 1, "train_loss": 0.210457}, {"epoch": 2, "train_loss": 0.062101}]
    both = read_output_figures(logs(tmp_path / "b", TORCH_MNIST), spec_of([TRAIN_LINE, TEST_AFTER],
                                                                          {"accuracy": "correct / total"}))
    assert both.problem is None
    assert [dict(r) for r in both.epochs] == [
        {"epoch": 1, "train_loss": 0.210457, "test_loss": 0.0512, "correct": 9838, "total": 10000, "accuracy": 0.9838},
        {"epoch": 2, "train_loss": 0.062101, "test_loss": 0.0369, "correct": 9879, "total": 10000, "accuracy": 0.9879}]
    assert both.accuracy == 0.9879 and both.epochs_completed == 2


def test_rows_come_from_the_err_when_the_out_has_none_and_keep_the_harness_s_names_apart(tmp_path):
    # a script that logs its epochs with Python's logging (stderr), beside Spark's own log lines
    err = ("26/11/28 02:44:48 INFO SparkContext: Running Spark version 4.3.0\n"
           "INFO:train:epoch 1 val accuracy 0.62 time 4.5 host_cpu 0.9 lr 0.1\n"
           "INFO:train:epoch 2 val accuracy 0.81 time 8.25 host_cpu 0.8 lr 0.1\n")
    spec = spec_of([r"epoch (?P<epoch>\d+) val accuracy (?P<accuracy>[0-9.]+) time (?P<wall_clock_s>[0-9.]+) "
                    r"host_cpu (?P<host_cpu>[0-9.]+) lr (?P<learning_rate>[0-9.]+)"])
    m = read_output_figures(logs(tmp_path, "no epochs in the stdout\n", err), spec, reserved={"status"},
                            design={"learning_rate": 0.1})
    assert m.problem is None and (m.accuracy, m.wall_clock_s) == (0.81, 8.25)
    # host_cpu is a name of the harness's: job_host_cpu in the rows as in the columns; the design's echo is left out
    assert [dict(r) for r in m.epochs] == [
        {"epoch": 1, "accuracy": 0.62, "wall_clock_s": 4.5, "job_host_cpu": 0.9},
        {"epoch": 2, "accuracy": 0.81, "wall_clock_s": 8.25, "job_host_cpu": 0.8}]
    assert m.figures["job_host_cpu"] == 0.8


# ---------------------------------------------------------------- while the job runs: the pruning watch


def grow(path: Path, data: bytes, step: int):
    """Write ``data`` to ``path`` ``step`` bytes at a time (lines cut anywhere), yielding after each write."""
    path.write_bytes(b"")
    for at in range(0, len(data), step):
        with open(path, "ab") as f:
            f.write(data[at:at + step])
        yield at + step


@pytest.mark.parametrize("step", [1, 7, 64, 10_000])
def test_a_running_job_s_rows_are_read_as_its_finished_output_is(tmp_path, step):
    spec = spec_of([ALS_REGEX], {"accuracy": "1 - rmse"})
    final = read_output_figures(ALS, spec).epochs
    out = logs(tmp_path, "", (FIXTURES / "als-iterations.err").read_text())
    tail = EpochTail(out, spec)
    seen = []
    for _ in grow(out, ALS.read_bytes(), step):
        rows = tail.read()
        assert rows == list(final[:len(rows)])  # never a row the finished output does not have
        seen.append(len(rows))
    assert seen[-1] == 4 and seen == sorted(seen)


def test_an_anchored_regex_is_not_fooled_by_where_a_read_stopped(tmp_path):
    spec = spec_of([r"^epoch (?P<epoch>\d+) accuracy (?P<accuracy>[0-9.]+)"])
    text = b"epoch 1 accuracy 0.5\nval epoch 7 accuracy 0.1\nepoch 2 accuracy 0.75\n"
    out = logs(tmp_path, "")
    tail = EpochTail(out, spec)
    for _ in grow(out, text, 5):
        tail.read()
    assert [r["epoch"] for r in tail.read()] == [1, 2] == [r["epoch"] for r in read_output_figures(out, spec).epochs]


def test_the_target_rule_prunes_an_output_job_that_prints_no_time(tmp_path):
    # a learning rate too high: the network predicts one class, 1135 of MNIST's 10000 test digits are ones
    text = ("Train Epoch: 1 [57600/60000 (96%)]\tLoss: 2.301019\n\n"
            "Test set: Average loss: 2.3011, Accuracy: 1135/10000 (11%)\n\n").encode()
    figures = spec_of([TEST_AFTER], {"accuracy": "correct / total"})
    watch = TrialWatch([TargetRule(0.9)], planned=10, history=[], figures=figures)
    out = logs(tmp_path, "")
    reasons = [watch(out) for _ in grow(out, text, 16)]
    assert reasons[-1] is not None and all(r is None for r in reasons[:-1])  # at the epoch's last line, not before
    assert reasons[-1].startswith("epoch 1 of 10: accuracy 0.1135")
    assert watch.curve == [EpochFigure(1, None, 0.1135)]
    # without the job's figures the same output holds no epoch: nothing to prune on
    assert TrialWatch([TargetRule(0.9)], planned=10, history=[])(out) is None


def test_the_median_rule_compares_printed_times_and_never_an_epoch_without_one(tmp_path):
    history = [[EpochFigure(1, 3.0, 0.9)], [EpochFigure(1, 4.0, 0.85)], [EpochFigure(1, 2.5, 0.95)]]
    timed = spec_of([r"epoch (?P<epoch>\d+) time (?P<wall_clock_s>[0-9.]+) s accuracy (?P<accuracy>[0-9.]+)"])
    out = logs(tmp_path / "a", "epoch 1 time 5.0 s accuracy 0.80\n")
    reason = TrialWatch([MedianRule(3)], planned=3, history=history, figures=timed)(out)
    assert reason.startswith("epoch 1: 3 of 3 earlier runs were faster and more accurate")
    untimed = spec_of([r"epoch (?P<epoch>\d+) time [0-9.]+ s accuracy (?P<accuracy>[0-9.]+)"])
    assert TrialWatch([MedianRule(3)], planned=3, history=history, figures=untimed)(out) is None
    tail = CurveTail(out, untimed)
    tail.read()
    assert tail.curve == [EpochFigure(1, None, 0.8)]


# ---------------------------------------------------------------- a campaign: epochs.csv, the search, MLflow


@dataclass
class PlayedRunner:
    """Plays real outputs as if the job had printed them: the als fixture, then its output with no iteration (what
    als.py prints with 0 iterations: its loop never runs)."""

    outputs: list[str]
    calls: list[list[str]] = field(default_factory=list)

    def run(self, argv, env, out: Path, err: Path, timeout, on_start=None, cwd=None) -> Completed:
        out.write_text(self.outputs[len(self.calls)])
        err.write_text((FIXTURES / "als-iterations.err").read_text())
        self.calls.append(argv)
        return Completed(tuple(argv), 0, 30.0)


class Backend:
    master_url = "spark://127.0.0.1:7077"

    def open(self, specs, runtime="bigdl"): ...
    def check(self, spec): return []
    def prepare(self, spec): ...
    def describe(self): return {"backend": "test"}
    def find_app(self, name): return None
    def close(self): ...


def test_a_campaign_writes_each_ok_run_s_epochs_and_the_export_and_the_search_read_them(tmp_path):
    (tmp_path / "als.py").write_text("# Apache Spark's examples/src/main/python/als.py (played by the runner)\n")
    (tmp_path / "als.toml").write_text(
        '[job]\nname = "als"\napp = "als.py"\nruntime = "spark4"\nresults = "output"\n'
        'args = ["40", "100", "5", "{iterations}", "2"]\n'
        f"figures = ['{ALS_REGEX}']\n[derived]\naccuracy = \"1 - rmse\"\n")
    job = load_job(tmp_path / "als.toml")
    text = ALS.read_text()
    folder = CampaignDir(tmp_path / "c")
    runner = PlayedRunner([text, text[:text.index("Iteration 0:")]])
    settings = CampaignSettings(options=SubmitOptions(master_url="x", jobs=JobChoice(job)), retries=0)
    c = Campaign(folder, settings, Backend(), discover(), runner, ResultStore(folder))
    specs = [RunSpec(run=i, replicate=1, nodes=1, executors=1, executor_cores=1, params=(("iterations", n),))
             for i, n in ((1, 4), (2, 0))]
    ok, missing = c.run(specs).records
    rmse = printed_rmse()
    assert ok.status == "ok" and ok.outcome.epochs_completed == 4 and ok.metrics["rmse"] == rmse[-1]
    assert missing.status == "failed" and repr(ALS_REGEX) in missing.reason  # no iteration printed: the regex names it
    run_rows = list(csv.DictReader(open(folder.path / "runs" / "1-1" / "epochs.csv")))
    assert [(int(r["epoch"]), float(r["rmse"]), float(r["accuracy"])) for r in run_rows] == [
        (i + 1, r, pytest.approx(1 - r)) for i, r in enumerate(rmse)]
    assert not (folder.path / "runs" / "2-1" / "epochs.csv").exists()
    campaign_rows = list(csv.DictReader(open(folder.epochs_csv)))
    assert [(r["run"], r["replicate"], r["iterations"], r["epoch"]) for r in campaign_rows] == [
        ("1", "1", "4", str(e)) for e in (1, 2, 3, 4)]
    results = list(csv.DictReader(open(folder.results_csv)))
    assert [r["epochs_completed"] for r in results] == ["4", ""]
    # the MLflow export's histories and the one reader of a run's epochs: the rows, step = epoch
    points = run_epochs(folder, ok)
    assert sorted({p.name for p in points}) == ["accuracy", "rmse"]
    assert [(p.epoch, p.value) for p in points if p.name == "rmse"] == [(i + 1, r) for i, r in enumerate(rmse)]
    histories = epoch_histories(folder.path / ok.execution.log, {}, 1_000, 2_000, folder.path / "runs/1-1/epochs.csv")
    assert [(m.step, m.value, m.timestamp_ms) for m in histories["rmse"]] == [(i + 1, r, 2_000)
                                                                               for i, r in enumerate(rmse)]
    # the search hands the job's figures to its pruning watch, and reads a finished run's curve with them
    assert output_figures(c, specs[0]) == job.figures
    assert curve_of_run(folder.path, ok, job.figures) == [EpochFigure(i + 1, None, pytest.approx(1 - r))
                                                         for i, r in enumerate(rmse)]
    assert curve_of_run(folder.path, ok) == []  # without them the output holds no epoch line
    c.close()


def test_an_epochs_csv_wall_clock_is_the_history_s_time(tmp_path):
    table = tmp_path / "epochs.csv"
    table.write_text("epoch,accuracy,wall_clock_s\n1,0.5,2.5\n2,0.75,4\n")
    got = epoch_histories(tmp_path / "none.out", {"loss_history": (3.0, 2.0)}, 1_000_000, 1_010_000, table)
    assert [(m.step, m.value, m.timestamp_ms) for m in got["accuracy"]] == [(1, 0.5, 1_002_500), (2, 0.75, 1_004_000)]
    assert [(m.step, m.value) for m in got["epoch_wall_clock_s"]] == [(1, 2.5), (2, 4.0)]
    assert [(m.step, m.value, m.timestamp_ms) for m in got["loss_history"]] == [(1, 3.0, 1_010_000), (2, 2.0, 1_010_000)]
