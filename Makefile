# Two commands for a fresh machine: `make demo` (or `make run`) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8765
DB ?= ./channel-memory.db

.PHONY: run demo test floors soak lint typecheck bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,llm]'
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/channel-memory serve --db $(DB) --host $(HOST) --port $(PORT)

# The whole path on a synthetic busy desk: ingest over HTTP, worker, feed, tools.
demo: install
	$(BIN)/channel-memory demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy --strict channel_memory

# pytest on one worker process per core (pytest-xdist, ADR 0035); TEST_WORKERS=0 runs
# it in this process alone. The measured floors of the desks the rules are tuned on and
# the model learns from run under `make floors` (ADR 0066); a plain pytest runs both.
TEST_WORKERS ?= auto

test: lint typecheck
	$(BIN)/python -m pytest -n $(TEST_WORKERS) -m "not tuned_on"

floors: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) -m tuned_on

# The long reliability runs: 100 SIGKILL rounds and a 60 s load soak.
soak: install
	CHANNEL_MEMORY_CRASH_ROUNDS=100 $(BIN)/python -m pytest -q tests/test_crash.py
	$(BIN)/python bench/soak.py --seconds 60

# Every benchmark; the 1,000,000-message store is built once (a few minutes) into
# .bench-cache and shared by the feed and tools benchmarks within the hour.
bench: install
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/worker.py
	$(BIN)/python bench/desk.py
	$(BIN)/python bench/feed.py --cache .bench-cache
	$(BIN)/python bench/tools.py --cache .bench-cache
	$(BIN)/python bench/mcp_start.py
	$(BIN)/python bench/search.py --cache .bench-cache
	$(BIN)/python bench/decisions.py
	$(BIN)/python bench/answered.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .bench-cache
