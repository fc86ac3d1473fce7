"""Writes CPython's standard library as .pyc files into one zip for the
wasm runtime of Python guests (hack/python-runtime.sh runs it with Debian's
python3.11, whose bytecode matches the runtime's).

    python3.11 python-stdlib-zip.py LIB_DIR SYSCONFIGDATA_DIR OUT.zip [PACKAGE_DIR ...]

Each PACKAGE_DIR is a pure-Python package added beside the standard library
under its folder's name (PyYAML from Debian's python3-yaml: Kopf's docs and
operators load templates with yaml.safe_load); its native extensions are
left out, and the package's pure-Python fallback serves.

Leaves out what a sandbox without threads, processes, sockets, a terminal or
native extensions cannot use, and every test suite. The zip is reproducible:
sorted entries, fixed dates, unchecked hash-based .pyc (no source needed).
"""

import importlib._bootstrap_external as bootstrap
import importlib.util
import os
import pprint
import sys
import zipfile

# Top-level modules and packages of Lib/ left out.
EXCLUDED_TOP = {
    "__phello__",       # a frozen-module test
    "_pydecimal.py",    # the pure-Python fallback of the built-in _decimal
    "ctypes",           # no _ctypes in wasm32-wasi
    "curses",           # no terminal
    "ensurepip",        # pip wheels; no pip in the sandbox
    "idlelib",
    "lib2to3",
    "msilib",           # Windows
    "multiprocessing",  # no processes
    "pydoc_data",       # help() topics
    "site-packages",
    "sqlite3",          # no _sqlite3
    "test",
    "tkinter",
    "turtle.py",
    "turtledemo",
    "venv",             # no processes
}

# Folders left out wherever they are.
EXCLUDED_DIRS = {"test", "tests", "idle_test", "__pycache__"}


def sources(lib):
    """Yields (path in the zip, file) for each .py file kept, sorted."""
    found = []
    for top, dirs, files in os.walk(lib):
        rel = os.path.relpath(top, lib)
        parts = [] if rel == "." else rel.split(os.sep)
        dirs[:] = [
            d for d in dirs
            if d not in EXCLUDED_DIRS and not (not parts and d in EXCLUDED_TOP)
        ]
        for f in files:
            if not f.endswith(".py") or (not parts and f in EXCLUDED_TOP):
                continue
            found.append(("/".join(parts + [f]), os.path.join(top, f)))
    return sorted(found)


def sysconfigdata(path):
    """The build's variables, printed again: pprint wrapped them by their
    lengths before hack/python-runtime.sh renamed this machine's folders."""
    scope = {}
    with open(path, encoding="utf-8") as fh:
        exec(fh.read(), scope)
    return ("# system configuration generated and used by the sysconfig module\n"
            "build_time_vars = " + pprint.pformat(scope["build_time_vars"]) + "\n").encode()


def pyc(name, path):
    """Compiles one source file to an unchecked hash-based .pyc."""
    if os.path.basename(path).startswith("_sysconfigdata_"):
        source = sysconfigdata(path)
    else:
        with open(path, "rb") as fh:
            source = fh.read()
    code = compile(source, "python311.zip/" + name, "exec", dont_inherit=True)
    data = bootstrap._code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False)
    return bytes(data)


def package(path):
    """Yields (path in the zip, file) for the .py files of a package."""
    name = os.path.basename(os.path.normpath(path))
    for top, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS)
        rel = os.path.relpath(top, path)
        prefix = name if rel == "." else name + "/" + rel.replace(os.sep, "/")
        for f in sorted(files):
            if f.endswith(".py"):
                yield prefix + "/" + f, os.path.join(top, f)


def main(lib, sysconfig_dir, out, *packages):
    entries = sources(lib)
    for path in packages:
        entries += list(package(path))
    # The build writes _sysconfigdata_{abiflags}_wasi_{multiarch}.py, but
    # Debian's sysconfig.py (the one zipped) looks for it without the
    # platform: _sysconfigdata_{abiflags}_{multiarch}.
    entries += [
        (f.replace("_wasi_", "_", 1), os.path.join(sysconfig_dir, f))
        for f in sorted(os.listdir(sysconfig_dir))
        if f.startswith("_sysconfigdata_") and f.endswith(".py")
    ]
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, path in sorted(entries):
            info = zipfile.ZipInfo(name[:-3] + ".pyc", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, pyc(name, path))
    os.replace(tmp, out)
    print(f"{out}: {len(entries)} modules, {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: python3.11 python-stdlib-zip.py LIB_DIR SYSCONFIGDATA_DIR OUT.zip [PACKAGE_DIR ...]")
    if sys.version_info[:2] != (3, 11):
        sys.exit("python-stdlib-zip.py: run it with python3.11, whose bytecode the runtime reads")
    main(*sys.argv[1:])
