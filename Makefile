# legged-mpc: `make run` (A1 trot in simulation) and `make test` (the test suite).
# Both create the virtual environment .venv on first use; `make test` also installs the virtual
# display the viewer tests need (Xvfb, software OpenGL) where it is missing.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
WHEEL_DIR := build/wheel-check

.PHONY: run test test-fast lint check-wheel display clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev,plot]'
	# Unitree's Go1 SDK, the independent peer of the legacy UDP interop tests; its declared
	# dependencies are build tools, so it is installed on its own without them.
	$(BIN)/python -m pip install --quiet --no-deps unitree-legged-sdk==3.8.20231105
	# Unitree's unitree_sdk2_python (a fork that accepts cyclonedds 11 and ships the compiled
	# CRC library), the SDK2 protocol oracle; its declared dependencies include opencv, which
	# nothing here uses.
	$(BIN)/python -m pip install --quiet --no-deps unitree-sdk2py-dimos==1.0.3
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/mpc-run configs/a1_trot.yaml

# The viewer and replay tests open real windows on a private Xvfb display.
display:
	@command -v Xvfb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Xvfb and software OpenGL for the viewer tests (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      xvfb libgl1-mesa-dri libglx-mesa0 >/dev/null; \
	  else \
	    echo "make test: the viewer tests need Xvfb; install it with:" >&2; \
	    echo "  sudo apt-get install xvfb libgl1-mesa-dri libglx-mesa0" >&2; exit 2; \
	  fi; }

test: $(STAMP) display
	$(BIN)/python -m pytest -q

test-fast: $(STAMP) display
	$(BIN)/python -m pytest -q -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .

# The wheel as a user gets it: built, installed into a fresh virtual environment, and run from
# outside the repository with every derivative backend (short lockstep runs).
check-wheel: $(STAMP)
	rm -rf $(WHEEL_DIR) && mkdir -p $(WHEEL_DIR)
	$(BIN)/python -m pip wheel --quiet --no-deps -w $(WHEEL_DIR) .
	$(PYTHON) -m venv $(WHEEL_DIR)/venv
	$(WHEEL_DIR)/venv/bin/python -m pip install --quiet $(WHEEL_DIR)/*.whl
	cd $(WHEEL_DIR) && for backend in fd wasp analytic; do \
	  venv/bin/mpc-run a1_trot --mode lockstep --duration 0.3 --backend $$backend --quiet \
	    --out runs/$$backend || exit 1; \
	  grep -q '"sim_time_s": 0.3' runs/$$backend/summary.json || exit 1; \
	done
	@echo "check-wheel: the installed wheel ran fd, wasp and analytic"

clean:
	rm -rf $(VENV) runs bench_results build .pytest_cache
