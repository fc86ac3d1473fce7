#!/usr/bin/env bash
# Builds TinyGo for the Go guest SDK's TinyGo builds: tinygo v0.41.0 from
# the Go module proxy, compiled against Debian's LLVM 19 (llvm-19-dev,
# libclang-19-dev; clang-19 and lld-19 compile and link the guests, Debian's
# binaryen gives wasm-opt). The module lacks TinyGo's git submodules; they
# come from Debian's sources:
#
#   lib/wasi-libc               apt-get source wasi-libc, with the small
#                               adjustments of hack/tinygo/wasi-libc.patch
#   lib/compiler-rt-builtins    compiler-rt/lib/builtins of llvm-toolchain-19's
#                               source (its upstream tarball, unchanged)
#   src/net                     empty: guests do not import net
#
# hack/tinygo/tinygo.patch adjusts TinyGo's own tree for LLVM 19. The whole
# tree is cached, and TinyGo's build cache lives inside it (bin/tinygo is a
# wrapper that points TinyGo there: TinyGo caches its compiled C libraries
# by name only, so a cache shared between trees could mix them).
#
#   hack/tinygo.sh              # build if missing, print TINYGOROOT (bin/tinygo in it)
#   hack/tinygo.sh --print      # print TINYGOROOT if built; else one line saying
#                               # what to run, and exit 1
#   CI=true hack/tinygo.sh      # also installs what is missing (root or sudo):
#                               # the apt packages and a deb-src entry for bookworm
#   KOPF_WASM_CACHE=/some/dir   # cache root (default ~/.cache/kopf-wasm)
#
# The tree: $KOPF_WASM_CACHE/tinygo/<key>/, where <key> names TinyGo's
# version, the Debian versions of llvm-19-dev, wasi-libc and binaryen, and a
# hash of this script's build steps and patches; tinygo/current points at
# the one this checkout last asked for (kopf-wasm build's default). A cold
# build takes about 2-4 minutes; a cached one answers at once. Nothing is
# downloaded but Debian's packages and sources and Go modules.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${KOPF_WASM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kopf-wasm}
base="$root/tinygo"
TINYGO=github.com/tinygo-org/tinygo
TINYGO_VERSION=v0.41.0
LLVM=19

# The toolchain: each entry is "package:file that shows it is installed".
PACKAGES=(
  llvm-$LLVM-dev:/usr/lib/llvm-$LLVM/bin/llvm-config
  libclang-$LLVM-dev:/usr/lib/llvm-$LLVM/include/clang-c/Index.h
  clang-$LLVM:/usr/bin/clang-$LLVM
  lld-$LLVM:/usr/bin/wasm-ld-$LLVM
  binaryen:/usr/bin/wasm-opt
  dpkg-dev:/usr/bin/dpkg-source
  xz-utils:/usr/bin/xz
)
SRC_LIST=/etc/apt/sources.list.d/kopf-wasm-src.sources

fail() { echo "tinygo: $*" >&2; exit 1; }
say() { echo "tinygo: $*" >&2; }

missing_packages() { # prints the packages whose file is absent
  local p
  for p in "${PACKAGES[@]}"; do [ -e "${p#*:}" ] || echo "${p%%:*}"; done
}

has_deb_src() { apt-cache showsrc wasi-libc 2>/dev/null | grep -q '^Version:'; }

install() { # in CI: adds bookworm's deb-src entry and installs what is missing
  local sudo="" missing
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  missing=$(missing_packages | tr '\n' ' ')
  if ! has_deb_src; then
    say "adding Debian's source packages ($SRC_LIST)"
    printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" \
      "Suites: bookworm bookworm-updates" "Components: main" \
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $sudo tee "$SRC_LIST" >/dev/null
    $sudo apt-get update -qq
  fi
  if [ -n "$missing" ]; then
    say "apt-get install $missing"
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
}

run() { # run LOG CMD...: runs CMD with its output in LOG, shows the tail on failure
  local log=$1
  shift
  if ! "$@" >>"$log" 2>&1; then
    tail -n 25 "$log" >&2
    fail "$* failed (full log: $log)"
  fi
}

candidate() { # candidate PACKAGE: the version apt installs (or installed)
  apt-cache policy "$1" 2>/dev/null | awk '$1 == "Installed:" && $2 != "(none)" { v = $2 } $1 == "Candidate:" && !v { c = $2 } END { print v ? v : c }'
}

fetch_tinygo() { # copies TinyGo's module into $1
  local dir
  dir=$(cd "$work" && GOWORK=off GOFLAGS= go mod download -json "$TINYGO@$TINYGO_VERSION" | awk -F'"' '$2 == "Dir" { print $4 }')
  [ -d "$dir" ] || fail "go mod download $TINYGO@$TINYGO_VERSION gave no folder (is the Go module proxy reachable?)"
  cp -r "$dir" "$1"
  chmod -R u+w "$1"
}

add_wasi_libc() { # Debian's wasi-libc source, adjusted, as $1/lib/wasi-libc
  local src
  (cd "$work" && run "$log" apt-get source -qq "wasi-libc=$wasi_version")
  src=$(find "$work" -maxdepth 1 -type d -name 'wasi-libc-*' | head -n 1)
  [ -n "$src" ] || fail "apt-get source wasi-libc=$wasi_version left no wasi-libc-* folder in $work"
  rm -rf "$src/debian"
  (cd "$src" && run "$log" patch -p1 --no-backup-if-mismatch -i "$here/tinygo/wasi-libc.patch")
  mv "$src" "$1/lib/wasi-libc"
}

add_compiler_rt() { # compiler-rt's builtins from llvm-toolchain-19's source as $1/lib/compiler-rt-builtins
  local orig
  (cd "$work" && run "$log" apt-get source -qq --download-only "llvm-toolchain-$LLVM=$llvm_version")
  orig=$(find "$work" -maxdepth 1 -name "llvm-toolchain-${LLVM}_*.orig.tar.xz" | head -n 1)
  [ -n "$orig" ] || fail "apt-get source llvm-toolchain-$LLVM=$llvm_version left no .orig.tar.xz in $work"
  run "$log" tar -xJf "$orig" -C "$work" --wildcards "*/compiler-rt/lib/builtins/*"
  mv "$work"/*/compiler-rt/lib/builtins "$1/lib/compiler-rt-builtins"
  rm -rf "$work"/llvm-toolchain-"$LLVM"_*
}

write_wrapper() { # $1/bin/tinygo: TinyGo with its build cache in the tree
  mv "$1/bin/tinygo" "$1/bin/tinygo.bin"
  cat >"$1/bin/tinygo" <<'EOF'
#!/bin/sh
# TinyGo with its build cache in this tree (hack/tinygo.sh): TinyGo caches
# its compiled C libraries by name only. Go's own cache stays where it was.
bin=$(dirname "$(readlink -f "$0")")
if [ -z "${GOCACHE:-}" ]; then GOCACHE=$(go env GOCACHE) && export GOCACHE; fi
XDG_CACHE_HOME="$bin/../cache" exec "$bin/tinygo.bin" "$@"
EOF
  chmod +x "$1/bin/tinygo"
}

warm() { # compiles wasi-libc and compiler-rt into the tree's cache with a small reactor
  local probe="$work/probe"
  mkdir -p "$probe"
  printf 'module probe\n\ngo 1.24\n' >"$probe/go.mod"
  printf 'package main\n\nimport "fmt"\n\n//go:wasmexport probe\nfunc probe() int32 { fmt.Println("probe"); return 0 }\n\nfunc main() {}\n' >"$probe/main.go"
  (cd "$probe" && run "$log" env GOWORK=off "$1/bin/tinygo" build -target=wasip1 -buildmode=c-shared -no-debug -o probe.wasm .)
  [ -s "$probe/probe.wasm" ] || fail "the probe module was not built (log: $log)"
}

build_tree() { # builds $tree
  local start=$SECONDS out
  work="$tree.work"
  rm -rf "$work" "$tree"
  mkdir -p "$work"
  log="$work/build.log"
  say "building TinyGo ${TINYGO_VERSION#v} into $tree (a few minutes, once); log: $log"
  out="$work/tree"
  fetch_tinygo "$out"
  mkdir -p "$out/lib" "$out/src/net"
  add_wasi_libc "$out"
  add_compiler_rt "$out"
  (cd "$out" && run "$log" patch -p1 --no-backup-if-mismatch -i "$here/tinygo/tinygo.patch")
  (cd "$out" && run "$log" env GOWORK=off GOFLAGS= CGO_ENABLED=1 go build -tags "llvm$LLVM" -o bin/tinygo .)
  write_wrapper "$out"
  warm "$out"
  cp "$log" "$out/build.log"
  echo "$key" >"$out/version"
  mv "$out" "$tree"
  touch "$tree/.complete"
  rm -rf "$work"
  say "built TinyGo in $((SECONDS - start))s"
}

finish() { # prints $tree and points current at it
  ln -sfn "$(basename "$tree")" "$base/.current.$$"
  mv -T "$base/.current.$$" "$base/current"
  echo "$tree"
}

main() {
  local print=false
  case "${1:-}" in
    "") ;;
    --print) print=true ;;
    *) fail "unknown argument $1; usage: hack/tinygo.sh [--print]" ;;
  esac
  mkdir -p "$base" || fail "cannot create the cache folder $base; set KOPF_WASM_CACHE to a writable folder"
  if [ "${CI:-}" = true ] && ! $print; then install; fi

  local recipe binaryen
  recipe=$({
    declare -f fetch_tinygo add_wasi_libc add_compiler_rt write_wrapper warm build_tree
    cat "$here/tinygo/wasi-libc.patch" "$here/tinygo/tinygo.patch"
  } | sha256sum | cut -c1-8)
  # Debian's versions: wasi-libc's and llvm-toolchain-19's sources share
  # their binary packages' versions. The epoch's ':' stays out of the path.
  llvm_version=$(candidate "llvm-$LLVM-dev")
  wasi_version=$(candidate wasi-libc)
  binaryen=$(candidate binaryen)
  [ -n "$llvm_version" ] && [ -n "$wasi_version" ] && [ -n "$binaryen" ] ||
    fail "apt knows no llvm-$LLVM-dev, wasi-libc or binaryen (Debian bookworm's); run: sudo CI=true hack/tinygo.sh"
  key="${TINYGO_VERSION#v}-llvm${llvm_version#*:}-wasilibc${wasi_version#*:}-binaryen${binaryen#*:}-$recipe"
  tree="$base/$key"
  if [ -f "$tree/.complete" ]; then
    finish
    return
  fi
  if $print; then
    fail "TinyGo is not built; run: CI=true hack/tinygo.sh (root for apt-get; a few minutes, once)"
  fi

  local missing
  missing=$(missing_packages | tr '\n' ' ')
  [ -z "$missing" ] ||
    fail "missing Debian packages: $missing; run: sudo CI=true hack/tinygo.sh (or apt-get install $missing)"
  command -v go >/dev/null 2>&1 || fail "no go on PATH; install Go (https://go.dev/doc/install) and run again"
  has_deb_src || fail "no deb-src entry for Debian bookworm; run: sudo CI=true hack/tinygo.sh"

  # Test packages may call this script at once: one builds, the others wait.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$base/.lock" || fail "cannot create $base/.lock; set KOPF_WASM_CACHE to a writable folder"
    flock 9 || fail "cannot lock $base/.lock"
    if [ -f "$tree/.complete" ]; then
      finish
      return
    fi
  fi

  export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC
  build_tree
  finish
}

# One line, read whole before it runs: editing this file mid-build is safe.
main "$@"; exit
