#!/usr/bin/env bash
# Make kubectl available for the e2e tests.
#  1. A kubectl on PATH is used as the "current" client; when there is none, Debian's
#     kubernetes-client package is installed (needs root, as on our machines and CI).
#  2. Debian's kubernetes-client (1.20) is also unpacked, not installed, under
#     $1/kubectl-debian so the tests can check an old client too (KUBECTL_OLD).
set -euo pipefail
cache="${1:-$HOME/.cache/kube-runtime}"
apt_updated=0
apt_update() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true; apt_updated=1; fi
}

if ! command -v kubectl >/dev/null 2>&1; then
  echo "kubectl not found: installing Debian's kubernetes-client" >&2
  if [ "$(id -u)" = 0 ]; then
    apt_update
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client >/dev/null
  else
    echo "not root: install kubectl yourself (apt-get install kubernetes-client)" >&2
  fi
fi

old="$cache/kubectl-debian/usr/bin/kubectl"
if [ ! -x "$old" ]; then
  tmp="$(mktemp -d)"
  if (cd "$tmp" && (apt-get download -qq kubernetes-client >/dev/null 2>&1 || { apt_update; apt-get download -qq kubernetes-client >/dev/null 2>&1; })); then
    mkdir -p "$cache/kubectl-debian"
    dpkg -x "$tmp"/kubernetes-client_*.deb "$cache/kubectl-debian"
  else
    echo "warning: could not fetch Debian's kubernetes-client; old-kubectl tests will be skipped" >&2
  fi
  rm -rf "$tmp"
fi
command -v kubectl >/dev/null 2>&1 && echo "kubectl: $(command -v kubectl)" >&2
[ -x "$old" ] && echo "kubectl (Debian 1.20): $old" >&2
exit 0
