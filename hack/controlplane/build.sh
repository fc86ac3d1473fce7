#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver and
# kube-controller-manager) from the pinned Go modules beside this script into
# a cache folder keyed by their versions, and prints that folder. Reuses the
# folder when the binaries are already there, and builds only the missing ones
# (a cache from before kube-controller-manager gets just that). The two
# Kubernetes binaries come from the same k8s.io/kubernetes module and share
# most packages, so the second one reuses the Go build cache of the first.
#
#   hack/controlplane/build.sh            # build if missing, print the folder
#   KOPF_WASM_CACHE=/some/dir build.sh    # cache root (default ~/.cache/kopf-wasm)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fail() { echo "controlplane: $*" >&2; exit 1; }

command -v go >/dev/null 2>&1 ||
  fail "no Go toolchain on PATH; install Go 1.24 or newer (https://go.dev/doc/install) and run again"

modversion() { # modversion DIR MODULE -> the version DIR/go.mod requires
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1/go.mod"
}
kube=$(modversion "$here/kubernetes" k8s.io/kubernetes)
etcd=$(modversion "$here/etcd" go.etcd.io/etcd/server/v3)
[ -n "$kube" ] && [ -n "$etcd" ] || fail "cannot read the pinned versions from $here/*/go.mod"

root=${KOPF_WASM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kopf-wasm}
dir="$root/controlplane/kube-$kube-etcd-$etcd"
mkdir -p "$dir" || fail "cannot create the cache folder $dir; set KOPF_WASM_CACHE to a writable folder"

# Test packages run in parallel and may all call this script: one builds,
# the others wait for it and then find the binaries in place.
binaries="etcd kube-apiserver kube-controller-manager"
missing() { # missing -> true when a binary is not in the folder yet
  local b
  for b in $binaries; do [ -x "$dir/$b" ] || return 0; done
  return 1
}
if missing; then
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$dir/.lock" || fail "cannot create $dir/.lock; set KOPF_WASM_CACHE to a writable folder"
    flock 9 || fail "cannot lock $dir/.lock"
  fi
fi

build() { # build MODULE_DIR PACKAGE OUTPUT [LDFLAGS]
  local log start=$SECONDS
  log=$(mktemp) || fail "cannot create a temporary file"
  echo "controlplane: building $(basename "$3") into $dir (a few minutes, once)" >&2
  if ! (cd "$1" && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$3.tmp" -ldflags "-s -w ${4:-}" "$2") >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    rm -f "$log" "$3.tmp"
    fail "building $(basename "$3") failed (see above); check that the Go module proxy is reachable (go env GOPROXY) and run again"
  fi
  rm -f "$log"
  mv "$3.tmp" "$3"
  echo "controlplane: built $(basename "$3") in $((SECONDS - start))s" >&2
}

if [ ! -x "$dir/etcd" ]; then
  build "$here/etcd" ./cmd/etcd "$dir/etcd"
fi
# Both Kubernetes binaries report the pinned version (/version, --version).
minor=$(echo "$kube" | cut -d. -f2)
v="k8s.io/component-base/version"
cv="k8s.io/client-go/pkg/version"
flags="-X $v.gitVersion=$kube -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
flags="$flags -X $v.buildDate=1970-01-01T00:00:00Z"
flags="$flags -X $cv.gitVersion=$kube -X $cv.gitMajor=1 -X $cv.gitMinor=$minor -X $cv.gitTreeState=clean"
for b in kube-apiserver kube-controller-manager; do
  if [ ! -x "$dir/$b" ]; then
    build "$here/kubernetes" "./cmd/$b" "$dir/$b" "$flags"
  fi
done
echo "$dir"
