"""The design-row -> spark-submit argv mapping (pure; the real path is tested in test_submit_cluster)."""

import os
from dataclasses import replace
from pathlib import Path

from cluster.runtime import discover
from harness.command import JOB_SCRIPT, SubmitOptions, job_args, metrics_path, submit_argv
from harness.job import JobChoice, builtin, load_job
from sparkdl.runspec import RunSpec


def spec(**kw) -> RunSpec:
    base = dict(run=3, replicate=2, nodes=4, executors=4, executor_cores=2, epochs=3, learning_rate=9.011,
                batch_size=256, model="birnn")
    base.update(kw)
    return RunSpec(**base)


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_resources_follow_the_paper_meaning_of_the_factors():
    env = discover()
    argv = submit_argv(spec(), SubmitOptions(master_url="spark://127.0.0.1:7077", executor_memory="700m"), env)
    assert argv[0] == str(env.spark_submit)
    assert option(argv, "--master") == "spark://127.0.0.1:7077"
    assert option(argv, "--executor-cores") == "2"
    assert option(argv, "--total-executor-cores") == "32"  # 4 nodes x 4 executors x 2 cores
    assert option(argv, "--executor-memory") == "700m"
    jars = option(argv, "--jars").split(",")
    assert [Path(j) for j in jars] == list(env.jars)
    assert f"spark.executor.extraClassPath={env.classpath()}" in argv
    assert f"spark.executorEnv.PYTHONPATH={env.site_dir}:{env.python_path[0]}" in argv  # the alias, then jobs.*
    assert argv.index(str(JOB_SCRIPT)) > argv.index("--jars")
    assert "epochs=3" in option(argv, "--name").split()  # logparse reads the planned epochs from the name


def test_job_arguments_carry_the_exact_values():
    args = job_args(spec(), SubmitOptions(master_url="x", seed=10))
    assert option(args, "--learning-rate") == "9.011"  # never rounded, never capped
    assert option(args, "--batch-size") == "256" and option(args, "--epochs") == "3"
    assert option(args, "--model") == "birnn"
    assert option(args, "--seed") == "11"  # replicate 2 -> seed + 1
    assert "--data-dir" not in args and "--train-samples" not in args  # optional groups left out
    assert option(job_args(spec(model="lenet"), SubmitOptions(master_url="x")), "--model") == "lenet"


def test_data_dir_and_subsets():
    args = job_args(spec(replicate=1), SubmitOptions(master_url="x", data_dir=Path("/data/mnist"),
                                                     train_samples=512, test_samples=128))
    assert option(args, "--data-dir") == "/data/mnist" and "--sample" not in args
    assert option(args, "--train-samples") == "512" and option(args, "--test-samples") == "128"


def test_every_argv_element_is_a_plain_string():
    argv = submit_argv(spec(), SubmitOptions(master_url="spark://h:7077"), discover())
    assert all(isinstance(a, str) and a for a in argv)


def test_a_json_job_gets_its_metrics_path_and_spark_columns_become_confs(tmp_path):
    (tmp_path / "app.py").write_text("")
    (tmp_path / "lib.py").write_text("")
    (tmp_path / "job.toml").write_text(
        '[job]\nname = "mine"\napp = "app.py"\npy_files = ["lib.py"]\nresults = "json"\n'
        'args = ["--iters={max_iter}", "{solver}", ["--data", "{data_dir}"], "--run", "{key}"]\n'
        '[spark]\n"spark.sql.shuffle.partitions" = 4\n"spark.eventLog.enabled" = false\n')
    job = load_job(tmp_path / "job.toml")
    s = RunSpec(run=1, replicate=1, nodes=1, executors=1, executor_cores=2, max_iter=7, solver="a b; rm -rf /",
                params={"spark.sql.shuffle.partitions": 16})
    options = SubmitOptions(master_url="spark://h:7077", jobs=JobChoice(job), out=tmp_path / "c")
    argv = submit_argv(s, options, discover())
    app = argv.index(str(tmp_path / "app.py"))
    assert argv[app + 1:] == ["--iters=7", "a b; rm -rf /", "--run", "1-1",  # one element each, no shell
                              "--metrics-out", str(tmp_path / "c" / "runs" / "1-1" / "metrics.json")]
    assert metrics_path(s, options) == tmp_path / "c" / "runs" / "1-1" / "metrics.json"
    assert option(argv, "--py-files") == str(tmp_path / "lib.py")
    confs = [argv[i + 1] for i, a in enumerate(argv) if a == "--conf"]
    assert "spark.sql.shuffle.partitions=16" in confs and "spark.sql.shuffle.partitions=4" not in confs  # row wins
    assert "spark.eventLog.enabled=false" in confs
    assert option(argv, "--name") == "mine spark.sql.shuffle.partitions=16 max_iter=7 solver=a b; rm -rf / run=1-1"


def test_a_jar_job(tmp_path):
    (tmp_path / "x.jar").write_bytes(b"PK")
    (tmp_path / "job.toml").write_text('[job]\nname = "j"\njar = "x.jar"\nmain_class = "org.example.Main"\n'
                                       'args = ["{n}"]\n')
    s = RunSpec(run=1, replicate=1, nodes=1, executors=1, executor_cores=1, n=3)
    argv = submit_argv(s, SubmitOptions(master_url="m", jobs=JobChoice(load_job(tmp_path / "job.toml"))), discover())
    assert argv[-4:] == ["--class", "org.example.Main", str(tmp_path / "x.jar"), "3"]


def test_builtin_jobs_are_plain_descriptions():
    assert builtin("birnn").application == JOB_SCRIPT and builtin("lenet").results == "bigdl"
    assert builtin("mlp").results == "json" and builtin("mlp").application.name == "mlp.py"


def test_fabric_drivers_run_the_master_hosts_copy_of_every_builtin_job():
    from harness.remote_backend import RemoteRunner

    runner = RemoteRunner(None, "/opt/venv/lib/python3.11/site-packages/jobs/train.py")  # type: ignore[arg-type]
    argv = ["spark-submit", str(JOB_SCRIPT), str(JOB_SCRIPT.parent / "mlp.py"), "/home/me/own.py"]
    assert runner.remote_argv(argv) == ["spark-submit", "/opt/venv/lib/python3.11/site-packages/jobs/train.py",
                                        "/opt/venv/lib/python3.11/site-packages/jobs/mlp.py", "/home/me/own.py"]


def test_the_campaigns_data_cache_goes_only_to_jobs_that_name_it(tmp_path):
    options = SubmitOptions(master_url="x", data_cache=tmp_path / "mnist.npz", out=tmp_path)
    assert option(job_args(spec(), options), "--data-cache") == str(tmp_path / "mnist.npz")
    mlp = RunSpec(run=1, replicate=1, nodes=1, executors=1, executor_cores=1, max_iter=2, step_size=0.5, block_size=64)
    assert "--data-cache" not in job_args(mlp, SubmitOptions(master_url="x", data_cache=tmp_path / "m.npz",
                                                             jobs=JobChoice(builtin("mlp")), out=tmp_path))


def test_a_jobs_own_jvm_options_and_paths_join_ours(tmp_path):
    """A job's extraJavaOptions / extraClassPath / extraLibraryPath keep BigDL, the log setup and the tuning."""
    (tmp_path / "app.py").write_text("")
    (tmp_path / "job.toml").write_text(
        '[job]\nname = "mine"\napp = "app.py"\nargs = []\nresults = "json"\n'
        '[spark]\n"spark.driver.extraJavaOptions" = "-Dmine=1 -Xss4m"\n'
        '"spark.executor.extraClassPath" = "/opt/extra.jar"\n"spark.driver.extraLibraryPath" = "/opt/native"\n')
    env = replace(discover(), driver_java_options=("-XX:+UseParallelGC",), library_path=tmp_path / "mkl")
    s = RunSpec(run=1, replicate=1, nodes=1, executors=1, executor_cores=1,
                params={"spark.executor.extraJavaOptions": "-Dcell=2"})
    argv = submit_argv(s, SubmitOptions(master_url="m", jobs=JobChoice(load_job(tmp_path / "job.toml"))), env)
    confs = [argv[i + 1] for i, a in enumerate(argv) if a == "--conf"]
    set_ = {c.split("=", 1)[0]: c.split("=", 1)[1] for c in confs}
    assert len(set_) == len(confs)  # each key once: nothing for spark-submit to drop silently
    logging = f"-Dlog4j2.configurationFile={env.log_config}"
    assert set_["spark.driver.extraJavaOptions"] == f"{logging} -XX:+UseParallelGC -Dmine=1 -Xss4m"
    assert set_["spark.executor.extraJavaOptions"] == f"{logging} -Dcell=2"  # the design column too
    assert set_["spark.executor.extraClassPath"] == f"{env.classpath()}{os.pathsep}/opt/extra.jar"
    assert set_["spark.driver.extraClassPath"] == env.classpath()
    assert set_["spark.driver.extraLibraryPath"] == f"{tmp_path / 'mkl'}{os.pathsep}/opt/native"
