"""runtime/_kopf_boot.py: modules from in-memory zips, then no file system."""

import importlib.util
import json
import marshal
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HANDLERS = '''
import os, kopf, helperpkg.sub

TEMPLATE = open(os.path.join(os.path.dirname(__file__), "pvc.yaml")).read()  # at import

@kopf.on.create("kopf.dev", "v1", "kopfexamples")
def create_fn(**_):
    return {"message": helperpkg.sub.GREETING}
'''

CHECK = '''
import json, sys
sys.path.insert(0, {runtime!r})
import _kopf_boot
_kopf_boot.boot(json.dumps({config}).encode())
import kopf, kopf._runtime
assert sys.path == [] and sys.path_hooks == [], (sys.path, sys.path_hooks)
import probe_pyc, lazypkg.inner          # imported only now: from memory
import handlers, os
template = open(os.path.join(os.path.dirname(handlers.__file__), "pvc.yaml"), "rt").read()
assert template == handlers.TEMPLATE == "size: {{size}}\\n", template
assert open(os.path.join(os.path.dirname(handlers.__file__), "pvc.yaml"), "rb").read() == b"size: {{size}}\\n"
manifest = json.loads(kopf._runtime.manifest())
resp = json.loads(kopf._runtime.handle(json.dumps({{"handler": "create_fn", "kind": "create",
    "reason": "create", "body": {{"metadata": {{"name": "x"}}}}, "retry": 0}}).encode()))
print(json.dumps({{"kopf": kopf.__file__, "manifest": manifest, "response": resp,
                  "probe": probe_pyc.VALUE, "inner": lazypkg.inner.VALUE}}))
'''


def pyc(source):
    code = compile(source, "probe_pyc.py", "exec")
    return importlib.util.MAGIC_NUMBER + b"\0" * 12 + marshal.dumps(code)


class BootTest(unittest.TestCase):

    def test_boot_serves_modules_from_memory_and_drops_the_file_system(self):
        with tempfile.TemporaryDirectory() as tmp:
            stdlib, bundle = os.path.join(tmp, "stdlib.zip"), os.path.join(tmp, "bundle.zip")
            with zipfile.ZipFile(stdlib, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("probe_pyc.pyc", pyc("VALUE = 'compiled'"))
            with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as z:
                for pkg in ("kopf", "kubernetes"):
                    for dirpath, _, files in os.walk(os.path.join(ROOT, pkg)):
                        for f in files:
                            if f.endswith(".py"):
                                full = os.path.join(dirpath, f)
                                z.write(full, os.path.relpath(full, ROOT))
                z.writestr("handlers.py", HANDLERS)
                z.writestr("pvc.yaml", "size: {size}\n")
                z.writestr("helperpkg/__init__.py", "")
                z.writestr("helperpkg/sub.py", "GREETING = 'hello'")
                z.writestr("lazypkg/__init__.py", "")
                z.writestr("lazypkg/inner.py", "VALUE = 'lazy'")
            config = {"modules": ["handlers"], "memzip": [stdlib, bundle], "name": "booted"}
            script = CHECK.format(runtime=os.path.join(ROOT, "runtime"), config=config)
            out = subprocess.run([sys.executable, "-c", script], cwd=tmp, capture_output=True,
                                 text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            got = json.loads(out.stdout)
            self.assertEqual(got["kopf"], f"{bundle}/kopf/__init__.py")
            self.assertEqual(got["manifest"]["module"], {"name": "booted"})
            self.assertEqual(got["response"], {"outcome": {"status": "success"}, "result": {"message": "hello"}})
            self.assertEqual((got["probe"], got["inner"]), ("compiled", "lazy"))


if __name__ == "__main__":
    unittest.main()
