#!/usr/bin/env bash
# Installs, or checks, the toolchains of the non-Go guest SDKs:
#
#   Rust:           Debian's rustc and cargo (1.63), its wasm32 standard
#                   library (libstd-rust-dev-wasm32: wasm32-wasi and
#                   wasm32-unknown-unknown), the wasm linker (lld-14, which
#                   provides /usr/bin/rust-lld) and Debian's packaged
#                   serde_json (a dev-dependency of guest-sdk/rust's tests,
#                   used offline from /usr/share/cargo/registry).
#   AssemblyScript: the assemblyscript compiler from npm, pinned by
#                   guest-sdk/assemblyscript/package-lock.json (npm ci).
#   Python:         the Python runtime (CPython for wasm32-wasi and its
#                   stdlib), built from Debian's packages and sources by
#                   hack/python-runtime.sh into the project's cache.
#   TinyGo:         TinyGo for the Go SDK's TinyGo builds, built against
#                   Debian's LLVM 19 by hack/tinygo.sh into the project's cache.
#
# Usage:
#   hack/guest-toolchains.sh install [rust|assemblyscript|python|tinygo|all]   (root for apt-get)
#   hack/guest-toolchains.sh check   [rust|assemblyscript|python|tinygo|all]   (one line on failure)
#
# The Rust build always uses Debian's /usr/bin/rustc and /usr/bin/cargo: a
# rustup toolchain on PATH usually lacks the wasm targets.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
action="${1:-check}"
which="${2:-all}"

RUST_PACKAGES=(rustc cargo libstd-rust-dev-wasm32 lld-14 librust-serde-json-dev)

check_rust() {
  local missing=()
  [ -x /usr/bin/rustc ] || missing+=(rustc)
  [ -x /usr/bin/cargo ] || missing+=(cargo)
  [ -d /usr/lib/rustlib/wasm32-wasi/lib ] || missing+=(libstd-rust-dev-wasm32)
  [ -x /usr/bin/rust-lld ] || missing+=(lld-14)
  [ -d /usr/share/cargo/registry ] && ls /usr/share/cargo/registry | grep -q '^serde_json-' || missing+=(librust-serde-json-dev)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "the Rust guest toolchain is missing (${missing[*]}); run: sudo hack/guest-toolchains.sh install rust" >&2
    return 1
  fi
}

check_as() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "the AssemblyScript guest toolchain needs node and npm; install Node.js 18 or newer, then run: hack/guest-toolchains.sh install assemblyscript" >&2
    return 1
  fi
  if [ ! -x "$root/guest-sdk/assemblyscript/node_modules/.bin/asc" ]; then
    echo "the AssemblyScript compiler is not installed; run: hack/guest-toolchains.sh install assemblyscript" >&2
    return 1
  fi
}

install_rust() {
  if check_rust 2>/dev/null; then return 0; fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "== apt-get install ${RUST_PACKAGES[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${RUST_PACKAGES[@]}" >/dev/null
  check_rust
}

install_as() {
  command -v npm >/dev/null 2>&1 || { echo "npm is not installed; install Node.js 18 or newer (with npm) and run again" >&2; return 1; }
  if check_as 2>/dev/null && [ "$root/guest-sdk/assemblyscript/node_modules/.package-lock.json" -nt "$root/guest-sdk/assemblyscript/package-lock.json" ]; then return 0; fi
  echo "== npm ci (guest-sdk/assemblyscript)"
  (cd "$root/guest-sdk/assemblyscript" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  check_as
}

check_python() {
  if ! "$root/hack/python-runtime.sh" --print >/dev/null 2>&1; then
    echo "the Python runtime is not built; run: CI=true hack/python-runtime.sh (root for apt-get; about 10 minutes, once)" >&2
    return 1
  fi
}

install_python() {
  CI=true "$root/hack/python-runtime.sh" >/dev/null
  check_python
}

check_tinygo() {
  if ! "$root/hack/tinygo.sh" --print >/dev/null 2>&1; then
    echo "TinyGo is not built; run: CI=true hack/tinygo.sh (root for apt-get; a few minutes, once)" >&2
    return 1
  fi
}

install_tinygo() {
  CI=true "$root/hack/tinygo.sh" >/dev/null
  check_tinygo
}

case "$action/$which" in
  install/rust) install_rust ;;
  install/assemblyscript) install_as ;;
  install/python) install_python ;;
  install/tinygo) install_tinygo ;;
  install/all) install_rust && install_as && install_python && install_tinygo ;;
  check/rust) check_rust ;;
  check/assemblyscript) check_as ;;
  check/python) check_python ;;
  check/tinygo) check_tinygo ;;
  check/all) check_rust && check_as && check_python && check_tinygo ;;
  *) echo "usage: hack/guest-toolchains.sh install|check [rust|assemblyscript|python|tinygo|all]" >&2; exit 2 ;;
esac
