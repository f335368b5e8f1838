"""The commands of the ``sparkdl`` console script: one name, one module with ``main(argv)``, one line of help.

Each command is the same ``main`` its ``python -m MODULE`` form runs. The modules are named here as
text and imported only when their command runs (:mod:`sparkdl.__main__`): the shared base imports no
stage, and ``sparkdl --help`` starts without loading pandas or Spark.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    module: str  # has main(argv) -> int
    summary: str


#: In pipeline order: design, run, read logs, analyse, optimize, report.
COMMANDS: tuple[Command, ...] = (
    Command("design", "harness.design.__main__", "write a design (full, fractional, CCD, Box-Behnken) as a CSV"),
    Command("plan", "models.power.cli", "replicates needed, power and detectable effect per factor of a design"),
    Command("submit", "harness.submit", "run a design's jobs on a local or remote Spark cluster (a campaign)"),
    Command("ingest", "harness.cli.ingest", "make a campaign folder from existing logs (factors from their names)"),
    Command("runtime", "harness.cli.runtime", "list, prepare, check or lock the runtimes jobs run in"),
    Command("doctor", "harness.cli.doctor", "check Java, ports and the runtime before a campaign"),
    Command("history", "harness.cli.history", "serve a campaign's Spark event logs in Spark's history server"),
    Command("mlflow", "harness.mlflow", "export a campaign's runs to an MLflow tracking server"),
    Command("logparse", "logparse.cli", "status and figures of jobs' logs (a table, json or csv)"),
    Command("anova", "models.anova.cli", "ANOVA of a results table: effects, assumptions, plots"),
    Command("rsm", "models.rsm.cli", "fit and read a response surface (second-order model)"),
    Command("desirability", "models.desirability.cli", "the best compromise of several responses"),
    Command("predict", "models.predict.cli", "predict a response on new settings (Ernest, trees, linear)"),
    Command("queueing", "models.queueing.cli", "queueing models of a cluster's jobs (M/M/1 ... G/G/k)"),
    Command("search", "optimize.search.__main__", "multi-objective search on real jobs (Optuna)"),
    Command("pareto", "optimize.cli.pareto", "the Pareto front of a campaign's configurations (or runs)"),
    Command("lr", "optimize.cli.lr", "learning-rate search on real jobs (Marinos 2021's method)"),
    Command("epochs", "optimize.cli.epochs", "the most epochs a time budget allows, from a campaign's model"),
    Command("batch", "optimize.cli.batch", "batch sizes that meet a latency SLO, from a campaign's model"),
    Command("concurrent", "optimize.cli.concurrent", "jobs run side by side on shared CPUs (Albo Martínez 2021's experiment)"),
    Command("report", "report.cli", "a campaign's self-contained HTML report"),
    Command("cluster", "cluster.cli", "start, scale, inspect or stop a local Spark standalone cluster"),
)


def find(name: str) -> Command | None:
    return next((c for c in COMMANDS if c.name == name), None)
