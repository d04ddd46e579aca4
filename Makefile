# legged-mpc: `make run` (A1 trot in simulation) and `make test` (the test suite).
# Both create the virtual environment .venv on first use; `make test` also installs the virtual
# display the viewer tests need (Xvfb, software OpenGL) where it is missing, and builds the
# second environment the SDK2 oracle test runs Unitree's SDK in (see sdk2-peer-env).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
WHEEL_DIR := build/wheel-check

.PHONY: run test test-fast test-generic lint check-wheel display sdk2-peer-env cyclonedds-c clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev,plot]'
	# Unitree's Go1 SDK, the independent peer of the legacy UDP interop tests; its declared
	# dependencies are build tools, so it is installed on its own without them.
	$(BIN)/python -m pip install --quiet --no-deps unitree-legged-sdk==3.8.20231105
	# Unitree's unitree_sdk2_python (a fork that accepts cyclonedds 11 and ships the compiled
	# CRC library): its IDL classes and CRC are checked against the project's byte for byte here;
	# its declared dependencies include opencv, which nothing here uses.
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

# The SDK2 oracle's robot side: Unitree's SDK with its own IDL classes on cyclonedds 0.10.2, the
# Cyclone DDS release the robots run, in an environment of its own inside $(VENV). It has to be
# a second environment because one interpreter holds one cyclonedds: the bridge's is 11, and
# there Unitree's uint8 members would be announced as TK_UINT8, which the bridge's byte members
# (TK_BYTE) do not match; on 0.10.2, as on the robots, they are TK_BYTE. PyPI has no
# Python 3.11 wheel of cyclonedds 0.10.2, so its sdist is built against Debian's C library
# (cyclonedds-dev 0.10.2, bookworm), which its build finds through a small prefix of links
# (Debian puts the libraries under lib/<multiarch>, the build looks in lib/); built without
# pip's wheel cache, so the binding is always compiled against the C library installed here.
# Unitree's SDK imports nothing else at run time (no numpy; cyclonedds' own dependency
# rich-click is for its command-line tools).
SDK2_PEER := $(VENV)/sdk2-peer
SDK2_PEER_PINS := cyclonedds==0.10.2 unitree-sdk2py-dimos==1.0.3
SDK2_PEER_STAMP := $(SDK2_PEER)/.installed-$(shell echo '$(SDK2_PEER_PINS)' | cksum | cut -d' ' -f1)
CDDS_HOME := $(abspath $(SDK2_PEER))/cyclonedds-home

sdk2-peer-env: $(SDK2_PEER_STAMP)

# Debian's Cyclone DDS 0.10.2 C library and headers, checked on every run (the peer loads the
# library at run time).
cyclonedds-c:
	@dpkg-query -W -f='$${Status}' cyclonedds-dev 2>/dev/null | grep -q 'ok installed' || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Cyclone DDS 0.10.2 (cyclonedds-dev) for the SDK2 oracle test (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      --no-install-recommends cyclonedds-dev >/dev/null; \
	  else \
	    echo "make test: the SDK2 oracle test needs Cyclone DDS 0.10.2; install it with:" >&2; \
	    echo "  sudo apt-get install --no-install-recommends cyclonedds-dev" >&2; exit 2; \
	  fi; }
	@dpkg-query -W -f='$${Version}' cyclonedds-dev | grep -q '^0\.10\.' || { \
	  echo "make test: cyclonedds-dev is $$(dpkg-query -W -f='$${Version}' cyclonedds-dev)," \
	    "the SDK2 peer needs 0.10 (Debian bookworm's 0.10.2)" >&2; exit 2; }

$(SDK2_PEER_STAMP): | cyclonedds-c
	rm -rf $(SDK2_PEER)
	$(PYTHON) -m venv $(SDK2_PEER)
	mkdir -p $(CDDS_HOME)/lib
	ln -s /usr/include $(CDDS_HOME)/include
	ln -s /usr/bin $(CDDS_HOME)/bin
	ln -s $$(dpkg-query -L cyclonedds-dev | grep -E '/lib(ddsc|cycloneddsidl)\.so$$') $(CDDS_HOME)/lib/
	CYCLONEDDS_HOME=$(CDDS_HOME) $(SDK2_PEER)/bin/python -m pip install --quiet --no-cache-dir \
	  --no-deps --no-binary cyclonedds $(SDK2_PEER_PINS)
	$(SDK2_PEER)/bin/python -I -c "from importlib.metadata import version as v; \
	  import unitree_sdk2py.core.channel; from unitree_sdk2py.utils.crc import CRC; CRC(); \
	  assert v('cyclonedds') == '0.10.2'"
	touch $@

test: $(STAMP) display sdk2-peer-env
	$(BIN)/python -m pytest -q

test-fast: $(STAMP) display sdk2-peer-env
	$(BIN)/python -m pytest -q -m "not slow"

# The suite as another processor would run it: numba's kernels compiled for a generic x86-64
# CPU into a fresh cache, numpy's AVX2/AVX-512 loops off (feature names of numpy 2.4) and
# OpenBLAS on the kernels of GENERIC_BLAS (Haswell: AVX2, what an AVX2-only processor such as
# an AMD EPYC without AVX-512 runs; on such a machine set GENERIC_BLAS=Sandybridge so the BLAS
# differs from its own). Lockstep runs are deterministic on one machine, not across processors:
# a behavioural test that passes under both `make test` and this does not hang on the last
# bits of the rounding. About as long as `make test` plus compiling the kernels.
GENERIC_BLAS ?= Haswell
GENERIC_CACHE := build/numba-generic
GENERIC_CPU := NUMBA_CPU_NAME=generic NUMBA_CACHE_DIR=$(GENERIC_CACHE) \
  OPENBLAS_CORETYPE=$(GENERIC_BLAS) NPY_DISABLE_CPU_FEATURES=X86_V3,X86_V4,AVX512_ICL,AVX512_SPR

test-generic: $(STAMP) display sdk2-peer-env
	rm -rf $(GENERIC_CACHE)
	$(GENERIC_CPU) $(BIN)/python -m pytest -q

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
