"""Record the class list of cluster/cds.py's archive from real runs (a maintenance script, not a bench).

    .venv/bin/python bench/cds_classlist.py [--out cluster/runtimes/classes.lst]

Starts a local standalone cluster on free ports, runs the empty application and one LeNet and one
bi-RNN job (1 executor each, the sample's first 256 digits) with ``-XX:DumpLoadedClassList`` on the
driver and the executor, and writes the sorted union of what they loaded from the JDK, Spark and
BigDL. Run it again when Spark, BigDL or the JDK changes; the archive's name changes with the list.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path[:1] = [str(Path(__file__).resolve().parent.parent)]

from cluster.cds import CLASS_LIST  # noqa: E402
from cluster.local import LocalCluster, free_port  # noqa: E402
from cluster.runtime import discover  # noqa: E402
from harness.command import JOB_SCRIPT, SubmitOptions, submit_argv  # noqa: E402
from sparkdl.runspec import RunSpec  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402

EMPTY_APP = Path(__file__).with_name("empty_app.py")


def record(out: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="cds-") as tmp:
        work = Path(tmp)
        cluster = LocalCluster(work / "cluster", port=free_port(), webui_port=free_port(), env=discover())
        lists: list[Path] = []
        try:
            cluster.start(workers=1, cores=2, memory="1400m")
            options = SubmitOptions(master_url=cluster.master_url, train_samples=256, test_samples=128)
            for i, (model, app) in enumerate([("lenet", EMPTY_APP), ("lenet", JOB_SCRIPT), ("birnn", JOB_SCRIPT)]):
                driver, executor = work / f"driver-{i}.lst", work / f"executor-{i}.lst"
                env = replace(discover(), ship_jars=False, driver_java_options=(f"-XX:DumpLoadedClassList={driver}",),
                              executor_java_options=(f"-XX:DumpLoadedClassList={executor}",))
                spec = RunSpec(1, 1, 1, 1, 2, params={"model": model, "epochs": 1, "learning_rate": 0.1,
                                                      "batch_size": 64})
                argv = submit_argv(spec, options, env)
                if app != JOB_SCRIPT:
                    argv = [*argv[:argv.index(str(JOB_SCRIPT))], str(app)]
                print(f"recording {app.name} {model if app == JOB_SCRIPT else ''}", flush=True)
                done = subprocess.run(argv, env=env.environ(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                if done.returncode != 0:
                    print(done.stderr.decode(errors="replace")[-2000:], file=sys.stderr)
                    raise SystemExit(f"error: {app.name} exited {done.returncode}")
                lists += [p for p in (driver, executor) if p.is_file()]
        finally:
            cluster.stop()
        names = sorted({line.strip() for p in lists for line in p.read_text().splitlines()
                        if line.strip() and not line.startswith("#")})
    out.write_text("\n".join(names) + "\n")
    print(f"{out}: {len(names)} classes from {len(lists)} JVMs")
    return 0


if __name__ == "__main__":
    p = CommandParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=CLASS_LIST)
    sys.exit(record(p.parse_args().out))
