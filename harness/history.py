"""Browse a campaign's runs in Spark's own History Server.

:func:`serve` starts ``spark-class org.apache.spark.deploy.history.HistoryServer`` from the installed pyspark
(Java from :mod:`cluster.sparkenv`) over the event logs of every run (``runs/<key>/app-*``, one
folder per run, linked into one temporary folder because the History Server does not descend
into sub-folders), waits until it lists them, reports its URL and waits (``sparkdl history``,
:mod:`harness.cli.history`: until Ctrl-C or SIGTERM); then the server's process group is ended and the temporary
folder removed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from cluster.local import end_process_group, free_port
from cluster.sparkenv import SparkEnv
from cluster.runtime import discover
from harness.errors import HarnessError

HISTORY_CLASS = "org.apache.spark.deploy.history.HistoryServer"
INPROGRESS = ".inprogress"


class HistoryError(HarnessError):
    """The campaign has no event logs, or the History Server did not come up."""

    exit_code = 4


def event_logs(campaign: Path) -> list[Path]:
    """Every run's event log in the campaign, finished or in progress: a file ``runs/*/app-*`` (Spark 3), or
    the folder of a rolling log ``runs/*/eventlog_v2_app-*`` (Spark 4's default)."""
    runs = Path(campaign) / "runs"
    return sorted(p for p in runs.glob("*/*") if (p.is_file() and p.name.startswith(("app-", "local-")))
                  or (p.is_dir() and p.name.startswith("eventlog_v2_")))


def link_logs(logs: Sequence[Path], dest: Path) -> list[Path]:
    """Symlink each log into ``dest`` under its own name (Spark reads the codec from the name)."""
    linked = []
    for log in logs:
        target = dest / log.name
        if target.exists() or target.is_symlink():
            continue  # the same application id twice: keep the first
        target.symlink_to(log.resolve())
        linked.append(target)
    return linked


def _get_json(url: str, timeout: float = 5.0) -> object:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - loopback URL we built
        return json.loads(r.read())


@dataclass
class HistoryServer:
    """One History Server process over a folder of event logs; :meth:`stop` ends its process group."""

    log_dir: Path
    port: int
    env: SparkEnv
    log_file: Path
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{self.env.local_ip}:{self.port}"

    def argv(self, properties: Path) -> list[str]:
        return [str(self.env.spark_class), HISTORY_CLASS, "--properties-file", str(properties)]

    def start(self, expected_apps: int, timeout: float = 90.0) -> list[str]:
        """Start it and wait until it lists ``expected_apps`` applications; returns their ids."""
        properties = self.log_file.with_name("history.properties")
        properties.write_text("\n".join([
            f"spark.history.fs.logDirectory={self.log_dir.resolve().as_uri()}",
            f"spark.history.ui.port={self.port}",
            "spark.history.fs.update.interval=2s",
            "spark.history.fs.cleaner.enabled=false",
        ]) + "\n")
        with open(self.log_file, "wb") as log:
            self.proc = subprocess.Popen(self.argv(properties), env=self.env.environ(), stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        ids: list[str] = []
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HistoryError(f"the History Server exited with code {self.proc.returncode}: "
                                   f"see {self.log_file}")
            try:
                apps = _get_json(f"{self.url}/api/v1/applications")
                ids = [a["id"] for a in apps]  # type: ignore[union-attr]
                if len(ids) >= expected_apps:
                    return ids
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.5)
        self.stop()
        raise HistoryError(f"the History Server listed {len(ids)} of {expected_apps} runs after {timeout:.0f} s: "
                           f"see {self.log_file}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            end_process_group(self.proc, grace=10.0)
        self.proc = None


def history_env() -> SparkEnv:
    """The newest prepared Spark: Spark 4's History Server reads Spark 3's logs, not the other way round."""
    from cluster import runtime as runtimes

    name = "spark4" if runtimes.is_prepared(runtimes.resolve("spark4")) else "bigdl"
    return discover(runtime=name)


def serve(campaign: Path, port: int | None, timeout: float, say: Callable[[str], None],
          wait: Callable[[], None]) -> None:
    """Start the server over ``campaign``, report its URL, ``wait()`` (until interrupted), stop it."""
    logs = event_logs(campaign)
    if not logs:
        raise HistoryError(f"{campaign}: no event logs under runs/*/ : run the campaign with event logs "
                           "(harness.submit writes them by default)") if campaign.is_dir() else \
            HistoryError(f"{campaign}: no such campaign folder")
    tmp = Path(tempfile.mkdtemp(prefix="sparkdl-history-"))
    server = None
    try:
        logs_dir = tmp / "logs"
        logs_dir.mkdir()
        linked = link_logs(logs, logs_dir)
        server = HistoryServer(logs_dir, port or free_port(), history_env(), tmp / "history-server.log")
        ids = server.start(len(linked), timeout)
        say(f"History Server: {server.url}  ({len(ids)} run(s); Ctrl-C stops it)")
        wait()
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    import sys

    from harness.cli.history import main
    from sparkdl.cli import run_cli

    sys.exit(run_cli(main))
