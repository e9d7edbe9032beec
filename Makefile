# The two set-up commands: `make up` (run everything) and `make test` (run the tests).
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
# tiers 1 and 2 run on WORKERS pytest-xdist workers (3 on 2 cores: many tests wait on servers they start), a test file per worker; tier 3 runs after them
# in one process, one Ray cluster at a time (tests/conftest.py); `make test-fast` runs tier 1 on
# FAST_WORKERS
WORKERS ?= 3
FAST_WORKERS ?= 2

.PHONY: up down status lint test test-fast bench install system-deps clean

$(STAMP): pyproject.toml setup.py deployments/ignore_gen/_fastpaths.c deployments/memory/_rank.c
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

system-deps:
	bash scripts/system-deps.sh

install: system-deps $(STAMP)

up: install
	$(VENV)/bin/rayfleet up

down:
	$(VENV)/bin/rayfleet down

status:
	$(VENV)/bin/rayfleet status

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# each lane may find nothing to run in the paths PYTEST_ARGS names (pytest's exit 5); a real failure stops make
test: lint
	$(PY) -m pytest -n $(WORKERS) --dist loadfile -m "not e2e" --durations=15 $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(PY) -m pytest -m e2e --durations=15 $(PYTEST_ARGS) || [ $$? -eq 5 ]

# the inner loop: ruff, then the tests that need no real server and no cluster (tiers 2 and 3
# are marked from the fixtures they use: tests/conftest.py); `make test` still runs everything
test-fast: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest -n $(FAST_WORKERS) --dist loadfile -m "not e2e and not realserver" $(PYTEST_ARGS)

bench: install
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) var build *.egg-info
