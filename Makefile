# Lo-Bug: `make run` serves on the embedded default, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench crash soak clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed"'
	$(PYTHON) -m venv $(VENV)

# Re-installs only when a requirements file or pyproject.toml changed.
$(STAMP): $(BIN)/python requirements.txt requirements-nodeps.txt requirements-dev.txt pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-nodeps.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/lobug serve

# Branch coverage is measured and held above the floor in pyproject.toml ([tool.coverage]).
test: $(STAMP) firmware-test
	$(BIN)/python -m pytest --cov --cov-report=term

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
	$(BIN)/python scripts/bench_auth.py
	$(BIN)/python scripts/bench_quality.py --model looping
	$(BIN)/python scripts/bench_quality.py

# Reliability runs, not part of `make test`: SIGKILL under load, then a bounded soak.
crash: $(STAMP)
	$(BIN)/python scripts/crash_test.py --kills 5

soak: $(STAMP)
	$(BIN)/python scripts/soak.py --minutes $(or $(MINUTES),10)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage
