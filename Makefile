# The two commands of the README: `make demo` and `make test`.
VENV ?= .venv
PY ?= $(VENV)/bin/python

.PHONY: install demo test lint typecheck check bench schemas

$(VENV)/bin/python:
	python3 -m venv $(VENV)

# Installs once, with pip's progress shown, and again only when pyproject.toml changes:
# the stamp file is newer than pyproject.toml after a successful install.
$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	@echo "installing windags-evaluator and its dependencies into $(VENV) (the first time takes a few minutes)"
	$(PY) -m pip install --progress-bar on -e '.[dev]'
	@touch $@

install: $(VENV)/.installed

demo: install
	$(PY) -m workers.local.cli demo

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck:
	$(PY) -m mypy

# pytest exits 5 when it collects nothing: that is a failure here, as it should be.
test: install lint typecheck
	$(PY) -m pytest -q

check: test

schemas:
	$(PY) -m schemas.export

bench: install
	$(PY) -m bench.run_all
