"""Kopf's documented examples, as its docs write them, but for the
Kubernetes client lines (none needed here: the shim takes Kopf's)."""

import importlib
import os
import sys
import tempfile
import textwrap
import unittest
import warnings

from helpers import KopfTestCase

EPHEMERAL = '''
import os
import kopf
import kubernetes
import yaml

kopf.permit("", "persistentvolumeclaims", "create", "patch")

@kopf.on.create('ephemeralvolumeclaims')
def create_fn(spec, name, namespace, logger, body, **kwargs):

    size = spec.get('size')
    if not size:
        raise kopf.PermanentError(f"Size must be set. Got {size!r}.")

    path = os.path.join(os.path.dirname(__file__), 'pvc.yaml')
    tmpl = open(path, 'rt').read()
    text = tmpl.format(name=name, size=size)
    data = yaml.safe_load(text)

    kopf.adopt(data)

    api = kubernetes.client.CoreV1Api()
    obj = api.create_namespaced_persistent_volume_claim(
        namespace=namespace,
        body=data,
    )

    logger.info(f"PVC child is created: {obj}")

    return {'pvc-name': obj.metadata.name}


@kopf.on.update('ephemeralvolumeclaims')
def update_fn(spec, status, namespace, logger, **kwargs):

    size = spec.get('size', None)
    if not size:
        raise kopf.PermanentError(f"Size must be set. Got {size!r}.")

    pvc_name = status['create_fn']['pvc-name']
    pvc_patch = {'spec': {'resources': {'requests': {'storage': size}}}}

    api = kubernetes.client.CoreV1Api()
    obj = api.patch_namespaced_persistent_volume_claim(
        namespace=namespace,
        name=pvc_name,
        body=pvc_patch,
    )

    logger.info(f"PVC child is updated: {obj}")


@kopf.on.field('ephemeralvolumeclaims', field='metadata.labels')
def relabel(diff, status, namespace, **kwargs):

    labels_patch = {field[0]: new for op, field, old, new in diff}
    pvc_name = status['create_fn']['pvc-name']
    pvc_patch = {'metadata': {'labels': labels_patch}}

    api = kubernetes.client.CoreV1Api()
    obj = api.patch_namespaced_persistent_volume_claim(
        namespace=namespace,
        name=pvc_name,
        body=pvc_patch,
    )
'''

PVC_YAML = '''
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: "{name}"
  annotations:
    volume.beta.kubernetes.io/storage-class: standard
spec:
  accessModes:
    - ReadWriteOnce
  resources:
    requests:
      storage: "{size}"
'''


def evc(size="1G", labels=None):
    meta = {"name": "my-claim", "namespace": "default", "uid": "evc-uid"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "kopf.dev/v1", "kind": "EphemeralVolumeClaim", "metadata": meta,
            "spec": {"size": size}}


@unittest.skipUnless(importlib.util.find_spec("yaml"), "the walkthrough needs PyYAML")
class EphemeralVolumeClaimTest(KopfTestCase):

    def setUp(self):
        super().setUp()
        warnings.simplefilter("ignore", ResourceWarning)  # the walkthrough's open() is never closed
        self.dir = tempfile.TemporaryDirectory()
        for name, text in (("ephemeral.py", EPHEMERAL), ("pvc.yaml", PVC_YAML)):
            with open(os.path.join(self.dir.name, name), "w") as f:
                f.write(text)
        sys.path.insert(0, self.dir.name)
        self.import_fresh("ephemeral")

    def tearDown(self):
        sys.path.remove(self.dir.name)
        sys.modules.pop("ephemeral", None)
        self.dir.cleanup()
        super().tearDown()

    def test_the_walkthrough(self):
        created = self.host.run("create_fn", evc())
        self.assertEqual(created.result, {"pvc-name": "my-claim"}, created.message)
        pvc = self.host.objects[("", "persistentvolumeclaims", "default", "my-claim")]
        self.assertEqual(pvc["metadata"]["ownerReferences"][0]["uid"], "evc-uid")
        self.assertEqual(pvc["spec"]["resources"]["requests"]["storage"], "1G")

        handled = evc("2G")
        handled["status"] = {"create_fn": created.result}
        updated = self.host.run("update_fn", handled, evc("1G"))
        self.assertEqual(updated.status, "success", updated.message)
        self.assertEqual(pvc["spec"]["resources"]["requests"]["storage"], "1G")  # the store's copy
        pvc = self.host.objects[("", "persistentvolumeclaims", "default", "my-claim")]
        self.assertEqual(pvc["spec"]["resources"]["requests"]["storage"], "2G")

        # kubectl label evc/my-claim application=some-app (the walkthrough's object has a label
        # already: from none at all, Kopf's diff of the field is one item with an empty path)
        before = evc("2G", labels={"owner": "me"})
        labelled = evc("2G", labels={"owner": "me", "application": "some-app"})
        labelled["status"] = handled["status"]
        relabelled = self.host.run("relabel/metadata.labels", labelled, before)
        self.assertEqual(relabelled.status, "success", relabelled.message)
        pvc = self.host.objects[("", "persistentvolumeclaims", "default", "my-claim")]
        self.assertEqual(pvc["metadata"]["labels"], {"application": "some-app"})

    def test_a_missing_size_is_permanent(self):
        res = self.host.run("create_fn", evc(size=None))
        self.assertEqual(res.outcome, {"status": "permanent", "message": "Size must be set. Got None."})


DOCS = '''
import asyncio
import time
import kopf

@kopf.daemon('kopfexamples')
def monitor_kex(stopped, **kwargs):
    while not stopped:
        time.sleep(1.0)
    print("We are done. Bye.")

@kopf.daemon('kopfexamples', cancellation_timeout=1.0)
async def monitor_kex_async(**kwargs):
    try:
        while True:
            await asyncio.sleep(10)
    except asyncio.CancelledError:
        print("We are done. Bye.")

@kopf.daemon('kopfexamples',
             cancellation_backoff=1.0, cancellation_timeout=3.0)
async def monitor_kex_polite(stopped, **kwargs):
    while not stopped:
        await asyncio.sleep(1)

@kopf.index('pods')
def by_label(labels, name, **_):
    return {(label, value): name for label, value in labels.items()}

@kopf.index('pods')
def pod_names(name: str, **_):
    return name

seen = []

@kopf.timer('kex', interval=5)
def tick(by_label: kopf.Index, pod_names: kopf.Index, **_):
    seen.append(list(by_label.get(('label2', 'value2b'), [])))
    seen.append(sorted(pod_names[None]))
'''


class DocsSnippetsTest(KopfTestCase):

    def setUp(self):
        super().setUp()
        self.docs = _load(DOCS, "docs_snippets")

    def test_daemons_end_when_stopped(self):
        self.host.stopped = True
        self.assertEqual(self.host.run("monitor_kex", kex()).status, "success")
        self.host.stopped = False
        self.host.stop_after = 1
        res = self.host.run("monitor_kex_async", kex())
        self.assertEqual(res.status, "success", res.message)
        self.host.sleeps.clear()
        res = self.host.run("monitor_kex_polite", kex())
        self.assertEqual((res.status, len(self.host.sleeps)), ("success", 1))

    def test_indexes(self):
        pods = [("pod1", {"label1": "value1a", "label2": "value2b"}), ("pod2", {"label1": "value1a"}),
                ("pod3", {"label2": "value2b"})]
        for name, labels in pods:
            body = {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": name, "namespace": "ns", "labels": labels}}
            self.host.run("by_label", body)
            self.host.run("pod_names", body)
        self.host.run("tick", kex())
        self.assertEqual(self.docs.seen, [["pod1", "pod3"], ["pod1", "pod2", "pod3"]])


def kex():
    return {"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
            "metadata": {"name": "kex", "namespace": "default"}, "spec": {}}


def _load(source, name):
    module = type(sys)(name)
    module.__file__ = f"<{name}>"
    exec(compile(textwrap.dedent(source), module.__file__, "exec"), module.__dict__)
    return module


if __name__ == "__main__":
    unittest.main()
