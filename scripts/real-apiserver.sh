#!/usr/bin/env bash
# Build (once) and cache a real Kubernetes 1.20 control plane for the conformance backend.
#
# Result, under $1 (default ~/.cache/kube-runtime/k8s-1.20):
#   bin/kube-apiserver, bin/kube-controller-manager   built from Debian bookworm's `kubernetes`
#                                                      source package (1.20.2, Go deps vendored)
#   bin/etcd                                          from Debian's etcd-server (unpacked, not
#                                                      installed, so no service gets started)
# Idempotent: exits at once when the three binaries are present and were built by this recipe
# (CACHE/build-id names the recipe and hashes its patches; a cache built by another recipe is
# rebuilt once, its downloads reused). Needs root for apt (as on our machines and CI). The
# build is niced so it shares the cores politely.
#
# Why the reflect2 swap: the vendored github.com/modern-go/reflect2 1.0.1 breaks at run time
# on Go >= 1.18 (Debian's golang-go is 1.19); 1.0.2 from golang-github-modern-go-reflect2-dev
# is source compatible and fixes it.
#
# Patches (scripts/*.patch, applied with patch -p1 to the source tree):
#   kube-openapi-230-zero-values.patch   kube-openapi#230, the fix of kubernetes#99804: built
#                                        with Go >= 1.16, the vendored kube-openapi refused
#                                        zero values such as "" in typed custom-resource fields
#                                        as null; upstream 1.20.2 (Go 1.15) accepts them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
patches=("$here/kube-openapi-230-zero-values.patch")
cache="${1:-$HOME/.cache/kube-runtime/k8s-1.20}"
bin="$cache/bin"
# Bump `recipe` when a change here changes what gets built.
recipe=2
build_id="recipe-$recipe-$(cat "${patches[@]}" | sha256sum | cut -c1-16)"
if [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kube-controller-manager" ] && [ -x "$bin/etcd" ] \
  && [ "$(head -c 4 "$bin/etcd")" = "$(printf '\177ELF')" ] \
  && [ "$(cat "$cache/build-id" 2>/dev/null)" = "$build_id" ]; then
  echo "real apiserver cached: $bin" >&2
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "not root: cannot apt-get the build dependencies" >&2
  exit 1
fi
mkdir -p "$cache" "$bin"
export DEBIAN_FRONTEND=noninteractive

echo "installing build tools (golang-go, rsync, dpkg-dev, make, patch)" >&2
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends golang-go rsync dpkg-dev make patch >/dev/null

work="$cache/build"
mkdir -p "$work"

# A private deb-src list: the system's apt sources stay untouched.
apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial"
printf 'deb-src http://deb.debian.org/debian bookworm main\n' >"$apt_dir/sources.list"
apt_src=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
  -o "Dir::State::Lists=$apt_dir/lists")

src="$(find "$work" -maxdepth 1 -type d -name 'kubernetes-1.20*' | head -n1)"
if [ -z "$src" ]; then
  echo "fetching the kubernetes source package" >&2
  apt-get "${apt_src[@]}" update -qq >/dev/null
  (cd "$work" && apt-get "${apt_src[@]}" source -qq kubernetes >/dev/null)
  src="$(find "$work" -maxdepth 1 -type d -name 'kubernetes-1.20*' | head -n1)"
fi
[ -n "$src" ] || { echo "kubernetes source not found under $work" >&2; exit 1; }

echo "replacing vendored modern-go/reflect2 with Debian's 1.0.2" >&2
debs="$work/debs"
mkdir -p "$debs"
(cd "$debs" && apt-get download -qq golang-github-modern-go-reflect2-dev etcd-server >/dev/null)
rm -rf "$debs/reflect2" && mkdir -p "$debs/reflect2"
dpkg -x "$debs"/golang-github-modern-go-reflect2-dev_*.deb "$debs/reflect2"
vendored="$src/vendor/github.com/modern-go/reflect2"
rm -rf "$vendored"
cp -r "$debs/reflect2/usr/share/gocode/src/github.com/modern-go/reflect2" "$vendored"

for p in "${patches[@]}"; do
  if patch -d "$src" -p1 -R --dry-run --force -s <"$p" >/dev/null 2>&1; then
    echo "already applied: $(basename "$p")" >&2
  else
    echo "applying $(basename "$p")" >&2
    patch -d "$src" -p1 --forward -s <"$p"
  fi
done

echo "unpacking etcd-server" >&2
rm -rf "$debs/etcd" && mkdir -p "$debs/etcd"
dpkg -x "$debs"/etcd-server_*.deb "$debs/etcd"
install -m 0755 "$debs/etcd/usr/bin/etcd" "$bin/etcd"

if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kube-controller-manager" ] \
  || [ "$(cat "$cache/build-id" 2>/dev/null)" != "$build_id" ]; then
  echo "building kube-apiserver and kube-controller-manager (several minutes)" >&2
  (cd "$src" && GO111MODULE=off nice -n 10 make WHAT="cmd/kube-apiserver cmd/kube-controller-manager")
  for b in kube-apiserver kube-controller-manager; do
    install -m 0755 "$(find "$src/_output" -type f -name "$b" -perm -u+x | head -n1)" "$bin/$b"
  done
fi
echo "$build_id" >"$cache/build-id"
echo "real apiserver built: $bin" >&2
"$bin/kube-apiserver" --version >&2 || true
