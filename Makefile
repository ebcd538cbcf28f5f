# bayesrank developer commands. `make demo` and `make test` install into .venv first when it is missing.
PYTHON ?= $(shell command -v python3.12 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install compile-cache demo test test-slow lint bench models clean browser notebooks screenshot docs

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	$(MAKE) --no-print-directory compile-cache
	touch $(STAMP)

install: $(STAMP)

# PyTensor links the inner graphs of its derivative operations with C code, compiled once per machine
# into its own cache (~/.pytensor); fits of every framework compile the same modules, so one small fit here
# puts that compilation in the install instead of a user's first fit. It changes no number a fit gives.
compile-cache:
	$(VENV)/bin/bayesrank fit mtbench-judges --model davidson --method map --format json >/dev/null

demo: $(STAMP)
	$(VENV)/bin/bayesrank demo --out demo --force

# The default tier on TEST_WORKERS processes (pytest-xdist; each test is independent of the others).
TEST_WORKERS ?= 2
test: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow

# ruff (pyflakes, pycodestyle, import order, numpy docstrings), configured in pyproject.toml.
lint: $(STAMP)
	$(VENV)/bin/ruff check bayesrank tests

bench: $(STAMP)
	$(PY) -m pip install --quiet -e ".[bench]"
	$(PY) bench/run.py

models: $(STAMP)
	bash models/regenerate.sh

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache docs/_build docs/gallery docs/api/generated

# Debian's chromium (headless) renders the HTML report in a test (tests/report/test_document.py).
browser:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

# Execute the notebooks in place with a Jupyter kernel, so they are committed with their outputs.
notebooks: $(STAMP)
	$(PY) notebooks/execute.py

# The screenshot of the reference report in docs/, as headless Chromium renders it: the headline,
# the data, the warnings, the pairwise matrices, the Elo chart and the top of the sortable table.
screenshot: browser
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
	  --disable-component-update --disable-sync --user-data-dir=$$(mktemp -d) --hide-scrollbars \
	  --window-size=1280,3500 --virtual-time-budget=10000 --screenshot=docs/report.png \
	  file://$(CURDIR)/models/arena-2024/report.html

# The docs site (Sphinx, docs/): built with warnings as errors and nitpicky references into
# docs/_build/html; then its index is opened in headless Chromium, which must report no console
# error (docs/check_site.py), and the screenshot of that page is docs/site.png.
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e ".[dev,docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP) browser
	rm -rf docs/_build/html docs/api/generated
	$(PY) -m sphinx -W --keep-going -n -q -b html docs docs/_build/html
	$(PY) docs/check_site.py docs/_build/html/index.html docs/site.png
