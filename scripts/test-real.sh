#!/usr/bin/env bash
# Run the e2e suite against the real backend (etcd + kube-apiserver + kube-controller-manager
# 1.20 + the client-based simulated kubelet). Builds the binaries first when not cached.
# Extra arguments go to pytest (e.g. -x, -k ...).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/real-apiserver.sh
KUBE_RUNTIME_BACKEND=real exec .venv/bin/python -m pytest -q tests/e2e "$@"
