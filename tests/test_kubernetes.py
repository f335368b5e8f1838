"""The Kubernetes dry run: every run's spark-submit argv, the executor pod templates, and their schema.

Nothing here reaches a cluster (none can run on this kind of machine): the argv is read back as spark-submit would,
and each template is checked against Kubernetes' own OpenAPI schema (kubernetes-validate, the test extra).
"""

from __future__ import annotations

import copy
import shlex
from pathlib import Path

import pytest
import yaml

from harness import kubernetes as k8s
from harness.submit import main as submit_main
from sparkdl import cli

MASTER = "k8s://https://10.0.0.1:6443"
HEADER = "nodes,executors,executor_cores,epochs,learning_rate,batch_size"
#: 2 nodes x 1 executor, 1 node x 2 executors, 2 nodes x 2 executors (and 2 x 1 again: one template per shape)
ROWS = ("2,1,2,1,0.05,64", "1,2,1,1,0.05,64", "2,2,1,1,0.05,64", "2,1,2,1,0.1,64")


def dry_run(tmp_path: Path, *extra: str, rows: tuple[str, ...] = ROWS, header: str = HEADER) -> tuple[int, Path]:
    design = tmp_path / "design.csv"
    design.write_text("\n".join([header, *rows]) + "\n")
    out = tmp_path / "campaign"
    return cli.run_cli(submit_main, [str(design), "--job", "lenet", "--out", str(out), *extra]), out


def runs(text: str) -> list[list[str]]:
    """Every printed argv, split as a shell would (the dry run prints shlex.join of each argv list)."""
    return [shlex.split(line) for line in text.splitlines() if line and not line.startswith("#")]


def confs(argv: list[str]) -> dict[str, str]:
    return dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "--conf")


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


@pytest.fixture
def made(tmp_path, capsys):
    code, out = dry_run(tmp_path, "--master", MASTER, "--dry-run", "--namespace", "spark")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out, out


def test_every_run_gets_an_argv_with_the_kubernetes_confs_of_its_row(made):
    text, _ = made
    argvs = runs(text)
    assert len(argvs) == 4
    for argv, row in zip(argvs, ROWS):
        nodes, executors, cores = (int(v) for v in row.split(",")[:3])
        c = confs(argv)
        assert argv[0].endswith("bin/spark-submit")
        assert option(argv, "--master") == MASTER and option(argv, "--deploy-mode") == "client"
        assert option(argv, "--executor-cores") == str(cores) and option(argv, "--executor-memory") == "700m"
        assert "--total-executor-cores" not in argv  # standalone's, not Kubernetes'
        assert c["spark.executor.instances"] == str(nodes * executors)
        assert c["spark.kubernetes.executor.request.cores"] == c["spark.kubernetes.executor.limit.cores"] == str(cores)
        assert c["spark.kubernetes.namespace"] == "spark"
        assert c["spark.kubernetes.container.image"] == "apache/spark-py:v3.1.3"  # lenet runs on the bigdl runtime
        assert c["spark.executor.memoryOverhead"] == "384m" and c["spark.dynamicAllocation.enabled"] == "false"
        template = Path(c["spark.kubernetes.executor.podTemplateFile"])
        assert template.is_absolute() and template.is_file()
        assert template.name == f"executor-n{nodes}-e{executors}-c{cores}-m700.yaml"
        # the executors run in the image: no path of this machine is handed to them, and they run its Python
        assert c["spark.pyspark.python"] == "python3"
        assert not {"spark.executor.extraClassPath", "spark.executor.extraJavaOptions",
                    "spark.executorEnv.PYTHONPATH"} & c.keys()
        assert c["spark.pyspark.driver.python"].endswith("/bin/python")  # the driver runs here, in the runtime
    assert "derived from the runtime's Spark version; not pulled or checked" in text


def test_one_template_per_shape_with_the_requests_and_the_placement_of_its_nodes(made):
    text, out = made
    folder = out / k8s.TEMPLATE_DIR
    assert sorted(p.name for p in folder.iterdir()) == [
        "executor-n1-e2-c1-m700.yaml", "executor-n2-e1-c2-m700.yaml", "executor-n2-e2-c1-m700.yaml"]
    assert text.count("# pod template ") == 3
    two_by_one = yaml.safe_load((folder / "executor-n2-e1-c2-m700.yaml").read_text())
    container = two_by_one["spec"]["containers"][0]
    assert container["name"] == k8s.CONTAINER
    assert container["resources"]["requests"] == container["resources"]["limits"] == {"cpu": "2", "memory": "1084Mi"}
    # nodes=2, one executor each: no two executors of the application on one node
    (term,) = two_by_one["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == {"labelSelector": {"matchLabels": {"spark-role": "executor"}},
                    "matchLabelKeys": ["spark-app-selector"], "topologyKey": "kubernetes.io/hostname"}
    one_by_two = yaml.safe_load((folder / "executor-n1-e2-c1-m700.yaml").read_text())
    assert list(one_by_two["spec"]["affinity"]) == ["podAffinity"]  # both executors on one node
    two_by_two = yaml.safe_load((folder / "executor-n2-e2-c1-m700.yaml").read_text())
    (spread,) = two_by_two["spec"]["topologySpreadConstraints"]
    assert spread["maxSkew"] == 1 and spread["minDomains"] == 2 and spread["whenUnsatisfiable"] == "DoNotSchedule"
    (terms,) = two_by_two["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert terms == {"matchExpressions": [{"key": "sparkdl.io/pool-2", "operator": "Exists"}]}


def test_the_written_templates_validate_against_the_kubernetes_schema(made):
    text, out = made
    assert f"validated against Kubernetes {k8s.KUBERNETES_VERSION}'s OpenAPI schema" in text
    for path in (out / k8s.TEMPLATE_DIR).iterdir():
        assert k8s.validate_template(yaml.safe_load(path.read_text())) == k8s.KUBERNETES_VERSION


@pytest.mark.parametrize("nodes,executors", [(1, 1), (1, 3), (3, 1), (2, 2), (4, 3)])
def test_every_placement_validates(nodes, executors):
    shape = k8s.ExecutorShape(nodes, executors, 2, 1024, k8s.memory_overhead_mb(1024, python_app=True))
    assert k8s.validate_template(k8s.pod_template(shape)) == k8s.KUBERNETES_VERSION


def _misspelled(t: dict) -> None:
    t["spec"]["affinty"] = t["spec"].pop("affinity")


def _skew_as_text(t: dict) -> None:
    t["spec"]["topologySpreadConstraints"][0]["maxSkew"] = "one"


def _no_containers(t: dict) -> None:
    del t["spec"]["containers"]


def _list_for_a_selector(t: dict) -> None:
    t["spec"]["topologySpreadConstraints"][0]["labelSelector"] = ["spark-role=executor"]


@pytest.mark.parametrize("break_it", [_misspelled, _skew_as_text, _no_containers, _list_for_a_selector])
def test_a_broken_template_is_rejected_by_the_validator(break_it):
    """The validation is not a no-op: each of these departures from the schema is refused, naming where."""
    template = copy.deepcopy(k8s.pod_template(k8s.ExecutorShape(2, 2, 1, 700, 384)))
    break_it(template)
    with pytest.raises(k8s.TemplateInvalid, match=r"fails the Kubernetes 1\.37 schema at spec"):
        k8s.validate_template(template)


def test_an_image_given_is_used_and_not_called_derived(tmp_path, capsys):
    code, _ = dry_run(tmp_path, "--master", MASTER, "--dry-run", "--image", "registry.example.com/ml/bigdl:2.4")
    text = capsys.readouterr().out
    assert code == 0
    assert {confs(a)["spark.kubernetes.container.image"] for a in runs(text)} == {"registry.example.com/ml/bigdl:2.4"}
    assert "derived" not in text


def test_the_derived_image_follows_the_spark_version():
    assert k8s.derived_image("3.1.3") == "apache/spark-py:v3.1.3"
    assert k8s.derived_image("4.3.0") == "apache/spark:4.3.0-python3"


@pytest.mark.parametrize("master,url", [("k8s://h:6443", "k8s://https://h:6443"),
                                        ("k8s://http://127.0.0.1:8001", "k8s://http://127.0.0.1:8001")])
def test_a_master_without_a_scheme_is_https_as_in_spark(master, url):
    assert k8s.master_url(master) == url


BAD = {
    "no-url": (["--master", "k8s://", "--dry-run"], "no API server URL"),
    "no-port": (["--master", "k8s://host", "--dry-run"], "with its port"),
    "not-http": (["--master", "k8s://ftp://host:21", "--dry-run"], "with its port"),
    "a-real-run": (["--master", MASTER], "add --dry-run"),
    "image-alone": (["--image", "x/y:1", "--dry-run"], "--image needs --master k8s://"),
    "bad-namespace": (["--master", MASTER, "--dry-run", "--namespace", "Not_A_Label"], "--namespace"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, name):
    extra, words = BAD[name]
    code, out = dry_run(tmp_path, *extra)
    captured = capsys.readouterr()
    assert code == 2 and not out.exists()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert captured.err.startswith("error: ") and words in captured.err


def test_a_design_column_setting_an_owned_conf_is_refused_before_any_template_is_written(tmp_path, capsys):
    code, out = dry_run(tmp_path, "--master", MASTER, "--dry-run", header=HEADER + ",spark.kubernetes.namespace",
                        rows=("1,1,1,1,0.05,64,spark", "2,1,1,1,0.05,64,other"))
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert len(err.strip().splitlines()) == 1 and "spark.kubernetes.namespace" in err and "drop that column" in err


@pytest.mark.parametrize("master", ["yarn-cluster", "yarn-client", "YARN:8032"])
def test_a_yarn_master_other_than_yarn_is_refused_in_one_line_before_anything_is_written(tmp_path, capsys, master):
    """Spark's old spellings (yarn-cluster, yarn-client) and a host-like YARN name are not a standalone master's host
    name: refused, naming the one spelling (the cluster is HADOOP_CONF_DIR's)."""
    with pytest.raises(SystemExit) as exit_:
        dry_run(tmp_path, "--master", master)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and not (tmp_path / "campaign").exists()
    assert err.strip().splitlines()[-1].startswith("sparkdl submit: error: argument --master:")
    assert "spelled yarn" in err and "HADOOP_CONF_DIR" in err
