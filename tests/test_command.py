"""The design-row -> spark-submit argv mapping (pure; the real path is tested in test_submit_cluster)."""

from pathlib import Path

from cluster.sparkenv import discover
from harness.command import JOB_SCRIPT, SubmitOptions, job_args, submit_argv
from harness.runspec import RunSpec


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
    assert argv.index(str(JOB_SCRIPT)) > argv.index("--jars")


def test_job_arguments_carry_the_exact_values():
    args = job_args(spec(), SubmitOptions(master_url="x", seed=10))
    assert option(args, "--learning-rate") == "9.011"  # never rounded, never capped
    assert option(args, "--batch-size") == "256" and option(args, "--epochs") == "3"
    assert option(args, "--model") == "birnn"
    assert option(args, "--seed") == "11"  # replicate 2 -> seed + 1
    assert "--sample" in args and "--data-dir" not in args


def test_data_dir_and_subsets():
    args = job_args(spec(replicate=1), SubmitOptions(master_url="x", data_dir=Path("/data/mnist"),
                                                     train_samples=512, test_samples=128))
    assert option(args, "--data-dir") == "/data/mnist" and "--sample" not in args
    assert option(args, "--train-samples") == "512" and option(args, "--test-samples") == "128"


def test_every_argv_element_is_a_plain_string():
    argv = submit_argv(spec(), SubmitOptions(master_url="spark://h:7077"), discover())
    assert all(isinstance(a, str) and a for a in argv)
