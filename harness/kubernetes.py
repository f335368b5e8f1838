"""A campaign on Kubernetes, made concrete but not run: each run's spark-submit argv and its executors' pod template.

``sparkdl submit DESIGN --master k8s://https://HOST:PORT --dry-run`` prints, for every run, the argv that would
submit it in client mode (the driver runs here, as on standalone; its output would be the run's .out), and writes
one executor pod template per distinct shape into ``OUT/pod-templates/``. Nothing is submitted: no Kubernetes
cluster can run where this tool is tested (docs/real-hosts.md#kubernetes says what was verified and what was not).

How a design row maps onto Kubernetes:

* ``executors x nodes`` executor pods (``spark.executor.instances``, dynamic allocation off), each asking for
  ``executor_cores`` CPUs as request and limit (``spark.kubernetes.executor.request.cores`` / ``limit.cores``) and
  ``--executor-memory`` plus an overhead set explicitly (``spark.executor.memoryOverhead``), so the pod's memory is
  the same in every Spark version: :func:`memory_overhead_mb`.
* ``nodes``: the executors spread over exactly that many nodes (:func:`placement`): with one executor per node a
  required pod anti-affinity on ``kubernetes.io/hostname``; with all executors on one node a required pod
  affinity; otherwise a topology spread (``maxSkew`` 1) over the nodes labelled ``sparkdl.io/pool-N``, which the
  user gives exactly N nodes. Each term selects this application's executors only, through Spark's
  ``spark-app-selector`` label (``matchLabelKeys``), so one template serves every run of a shape.
* the image: ``--image``, else a name derived from the runtime's Spark version (:func:`derived_image`), never
  pulled or checked here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from cluster.sparkenv import MERGED, SparkEnv
from harness.command import SubmitOptions, app_args, app_name, job_args, job_for, runtime_args
from harness.errors import HarnessError
from harness.job import job_confs
from sparkdl.options import memory_mb
from sparkdl.runspec import RunSpec

#: The Kubernetes version whose OpenAPI schema the templates are validated against (kubernetes-validate's latest).
KUBERNETES_VERSION = "1.37"
HOSTNAME = "kubernetes.io/hostname"
#: The labels Spark puts on every executor pod: its role, and the application's id (the same on all its pods).
ROLE_LABEL, APP_LABEL = "spark-role", "spark-app-selector"
#: The executor container's name (Spark's own default, kept by a template that names it).
CONTAINER = "spark-kubernetes-executor"
#: The label a user gives to exactly N nodes, for the shapes of N nodes with several executors each.
POOL_LABEL = "sparkdl.io/pool-{nodes}"
#: Where the pod templates go, inside the campaign folder.
TEMPLATE_DIR = "pod-templates"
#: The Python an executor runs: the image's (the runtime's venv is on this machine only).
IMAGE_PYTHON = "python3"
#: Spark settings a Kubernetes run sets itself: a design column or a job's [spark] table may not.
OWNED_CONFS = ("spark.kubernetes.container.image", "spark.kubernetes.executor.container.image",
               "spark.kubernetes.namespace", "spark.kubernetes.executor.podTemplateFile",
               "spark.kubernetes.executor.podTemplateContainerName", "spark.kubernetes.executor.request.cores",
               "spark.kubernetes.executor.limit.cores", "spark.executor.memoryOverhead",
               "spark.dynamicAllocation.enabled", "spark.executor.instances")
#: The runtime's settings that name this machine's paths, meaningless in an executor pod: dropped (a job's own
#: value of one is kept), and the executors' Python is the image's.
LOCAL_EXECUTOR_CONFS = ("spark.executor.extraClassPath", "spark.executor.extraJavaOptions",
                        "spark.executor.extraLibraryPath", "spark.executorEnv.PYTHONPATH")
#: A namespace is a DNS label (RFC 1123).
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", re.ASCII)
#: A container image reference: registry/name[:tag][@digest], no blanks.
IMAGE = re.compile(r"[a-z0-9][a-z0-9._/:@-]{0,254}", re.ASCII | re.IGNORECASE)


class KubernetesError(HarnessError):
    """A Kubernetes dry run cannot be made from these options or this design (the message names the fix)."""


class TemplateInvalid(HarnessError):
    """A pod template this module made fails the Kubernetes schema: a bug, not the user's input."""

    exit_code = 1


# ---------------------------------------------------------------- options


def is_kubernetes(master: str | None) -> bool:
    """True for a ``k8s:`` master (Spark's prefix for Kubernetes)."""
    return master is not None and master.strip().lower().startswith("k8s:")


def master_url(master: str) -> str:
    """``k8s://HOST:PORT`` or ``k8s://https://HOST:PORT`` checked as Spark reads it (a port is required).

    Spark takes ``https`` when the URL has no scheme. KubernetesError naming the fix otherwise.
    """
    text = master.strip()
    fix = "give the API server's URL with its port, e.g. --master k8s://https://HOST:6443 (kubectl cluster-info)"
    if not text.lower().startswith("k8s://") or not text[6:]:
        raise KubernetesError(f"--master {master[:60]!r} has no API server URL: {fix}")
    rest = text[6:]
    url = urlsplit(rest if "://" in rest else f"https://{rest}")
    try:
        port = url.port
    except ValueError:
        port = None
    if url.scheme not in ("http", "https") or not url.hostname or port is None or url.path not in ("", "/"):
        raise KubernetesError(f"--master {master[:60]!r} is not an API server URL: {fix}")
    return f"k8s://{url.scheme}://{url.netloc}"


def check_namespace(name: str) -> str:
    if not DNS_LABEL.fullmatch(name):
        raise KubernetesError(f"--namespace {name[:70]!r} is not a Kubernetes namespace: give a DNS label "
                              "(lower-case letters, digits and '-', at most 63), e.g. spark")
    return name


def check_image(name: str) -> str:
    if not IMAGE.fullmatch(name):
        raise KubernetesError(f"--image {name[:70]!r} is not an image reference: give e.g. "
                              "registry.example.com/team/spark-bigdl:2.4")
    return name


def derived_image(spark_version: str) -> str:
    """The Apache Spark project's Python image for a Spark version: a name derived by rule, never pulled here.

    Spark 3.4 and later publish ``apache/spark:<version>-python3``; earlier releases ``apache/spark-py:v<version>``.
    """
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", spark_version)
    if not m:
        raise KubernetesError(f"runtime Spark version {spark_version!r} is not X.Y.Z: give --image")
    if (int(m.group(1)), int(m.group(2))) >= (3, 4):
        return f"apache/spark:{spark_version}-python3"
    return f"apache/spark-py:v{spark_version}"


@dataclass(frozen=True)
class KubernetesTarget:
    """Where the runs would go: the API server, the namespace, the image (None: from each run's runtime)."""

    master_url: str
    namespace: str = "default"
    image: str | None = None
    template_dir: Path = Path(TEMPLATE_DIR)


# ---------------------------------------------------------------- pod templates


@dataclass(frozen=True)
class ExecutorShape:
    """What a run's executor pods ask for: the design's cluster factors and the executor memory."""

    nodes: int
    executors: int  # per node
    cores: int
    memory_mb: int
    overhead_mb: int

    @property
    def name(self) -> str:
        return f"n{self.nodes}-e{self.executors}-c{self.cores}-m{self.memory_mb}"

    @property
    def pod_memory_mb(self) -> int:
        return self.memory_mb + self.overhead_mb


def memory_overhead_mb(memory: int, python_app: bool) -> int:
    """The executor's memory overhead, set explicitly: max(384 MiB, 0.4 x memory) for a Python application (Spark's
    default for one in cluster mode: room for its Python workers), 0.1 x for a JVM one. Spark's own default depends
    on its version and the deploy mode; an explicit value asks for the same pod under every version."""
    return max(384, math.ceil((0.4 if python_app else 0.1) * memory))


def _same_app_executors() -> dict[str, object]:
    """A pod affinity term over one node that selects the incoming pod's own application's executors."""
    return {"labelSelector": {"matchLabels": {ROLE_LABEL: "executor"}}, "matchLabelKeys": [APP_LABEL],
            "topologyKey": HOSTNAME}


def placement(nodes: int, executors: int) -> dict[str, object]:
    """The pod spec fields that put ``nodes x executors`` executors on exactly ``nodes`` nodes.

    * one executor per node: a required anti-affinity, one executor of the application per node (no node labels);
    * one node: a required affinity, every executor beside the first (Kubernetes lets the first pod of a term that
      matches itself be placed anywhere);
    * otherwise: a required node affinity to the nodes labelled ``sparkdl.io/pool-N`` and a topology spread of
      ``maxSkew`` 1 over them (``minDomains`` N: a pool of fewer nodes leaves pods pending instead of doubling up).
      With exactly N nodes in the pool each runs ``executors``; the pool's size is the user's to keep.
    """
    if executors == 1:
        return {"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_same_app_executors()]}}}
    if nodes == 1:
        return {"affinity": {"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_same_app_executors()]}}}
    pool = POOL_LABEL.format(nodes=nodes)
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": pool, "operator": "Exists"}]}]}}},
        "topologySpreadConstraints": [{
            "maxSkew": 1, "minDomains": nodes, "topologyKey": HOSTNAME, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {ROLE_LABEL: "executor"}}, "matchLabelKeys": [APP_LABEL],
            "nodeAffinityPolicy": "Honor"}],
    }


def pod_template(shape: ExecutorShape) -> dict[str, object]:
    """The executor pod template of a shape: its container's requests and limits, and its placement.

    Spark sets the container's cpu and memory from its settings (the argv's); the template states the same values,
    so it reads (and validates) on its own.
    """
    resources = {"cpu": str(shape.cores), "memory": f"{shape.pod_memory_mb}Mi"}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"labels": {"sparkdl.io/shape": shape.name}},
        "spec": {
            "containers": [{"name": CONTAINER, "resources": {"requests": dict(resources), "limits": dict(resources)}}],
            **placement(shape.nodes, shape.executors),
        },
    }


def template_yaml(template: Mapping[str, object]) -> str:
    import yaml  # only a Kubernetes dry run needs it

    return yaml.safe_dump(dict(template), sort_keys=False, default_flow_style=False)


def validate_template(template: Mapping[str, object], version: str = KUBERNETES_VERSION) -> str:
    """Check a template against Kubernetes ``version``'s OpenAPI schema (strict: no unknown field); the version used.

    ImportError when the schema package (kubernetes-validate, the test extra) is not installed.
    """
    import kubernetes_validate

    try:
        return str(kubernetes_validate.validate(dict(template), version, strict=True))
    except kubernetes_validate.ValidationError as e:
        where = ".".join(str(p) for p in e.absolute_path) or "(top)"
        raise TemplateInvalid(f"pod template fails the Kubernetes {version} schema at {where}: {e.message}") from None


# ---------------------------------------------------------------- argv


def _runtime_args(env: SparkEnv, own: Mapping[str, str]) -> list[str]:
    """The runtime's spark-submit options for a driver here and executors in pods: settings naming this machine's
    paths go (a job's own value stays), and the executors run the image's Python."""
    return runtime_args(env, dict(own), LOCAL_EXECUTOR_CONFS, IMAGE_PYTHON)


def _owned_conf(spec: RunSpec, own: Mapping[str, str]) -> None:
    for key in own:
        if key in OWNED_CONFS:
            raise KubernetesError(f"run {spec.key}: {key} is set by the Kubernetes dry run itself (from the design's "
                                  "cluster factors, --image and --namespace): drop that column or [spark] setting")


def shape_of(spec: RunSpec, options: SubmitOptions) -> ExecutorShape:
    memory = memory_mb(options.executor_memory)
    python_app = str(job_for(spec, options).application).endswith(".py")
    return ExecutorShape(spec.nodes, spec.executors, spec.executor_cores, memory, memory_overhead_mb(memory, python_app))


def kubernetes_argv(spec: RunSpec, options: SubmitOptions, env: SparkEnv, target: KubernetesTarget, image: str,
                    template: Path) -> list[str]:
    """The spark-submit argv of one run on Kubernetes, client mode (never a shell string)."""
    job = job_for(spec, options)
    own = dict(job_confs(job, spec))
    _owned_conf(spec, own)
    shape = shape_of(spec, options)
    confs = {
        "spark.executor.instances": str(spec.nodes * spec.executors),
        "spark.dynamicAllocation.enabled": "false",
        "spark.executor.memoryOverhead": f"{shape.overhead_mb}m",
        "spark.kubernetes.namespace": target.namespace,
        "spark.kubernetes.container.image": image,
        "spark.kubernetes.executor.request.cores": str(spec.executor_cores),
        "spark.kubernetes.executor.limit.cores": str(spec.executor_cores),
        "spark.kubernetes.executor.podTemplateFile": str(template),
        "spark.kubernetes.executor.podTemplateContainerName": CONTAINER,
        # the first task waits for every executor pod, up to 120 s (then Spark starts with those it has)
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    }
    app = app_args(job)
    return [
        str(env.spark_submit),
        "--master", target.master_url,
        "--deploy-mode", "client",
        "--name", app_name(spec, job),
        "--executor-cores", str(spec.executor_cores),
        "--executor-memory", options.executor_memory,
        "--driver-memory", options.driver_memory,
        *(a for k, v in confs.items() for a in ("--conf", f"{k}={v}")),
        *_runtime_args(env, own),
        *(a for k, v in own.items() if k not in MERGED for a in ("--conf", f"{k}={v}")),
        *app,
        str(job.application),
        *job_args(spec, options),
    ]


# ---------------------------------------------------------------- the plan


@dataclass(frozen=True)
class KubernetesPlan:
    """Every run's argv and every shape's template (file name -> template), made before anything is written."""

    templates: dict[Path, dict[str, object]]
    runs: tuple[tuple[RunSpec, str, tuple[str, ...]], ...]  # (spec, image, argv)

    def write(self) -> None:
        for path, template in self.templates.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(template_yaml(template))


def plan(specs: Sequence[RunSpec], options: SubmitOptions, env_for: Callable[[RunSpec], SparkEnv],
         spark_version_for: Callable[[RunSpec], str], target: KubernetesTarget) -> KubernetesPlan:
    """The Kubernetes dry run of a design: raises (KubernetesError) before anything is written."""
    folder = target.template_dir.resolve()
    templates: dict[Path, dict[str, object]] = {}
    runs = []
    for spec in specs:
        shape = shape_of(spec, options)
        path = folder / f"executor-{shape.name}.yaml"
        templates.setdefault(path, pod_template(shape))
        image = target.image or derived_image(spark_version_for(spec))
        runs.append((spec, image, tuple(kubernetes_argv(spec, options, env_for(spec), target, image, path))))
    return KubernetesPlan(templates, tuple(runs))


def validated(templates: Iterable[Mapping[str, object]]) -> str:
    """One line: the templates checked against the Kubernetes schema, or why they were not."""
    try:
        versions = {validate_template(t) for t in templates}
    except ImportError:
        return ("# templates not validated: the schema package is not installed "
                "(pip install kubernetes-validate==1.37.0, or the tool's test extra)")
    return f"# every template validated against Kubernetes {', '.join(sorted(versions))}'s OpenAPI schema (strict)"


def render(p: KubernetesPlan, target: KubernetesTarget, check: str) -> str:
    """The dry run's text: the templates (each once, with its file), then every run's argv."""
    import shlex

    lines = [f"# Kubernetes {target.master_url}, namespace {target.namespace}, client mode: nothing is submitted",
             check]
    for path, template in p.templates.items():
        lines.append(f"# pod template {path}:")
        lines += [f"#   {line}" for line in template_yaml(template).splitlines()]
    for spec, image, argv in p.runs:
        derived = "" if target.image else " (derived from the runtime's Spark version; not pulled or checked)"
        lines.append(f"# run {spec.key}: {spec.nodes} node(s) x {spec.executors} executor(s) x "
                     f"{spec.executor_cores} core(s) = {spec.total_cores} cores; image {image}{derived}")
        lines.append(shlex.join(argv))
    return "\n".join(lines)
