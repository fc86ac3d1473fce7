#!/usr/bin/env bash
# Builds the Python runtime of Python guests: CPython 3.11 for wasm32-wasi
# from Debian's source package (apt-get source python3.11) with Debian's
# clang-16, lld-16, wasi-libc and compiler-rt, zlib from Debian's source, the
# C shim of guest-sdk/python/runtime linked as a WASI reactor
# (kopf-python.wasm, stripped), and the standard library as .pyc files in one
# zip (python311.zip, without tests, IDLE, tkinter and the like). Prints the
# folder that holds both.
#
#   hack/python-runtime.sh                  # build if missing, print the folder
#   hack/python-runtime.sh --print          # print the folder if CPython is built (relinks
#                                           # a changed shim, never builds CPython); else
#                                           # one line saying what to run, and exit 1
#   CI=true hack/python-runtime.sh          # also installs what is missing (root or sudo):
#                                           # the apt packages and a deb-src entry for bookworm
#   KOPF_WASM_CACHE=/some/dir ...           # cache root (default ~/.cache/kopf-wasm)
#
# Two folders under $KOPF_WASM_CACHE/python, each built once:
#   cpython-<debian version>-<recipe>/     CPython's libraries and headers and
#                                          the stdlib's sources (~5-10 minutes)
#   <debian version>-<recipe>-<link>/      kopf-python.wasm and python311.zip;
#                                          a changed shim or stdlib list only
#                                          relinks and rezips (seconds)
#   current -> the folder this checkout last asked for (kopf-wasm build's default)
# <recipe> hashes the CPython build steps below, <link> the shim's sources,
# the link step and hack/python-stdlib-zip.py. Nothing is downloaded but
# Debian's packages and sources.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
shim="$repo/guest-sdk/python/runtime"
root=${KOPF_WASM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kopf-wasm}
base="$root/python"
sysroot="$base/sysroot"
CC="clang-16 --target=wasm32-wasi --sysroot=$sysroot"

# The toolchain: each entry is "package:file that shows it is installed".
PACKAGES=(
  clang-16:/usr/bin/clang-16
  lld-16:/usr/bin/wasm-ld-16
  llvm-16:/usr/bin/llvm-ar-16
  wasi-libc:/usr/lib/wasm32-wasi/libc.a
  libclang-rt-16-dev-wasm32:/usr/lib/llvm-16/lib/clang/16/lib/wasi/libclang_rt.builtins-wasm32.a
  python3.11:/usr/bin/python3.11
  python3-yaml:/usr/lib/python3/dist-packages/yaml/__init__.py
  dpkg-dev:/usr/bin/dpkg-source
  make:/usr/bin/make
)
SRC_LIST=/etc/apt/sources.list.d/kopf-wasm-src.sources

# configure's answers for wasm32-wasi beyond CPython's config.site:
# wazero answers ENOTSUP to clock_nanosleep with an absolute time (both
# checks, or configure finds it in -lrt), so time.sleep uses nanosleep.
CONFIGURE_CACHE=(ac_cv_func_clock_nanosleep=no ac_cv_lib_rt_clock_nanosleep=no)
# wasi-libc's clockid_t is a pointer: CPython's int casts would be errors.
CPYTHON_CFLAGS="-O2 -Wno-error=int-conversion"
# Built-in modules left out: the CJK codecs' tables (0.7 MB of the runtime
# and of every instance's memory), and deprecated or example modules.
DISABLED_MODULES=(_codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr _codecs_tw
  _multibytecodec audioop _crypt xxsubtype)
CONFIGURE_FLAGS=(--host=wasm32-unknown-wasi --with-build-python=/usr/bin/python3.11
  --disable-test-modules --without-ensurepip --prefix=/usr/local)

# The link step: CPython's own stack for WASI (512 KiB, first, so that an
# overflow traps instead of overwriting data), and no --initial-memory (its
# 10 MiB would be in every instance; the heap grows as init needs: 4-5 MiB).
# No -O level at the link: with one, clang runs binaryen's wasm-opt after
# linking whenever wasm-opt is on PATH (hack/tinygo.sh installs Debian's
# binaryen), and binaryen 108 refuses the features CPython's objects use
# ("all used features should be allowed"); the objects are optimized already.
EXPORTS=(kopf_python_init kopf_manifest kopf_handle)
LINK_FLAGS=(-mexec-model=reactor -s -Wl,--stack-first -z stack-size=524288 -Wl,--gc-sections)
SHIM_CFLAGS=(-O2 -DNDEBUG -Wall -Werror -std=c11)

fail() { echo "python-runtime: $*" >&2; exit 1; }
say() { echo "python-runtime: $*" >&2; }

missing_packages() { # prints the packages whose file is absent
  local p
  for p in "${PACKAGES[@]}"; do [ -e "${p#*:}" ] || echo "${p%%:*}"; done
}

has_deb_src() { apt-cache showsrc python3.11 2>/dev/null | grep -q '^Version:'; }

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

make_sysroot() {
  # wasi-libc alone: Debian's clang would otherwise also search /usr/include,
  # where the host's headers (zlib.h, ffi.h, ...) would mislead configure.
  mkdir -p "$sysroot/include" "$sysroot/lib"
  ln -sfn /usr/include/wasm32-wasi "$sysroot/include/wasm32-wasi"
  ln -sfn /usr/lib/wasm32-wasi "$sysroot/lib/wasm32-wasi"
}

build_zlib() { # build_zlib WORK PREFIX: Debian's zlib source, static, for wasm32-wasi
  local work=$1 prefix=$2 log="$1/build.log" src
  (cd "$work" && run "$log" apt-get source -qq zlib)
  src=$(find "$work" -maxdepth 1 -type d -name 'zlib-*' | head -n 1)
  [ -n "$src" ] || fail "apt-get source zlib left no zlib-* folder in $work"
  (cd "$src" && run "$log" env CC="$CC" CFLAGS="-O2 -ffile-prefix-map=$work=." AR=llvm-ar-16 RANLIB=llvm-ranlib-16 \
    CHOST=wasm32-wasi ./configure --static --prefix="$prefix")
  (cd "$src" && run "$log" make -j2 libz.a && run "$log" make install)
}

build_cpython() { # builds $cpy
  local start=$SECONDS work="$cpy.work" src bld log zlib
  rm -rf "$work" "$cpy"
  mkdir -p "$work"
  log="$work/build.log"
  say "building CPython $version for wasm32-wasi into $cpy (5-10 minutes, once); log: $log"
  (cd "$work" && run "$log" apt-get source -qq "python3.11=$version")
  src="$work/python3.11-${version%%-*}"
  [ -x "$src/configure" ] || fail "apt-get source python3.11=$version left no $src/configure"
  zlib="$work/zlib"
  build_zlib "$work" "$zlib"

  bld="$work/build"
  mkdir -p "$bld/Modules"
  printf '%s\n' '*disabled*' "${DISABLED_MODULES[@]}" >"$bld/Modules/Setup.local"
  (cd "$bld" && run "$log" env CONFIG_SITE="$src/Tools/wasm/config.site-wasm32-wasi" \
    CC="$CC" CPP="$CC -E" AR=llvm-ar-16 RANLIB=llvm-ranlib-16 READELF=true \
    CFLAGS="$CPYTHON_CFLAGS -ffile-prefix-map=$work=." ZLIB_CFLAGS="-I$zlib/include" ZLIB_LIBS="-L$zlib/lib -lz" \
    PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR="$zlib/lib/pkgconfig" "${CONFIGURE_CACHE[@]}" \
    "../$(basename "$src")/configure" -C --build="$("$src/config.guess")" "${CONFIGURE_FLAGS[@]}")
  (cd "$bld" && run "$log" make -j"$(nproc)")

  # Keep what linking needs (the libraries, headers and libc flags), the
  # stdlib's sources for python-stdlib-zip.py, and python.wasm for trials.
  local out="$work/out"
  mkdir -p "$out/lib" "$out/include" "$out/sysconfig"
  cp "$bld/libpython3.11.a" "$zlib/lib/libz.a" "$out/lib/"
  find "$bld/Modules" -name '*.a' -exec cp {} "$out/lib/" \;
  cp -r "$src/Include/." "$out/include/"
  cp "$bld/pyconfig.h" "$out/include/"
  printf 'print-%%:\n\t@echo $($*)\n' >"$work/print.mk"
  (cd "$bld" && make -s -f Makefile -f "$work/print.mk" print-LIBS print-MODLIBS print-SYSLIBS) |
    tr ' ' '\n' | grep -E '^-l' | grep -vx -- '-lz' | sort -u >"$out/libs.txt"
  cp "$bld/python.wasm" "$out/python.wasm"
  cp -r "$src/Lib" "$out/Lib"
  rm -rf "$out/Lib/test"
  cp "$bld/$(cat "$bld/pybuilddir.txt")"/_sysconfigdata_*.py "$out/sysconfig/"
  # The build's variables name this machine's folders: name them alike everywhere.
  run "$log" /usr/bin/python3.11 -c 'import sys, pathlib
for f in pathlib.Path(sys.argv[1]).glob("_sysconfigdata_*.py"):
    f.write_text(f.read_text().replace(sys.argv[2], "/build").replace(sys.argv[3], "/sysroot"))' \
    "$out/sysconfig" "$work" "$sysroot"
  echo "$version" >"$out/version"
  cp "$log" "$out/build.log"
  mv "$out" "$cpy"
  touch "$cpy/.complete"
  rm -rf "$work"
  say "built CPython $version in $((SECONDS - start))s"
}

link_runtime() { # links $out from $cpy and the shim
  local start=$SECONDS tmp="$out.tmp" log libs=() exports=() mods e
  rm -rf "$tmp"
  mkdir -p "$tmp"
  log="$tmp/link.log"
  if [ ! -f "$stdlib" ]; then
    run "$log" /usr/bin/python3.11 "$here/python-stdlib-zip.py" "$cpy/Lib" "$cpy/sysconfig" "$stdlib" \
      /usr/lib/python3/dist-packages/yaml
  fi
  mapfile -t libs <"$cpy/libs.txt"
  for e in "${EXPORTS[@]}"; do exports+=("-Wl,--export=$e"); done
  # the modules' own libraries (libmpdec, libexpat), after libpython
  mods=$(cd "$cpy/lib" && ls lib*.a | grep -vx -e libpython3.11.a -e libz.a | sed 's/^lib/-l/; s/\.a$//')
  run "$log" $CC "${SHIM_CFLAGS[@]}" -ffile-prefix-map="$cpy=cpython" -ffile-prefix-map="$shim=shim" \
    -I"$cpy/include" -I"$shim" -c "$shim/shim.c" -o "$tmp/shim.o"
  # shellcheck disable=SC2086
  run "$log" $CC "${LINK_FLAGS[@]}" "${exports[@]}" -o "$tmp/kopf-python.wasm" "$tmp/shim.o" \
    -L"$cpy/lib" -lpython3.11 $mods -lz "${libs[@]}"
  run "$log" llvm-strip-16 "$tmp/kopf-python.wasm"
  cp "$stdlib" "$tmp/python311.zip"
  rm -f "$tmp/shim.o" "$log"
  rm -rf "$out"
  mv "$tmp" "$out"
  say "linked kopf-python.wasm in $((SECONDS - start))s"
}

finish() { # prints $out and points current at it
  ln -sfn "$(basename "$out")" "$base/.current.$$"
  mv -T "$base/.current.$$" "$base/current"
  echo "$out"
}

main() {
  local print=false
  case "${1:-}" in
    "") ;;
    --print) print=true ;;
    *) fail "unknown argument $1; usage: hack/python-runtime.sh [--print]" ;;
  esac
  mkdir -p "$base" || fail "cannot create the cache folder $base; set KOPF_WASM_CACHE to a writable folder"
  [ -f "$shim/shim.c" ] || fail "no $shim/shim.c; run from a checkout of kopf-wasm"
  if [ "${CI:-}" = true ] && ! $print; then install; fi

  local recipe link
  recipe=$({
    declare -f build_zlib build_cpython make_sysroot
    echo "${CONFIGURE_CACHE[*]} $CPYTHON_CFLAGS ${CONFIGURE_FLAGS[*]} ${DISABLED_MODULES[*]} $CC"
  } | sha256sum | cut -c1-8)
  link=$({
    (cd "$shim" && find . -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort | xargs sha256sum)
    sha256sum <"$here/python-stdlib-zip.py"
    dpkg-query -W -f='${Version}' python3-yaml 2>/dev/null || true
    declare -f link_runtime
    echo "${EXPORTS[*]} ${LINK_FLAGS[*]} ${SHIM_CFLAGS[*]}"
  } | sha256sum | cut -c1-8)

  # The Debian version of python3.11's source: what apt offers or, with no
  # deb-src entry, the newest one built here with this recipe.
  version=$( (apt-cache showsrc python3.11 2>/dev/null || true) | awk '/^Version:/ { print $2 }' | sort -V | tail -n 1)
  if [ -z "$version" ]; then
    version=$(cat "$base"/cpython-*-"$recipe"/version 2>/dev/null | sort -V | tail -n 1 || true)
  fi
  [ -n "$version" ] ||
    fail "no deb-src entry for Debian bookworm and no cached build; run: sudo CI=true hack/python-runtime.sh"

  cpy="$base/cpython-$version-$recipe"
  out="$base/$version-$recipe-$link"
  stdlib="$cpy/python311-$(sha256sum <"$here/python-stdlib-zip.py" | cut -c1-8).zip"
  if [ -f "$out/kopf-python.wasm" ] && [ -f "$out/python311.zip" ]; then
    finish
    return
  fi
  if $print && [ ! -f "$cpy/.complete" ]; then
    fail "the Python runtime is not built; run: CI=true hack/python-runtime.sh (root for apt-get; 5-10 minutes, once)"
  fi

  local missing
  missing=$(missing_packages | tr '\n' ' ')
  [ -z "$missing" ] ||
    fail "missing Debian packages: $missing; run: sudo CI=true hack/python-runtime.sh (or apt-get install $missing)"

  # Test packages may call this script at once: one builds, the others wait.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$base/.lock" || fail "cannot create $base/.lock; set KOPF_WASM_CACHE to a writable folder"
    flock 9 || fail "cannot lock $base/.lock"
    if [ -f "$out/kopf-python.wasm" ] && [ -f "$out/python311.zip" ]; then
      finish
      return
    fi
  fi

  export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC
  make_sysroot
  [ -f "$cpy/.complete" ] || build_cpython
  link_runtime
  finish
}

# One line, read whole before it runs: editing this file mid-build is safe.
main "$@"; exit
