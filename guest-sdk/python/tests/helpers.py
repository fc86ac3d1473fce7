"""Shared by the tests: a fresh registry per test, fixtures, bodies."""

import importlib
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import kopf  # noqa: E402
import kopf.testing  # noqa: E402

TESTDATA = os.path.join(HERE, "..", "..", "..", "abi", "testdata")


def fixture(name):
    """The bytes of abi/testdata/<name>."""
    with open(os.path.join(TESTDATA, name), "rb") as f:
        return f.read()


def example(size=1, name="kopf-example-1", labels=None, annotations=None, **spec):
    """A KopfExample body."""
    meta = {"name": name, "namespace": "default", "uid": "uid-" + name}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": meta,
            "spec": dict(spec, size=size)}


class KopfTestCase(unittest.TestCase):
    """Each test registers its handlers in a fresh default registry and
    gets a fake host in self.host."""

    def setUp(self):
        self._saved = kopf.get_default_registry()
        self.registry = kopf.OperatorRegistry()
        kopf.set_default_registry(self.registry)
        self.host = kopf.testing.Host()

    def tearDown(self):
        kopf.set_default_registry(self._saved)

    def import_fresh(self, name):
        """Imports a test module anew so its decorators fill this registry."""
        sys.modules.pop(name, None)
        return importlib.import_module(name)


def canonical(raw):
    return json.dumps(json.loads(raw), sort_keys=True)
