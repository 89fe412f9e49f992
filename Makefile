# docindex — every target sets up what it needs from a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
REQS := requirements/dev.txt requirements/constraints.txt layers/docindex/requirements.txt worker/requirements.txt pyproject.toml
APT_PACKAGES := tesseract-ocr tesseract-ocr-jpn tesseract-ocr-jpn-vert fonts-ipafont-gothic
PYTEST_ARGS ?=

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}'

$(STAMP): $(REQS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements/dev.txt -c requirements/constraints.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

.PHONY: venv
venv: $(STAMP) ## Create .venv with pinned dependencies

.PHONY: system-deps
system-deps: ## Install Tesseract (jpn, jpn_vert) and a Japanese font if missing (apt-get)
	@if command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx jpn \
	    && fc-list :lang=ja 2>/dev/null | grep -q .; then exit 0; fi; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
	echo "installing $(APT_PACKAGES) with apt-get"; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(APT_PACKAGES) >/dev/null

.PHONY: test
test: $(STAMP) system-deps ## Run unit, integration and end-to-end tests
	$(BIN)/pytest -n auto $(PYTEST_ARGS)

.PHONY: test-unit
test-unit: $(STAMP) ## Run only the unit tests (no servers)
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

.PHONY: lint
lint: $(STAMP) ## ruff, mypy and cfn-lint on the template
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	@if [ -f template.yaml ]; then $(BIN)/cfn-lint template.yaml; fi

.PHONY: format
format: $(STAMP) ## Format and auto-fix with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

.PHONY: demo
demo: $(STAMP) system-deps ## Local run on the embedded defaults: upload samples, index them, search
	$(BIN)/docindex demo

.PHONY: clean
clean: ## Remove the venv, caches and local state
	rm -rf $(VENV) .docindex .aws-sam .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
