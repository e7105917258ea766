# Two commands do all set-up on a fresh machine with Python 3.11 and pip:
#   make demo   compile (and verify, and simulate) the shipped GEMM on wormhole_n150
#   make test   run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export OMP_NUM_THREADS := 1

.PHONY: demo test test-slow check golden clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/loom run gemm --arch wormhole_n150 --shape M=4096,N=4096,K=4096 --dump-dir out/gemm --html out/report.html --force

# The HTML report's browser test runs Debian's chromium: installed here where apt-get can
# (as root); elsewhere the test skips and says why (under CI it must run).
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	  || echo "chromium is not installed: the browser test will skip (apt-get install chromium)"

test: $(VENV)/.installed browser
	$(BIN)/python -m pytest -q -n 2 -m "not slow"

test-slow: $(VENV)/.installed
	$(BIN)/python -m pytest -q -n 2 -m slow

check: $(VENV)/.installed
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n 2 -m "not slow"

golden: $(VENV)/.installed
	$(BIN)/python -m pytest -q --update-golden tests/frontend tests/dataflow tests/lower tests/backends

clean:
	rm -rf $(VENV) out .pytest_cache
