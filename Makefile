# Quick start: `make run` (demo on the embedded cluster) and `make test`.
# Both create .venv when missing and install the project with its test extras.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
KUBECTL_CACHE ?= $(HOME)/.cache/kube-runtime

.PHONY: run test unit e2e lint typecheck bench kubectl clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# kubectl for the e2e tests: the system one when present, else Debian's kubernetes-client.
# Debian's 1.20 client is also unpacked (not installed) into the cache so the tests can
# check both an old and a current kubectl against the embedded cluster.
kubectl:
	@bash scripts/ensure-kubectl.sh "$(KUBECTL_CACHE)"

run: $(STAMP)
	$(BIN)/kube-runtime demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check $(wildcard kube_runtime controllers codegen tests bench examples)

typecheck: $(STAMP)
	$(BIN)/mypy

test: $(STAMP) kubectl lint typecheck
	$(BIN)/python -m pytest -q

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit

e2e: $(STAMP)
	$(BIN)/python -m pytest -q tests/e2e

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
