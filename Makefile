# Two commands do all set-up on a fresh machine with Python 3.11 and pip:
#   make demo   compile (and verify, and simulate) the shipped GEMM on wormhole_n150
#   make test   run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export OMP_NUM_THREADS := 1

.PHONY: demo test test-slow check golden clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/loom run gemm --arch wormhole_n150 --shape M=4096,N=4096,K=4096 --dump-dir out/gemm

test: $(VENV)/.installed
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
