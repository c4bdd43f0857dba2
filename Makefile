# Two commands do all the set-up: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-extras phoenix lint bench clean local test-local real-demo

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
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks/ \
		--ignore=notebooks/08_local_model.ipynb

# The optional extras ([mcp], [otel], [parquet]) and a real Phoenix, in their own venv so that
# `make test` keeps testing a plain install. Phoenix is heavy: the first run installs for minutes.
EXTRAS_VENV := .venv-extras
EXTRAS_BIN := $(EXTRAS_VENV)/bin
EXTRAS_STAMP := $(EXTRAS_VENV)/.installed
EXTRAS_TESTS := tests/tools/test_mcp.py tests/tools/test_mcp_startup_hang.py tests/log/test_otel.py tests/log/test_otel_phoenix.py \
	tests/notebook/test_parquet.py tests/models/test_streaming.py

$(EXTRAS_BIN)/python:
	$(PYTHON) -m venv $(EXTRAS_VENV)

$(EXTRAS_STAMP): pyproject.toml | $(EXTRAS_BIN)/python
	$(EXTRAS_BIN)/python -m pip install --quiet --upgrade pip
	$(EXTRAS_BIN)/python -m pip install --quiet -e ".[dev,mcp,otel,parquet]" arize-phoenix
	touch $(EXTRAS_STAMP)

# `-p no:phoenix`: arize-phoenix-client ships a pytest plugin whose import warns (an error here).
test-extras: $(EXTRAS_STAMP)
	HK_REQUIRE_EXTRAS=1 $(EXTRAS_BIN)/python -m pytest -p no:cacheprovider -p no:phoenix \
		$(EXTRAS_TESTS)
	$(EXTRAS_BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider \
		-p no:phoenix notebooks/07_ecosystem.ipynb

# A Phoenix on 127.0.0.1:6006 for notebook 07 (Ctrl-C stops it).
phoenix: $(EXTRAS_STAMP)
	@echo "export HK_PHOENIX_URL=http://127.0.0.1:6006"
	PHOENIX_HOST=127.0.0.1 PHOENIX_PORT=6006 PHOENIX_WORKING_DIR=$(EXTRAS_VENV)/phoenix \
		$(EXTRAS_BIN)/python -m phoenix.server.main serve

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
REAL_POLICY ?= default
REAL_STEPS ?= 10

local: $(STAMP)
	$(BIN)/python -m harnesskit.models._local_install $(foreach m,$(LOCAL_MODELS),--model $(m))

# Both weights: most tests run on the 0.5B; the structured tool_calls test needs the 1.5B
# (the 0.5B writes bare JSON calls, recovered from the text).
test-local: $(STAMP)
	$(MAKE) local
	$(BIN)/python -m pytest -m local -p no:cacheprovider tests/models/test_local.py
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider \
		notebooks/08_local_model.ipynb

real-demo: local
	$(BIN)/harnesskit demo --model $(REAL_MODEL) --policy $(REAL_POLICY) --max-steps $(REAL_STEPS) \
		--out runs/real-demo; \
	status=$$?; \
	$(BIN)/python scripts/local_demo_report.py runs/real-demo; exit $$status

clean:
	rm -rf $(VENV) $(EXTRAS_VENV) runs .pytest_cache
