# Quick start: `make run` (demo on the embedded cluster) and `make test`.
# Both create .venv when missing and install the project with its test extras.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
KUBECTL_CACHE ?= $(HOME)/.cache/kube-runtime
# Where `make real-apiserver` caches etcd, kube-apiserver and kube-controller-manager 1.20.
REAL_CACHE ?= $(HOME)/.cache/kube-runtime/k8s-1.20
# Bytecode caching on, whatever the calling environment says: pytest keeps the test modules'
# rewritten assertions (525 modules, ~10 s a worker otherwise) and the suite's many
# `kube-runtime` subprocesses import compiled modules instead of compiling the project anew.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-real real-apiserver unit e2e lint typecheck bench bench-real chaos kubectl clean

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
	$(BIN)/lint-imports
	$(BIN)/ruff format --check $(wildcard kube_runtime kube_runtime_demo controllers codegen tests bench examples)

typecheck: $(STAMP)
	$(BIN)/mypy

# Tests run on TEST_WORKERS processes (pytest-xdist), each with its own embedded cluster (or
# real control plane): much of the e2e time is waiting on controllers, not CPU.
TEST_WORKERS ?= 2

test: $(STAMP) kubectl lint typecheck
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

# The conformance backend (docs/conformance.md): build once (apt + Go, about 5 minutes on
# 2 cores), then cached; nothing built goes into the repository.
real-apiserver:
	bash scripts/real-apiserver.sh "$(REAL_CACHE)"

# The e2e suite on etcd + kube-apiserver + kube-controller-manager 1.20 and the simulated
# kubelet; tests needing a newer Kubernetes are skipped with their reason.
test-real: $(STAMP) kubectl real-apiserver
	KUBE_RUNTIME_BACKEND=real KUBE_RUNTIME_REAL_BIN="$(REAL_CACHE)/bin" \
		$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -rfEs tests/e2e $(PYTEST_ARGS)

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit

e2e: $(STAMP)
	$(BIN)/python -m pytest -q tests/e2e

bench: $(STAMP)
	$(BIN)/python -m bench

# Our StatefulSet controller vs kube-controller-manager 1.20 on the real backend (minutes).
bench-real: $(STAMP) real-apiserver
	$(BIN)/python -m bench real

# A seeded fault campaign over the bundled controllers (minutes; not part of `make test`).
chaos: $(STAMP)
	$(BIN)/python -m bench.chaos

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
