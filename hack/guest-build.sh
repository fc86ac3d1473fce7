#!/usr/bin/env bash
# Builds one non-Go guest module into a .wasm file:
#
#   hack/guest-build.sh rust DIR OUT            (a cdylib crate: cargo build --release --target wasm32-wasi)
#   hack/guest-build.sh assemblyscript DIR OUT  (an AssemblyScript module: DIR/assembly/index.ts)
#   hack/guest-build.sh python DIR OUT          (a folder of .py files: kopf-wasm build, with the
#                                               Python runtime of hack/python-runtime.sh)
#   hack/guest-build.sh tinygo DIR OUT          (a Go example, examples/<name>, with hack/tinygo.sh's
#                                               TinyGo and kopf-wasm build --compiler tinygo's flags)
#
# The output is written to a temporary file and renamed into place, so that
# concurrent test binaries never see half a module. Used by the Makefile
# (make guests) and by internal/guestwasm, which Go tests call.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lang="$1"; dir="$2"; out="$3"
[ -d "$dir" ] || { echo "guest-build: no directory $dir" >&2; exit 1; }
"$root/hack/guest-toolchains.sh" check "$lang"
mkdir -p "$(dirname "$out")"
tmp="$out.$$.tmp"
trap 'rm -f "$tmp"' EXIT
case "$lang" in
  rust)
    # Debian's toolchain, whatever rustup puts first on PATH.
    export PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/bin/cargo}"
    name="$(sed -n 's/^name *= *"\(.*\)"/\1/p' "$dir/Cargo.toml" | head -1)"
    /usr/bin/cargo build --quiet --release --target wasm32-wasi --manifest-path "$dir/Cargo.toml"
    cp "$CARGO_TARGET_DIR/wasm32-wasi/release/${name//-/_}.wasm" "$tmp"
    ;;
  assemblyscript)
    asdir="$root/guest-sdk/assemblyscript"
    "$asdir/node_modules/.bin/asc" "$dir/assembly/index.ts" --config "$asdir/asconfig.json" --target release --outFile "$tmp"
    ;;
  python)
    # This checkout's CLI, built beside the output (test binaries may race).
    cli="$tmp.cli"
    trap 'rm -f "$tmp" "$cli"' EXIT
    (cd "$root" && go build -o "$cli" ./cmd/kopf-wasm)
    KOPF_WASM_PYTHON_RUNTIME="$("$root/hack/python-runtime.sh" --print)" "$cli" build "$dir" -o "$tmp" >/dev/null
    ;;
  tinygo)
    # TinyGo picks the output's format by its extension: a .wasm in a folder of its own,
    # named absolutely, as TinyGo runs in the module's folder.
    case "$tmp" in /*) tgdir="$tmp.d" ;; *) tgdir="$PWD/$tmp.d" ;; esac
    trap 'rm -rf "$tmp" "$tgdir"' EXIT
    mkdir -p "$tgdir"
    # The flags of kopf-wasm build --compiler tinygo (cmd/kopf-wasm/internal/app/tinygo.go).
    (cd "$dir" && "$("$root/hack/tinygo.sh" --print)/bin/tinygo" build -target=wasip1 -buildmode=c-shared -no-debug \
      -scheduler=none -o "$tgdir/module.wasm" .)
    mv "$tgdir/module.wasm" "$tmp"
    rm -rf "$tgdir"
    ;;
  *) echo "guest-build: unknown language $lang (rust, assemblyscript, python, tinygo)" >&2; exit 2 ;;
esac
mv "$tmp" "$out"
trap - EXIT
