# legged-mpc: `make run` (A1 trot in simulation) and `make test` (the test suite).
# Both create the virtual environment .venv on first use.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test test-fast lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	# Unitree's Go1 SDK, the independent peer of the legacy UDP interop tests; its declared
	# dependencies are build tools, so it is installed on its own without them.
	$(BIN)/python -m pip install --quiet --no-deps unitree-legged-sdk==3.8.20231105
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/mpc-run configs/a1_trot.yaml

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) runs bench_results .pytest_cache
