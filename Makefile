# Two commands for a fresh machine: `make run` and `make test`. Both install what is missing first.
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
APT_PKGS := tesseract-ocr tesseract-ocr-eng ffmpeg bubblewrap espeak-ng sox chromium fonts-dejavu-core fonts-noto-color-emoji
PYTEST_ARGS ?=

.PHONY: setup sysdeps run test lint bench screenshots clean

setup: sysdeps $(STAMP)

# Python packages into .venv; torch first, as the CPU wheel (a plain `torch` pulls several GB of CUDA).
$(STAMP): requirements.txt requirements-test.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -r requirements.txt -r requirements-test.txt
	@touch $(STAMP)

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

test: setup
	GRADIO_ANALYTICS_ENABLED=False HF_HUB_OFFLINE=1 $(PY) -m pytest $(PYTEST_ARGS)

# Refresh the README's screenshots (the browser tests take them).
screenshots: setup
	UPDATE_SCREENSHOTS=1 GRADIO_ANALYTICS_ENABLED=False HF_HUB_OFFLINE=1 $(PY) -m pytest -m browser tests/app/test_browser.py

# The lint gate: ruff (style, imports, bugbear, docstrings) and mypy, both configured in pyproject.toml.
lint: setup
	$(PY) -m ruff check .
	$(PY) -m mypy .

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
