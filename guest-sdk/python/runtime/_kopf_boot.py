"""Boots the Python runtime of a kopf-wasm module, at build time.

The runtime calls boot(config) once, before it snapshots the module's
memory. After boot every module the handlers need is imported or
importable from memory, so an instance made from the snapshot needs no
file system at all. config is JSON:

    {"modules": ["handlers", ...],          # the author's files, imported in order
     "memzip": ["/stdlib/python311.zip", "/bundle/bundle.zip"],
     "name": "my-operator"}                 # optional: the module's default name
"""

import builtins
import gc
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import marshal
import sys
import zipfile


class MemZipFinder(importlib.abc.MetaPathFinder, importlib.abc.InspectLoader):
    """Serves modules and packages from zip archives held in memory:
    sources (.py, compiled at import) and compiled files (.pyc, the
    stdlib's). The first archive that has a module wins."""

    def __init__(self, paths):
        self.archives = {}  # path -> ZipFile over the bytes read at boot
        self.modules = {}   # module name -> (archive path, member name, is package)
        for path in paths:
            with open(path, "rb") as f:  # read whole: the snapshot keeps it
                self.archives[path] = zip_ = zipfile.ZipFile(io.BytesIO(f.read()))
            for member in zip_.namelist():
                self._index(path, member)

    def _index(self, path, member):
        stem, dot, ext = member.rpartition(".")
        if ext not in ("py", "pyc") or not dot:
            return
        parts = stem.split("/")
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        name = ".".join(parts)
        found = self.modules.get(name)
        # One archive's .py beats its own .pyc; an earlier archive beats later ones.
        if found is None or (found[0] == path and ext == "py" and found[1].endswith(".pyc")):
            self.modules[name] = (path, member, package)

    # --- finder -------------------------------------------------------------

    def find_spec(self, fullname, path=None, target=None):
        found = self.modules.get(fullname)
        if found is None:
            return None
        archive, member, package = found
        if path is not None:  # a submodule: only where its package's __path__ says
            where = f"{archive}/{member.rpartition('/')[0]}".rstrip("/")
            if package:
                where = where.rpartition("/")[0]
            if where not in path:
                return None
        spec = importlib.machinery.ModuleSpec(fullname, self, origin=f"{archive}/{member}",
                                              is_package=package)
        if package:
            spec.submodule_search_locations = [f"{archive}/{member.rpartition('/')[0]}"]
        spec.has_location = True
        return spec

    # --- loader -------------------------------------------------------------

    def _read(self, fullname):
        archive, member, package = self.modules[fullname]
        return self.archives[archive].read(member), f"{archive}/{member}", member.endswith(".pyc")

    def is_package(self, fullname):
        return self.modules[fullname][2]

    def get_code(self, fullname):
        data, origin, compiled = self._read(fullname)
        if compiled:
            return marshal.loads(data[16:])  # past the .pyc header
        return compile(data, origin, "exec", dont_inherit=True)

    def get_source(self, fullname):
        data, _, compiled = self._read(fullname)
        return None if compiled else importlib.util.decode_source(data)

    def get_data(self, path):
        """A file of an archive by its full path (for importlib.resources)."""
        for archive, zip_ in self.archives.items():
            if path.startswith(archive + "/"):
                return zip_.read(path[len(archive) + 1:])
        raise OSError(f"{path} is not in the module's archives")

    def exec_module(self, module):
        code = self.get_code(module.__name__)
        exec(code, module.__dict__)


def open_from_memory(finder, real_open):
    """An open() that reads files of the archives ("/bundle/bundle.zip/
    pvc.yaml", what os.path.dirname(__file__) gives a bundled module) from
    memory, read-only; any other path goes to the real open()."""
    def open_(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,
              closefd=True, opener=None):
        if isinstance(file, str) and not set(mode) & set("wax+"):
            try:
                data = finder.get_data(file)
            except OSError:
                pass
            else:
                if "b" in mode:
                    return io.BytesIO(data)
                return io.TextIOWrapper(io.BytesIO(data), encoding=encoding or "utf-8",
                                        errors=errors, newline=newline)
        return real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)
    return open_


def boot(config: bytes):
    """Installs the in-memory importer, imports kopf and the author's
    modules (their decorators register the handlers), then cuts the
    imports off from the file system."""
    conf = json.loads(config)
    # 1. Ahead of the file-system finders: everything now comes from memory.
    finder = MemZipFinder(conf.get("memzip", []))
    sys.meta_path.insert(0, finder)
    # Data files beside the author's modules stay readable with open().
    builtins.open = open_from_memory(finder, builtins.open)
    # 2. kopf and its runtime entry points, then the author's files.
    import kopf
    import kopf._runtime
    try:
        import kopf._loop  # asyncio, for async handlers, into the snapshot too
    except ImportError:
        pass  # async handlers then fail with the import's error
    kopf._logging.install_root()
    if conf.get("name"):
        kopf._runtime.default_name = conf["name"]
    for name in conf.get("modules", []):
        importlib.import_module(name)
    # 3. Nothing later may touch the preopened folders: drop the path
    #    finders, hooks and paths (builtins, frozen and memory remain).
    sys.meta_path[:] = [f for f in sys.meta_path if f is not importlib.machinery.PathFinder]
    sys.path_hooks.clear()
    sys.path_importer_cache.clear()
    sys.path[:] = []
    # 4. What boot made lives as long as the module: collect the garbage,
    #    then move every object left out of the collector's reach
    #    (gc.freeze), so that a collection in a handler call does not walk,
    #    and so write, the whole snapshot. The host maps the snapshot
    #    copy-on-write: pages a call does not write stay shared.
    gc.collect()
    gc.freeze()
