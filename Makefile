# Two commands do all the set-up on a fresh machine:
#   make demo   - environment, local Spark cluster, a small design on the MNIST sample, results + report
#   make test   - environment, then the whole test suite (slow tests included)
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_OUT ?= runs/demo-$(shell date +%Y%m%d-%H%M%S)

.PHONY: venv demo test test-fast doctor clean

venv: $(STAMP)

$(STAMP): setup.cfg pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found: install Python 3.11 or run make PYTHON=/path/to/python3.11"; exit 2; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test]'
	@touch $(STAMP)

doctor: venv
	$(PY) -m harness.doctor

demo: venv
	$(PY) -m harness.submit examples/demo.csv --local --out $(DEMO_OUT)
	$(PY) -m harness.report $(DEMO_OUT) -o $(DEMO_OUT)/report.html

test: venv
	$(PY) -m pytest -q

test-fast: venv
	$(PY) -m pytest -q -m "not slow"

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
