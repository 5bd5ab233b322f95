# Two commands for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8765
DB ?= ./channel-memory.db

.PHONY: run test lint typecheck bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/channel-memory serve --db $(DB) --host $(HOST) --port $(PORT)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy --strict channel_memory

test: lint typecheck
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
