# Two commands do all the set-up: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean local test-local real-demo

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the project's metadata changes (the package is installed editable).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/harnesskit demo

test: $(STAMP)
	$(BIN)/python -m pytest tests
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks/

LINTED := harnesskit tests benchmarks scripts

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy harnesskit

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# The real local model (issue 14): `make local` builds llama-server once (~15-25 min on 2 cores)
# and assembles the verified Qwen2.5-Coder GGUFs into ~/.cache/harnesskit (see README).
LOCAL_MODELS ?= qwen2.5-coder-0.5b qwen2.5-coder-1.5b
REAL_MODEL ?= local:qwen2.5-coder-1.5b

local: $(STAMP)
	$(BIN)/python -m harnesskit.models._local_install $(foreach m,$(LOCAL_MODELS),--model $(m))

test-local: $(STAMP)
	$(MAKE) local LOCAL_MODELS=qwen2.5-coder-0.5b
	$(BIN)/python -m pytest -m local -p no:cacheprovider tests/models/test_local.py

real-demo: local
	$(BIN)/harnesskit demo --model $(REAL_MODEL) --out runs/real-demo; status=$$?; \
	$(BIN)/python scripts/local_demo_report.py runs/real-demo; exit $$status

clean:
	rm -rf $(VENV) runs .pytest_cache
