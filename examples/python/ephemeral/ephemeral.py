"""Kopf's tutorial operator, EphemeralVolumeClaim (Kopf's docs,
"Walkthrough"), as it stands at the end of the walkthrough: a PVC per EVC
from a template, adopted so that it goes with its EVC; its size and
labels kept in sync.

The handlers are Kopf's text. The relabelling handler is the walkthrough's
old/new version: its last, diff-based version raises IndexError on an
object's first labels, under Kopf as here (the diff of a field that was
absent is one ('add', (), None, {...}) item, with no key to index). What
differs, and only because the module runs in a sandbox: the kopf.permit line (a module declares the Kubernetes
requests it makes; the host refuses any other), and `kubernetes` is
kopf-wasm's shim of the official client, whose calls go through the host.
"""
import os
import kopf
import kubernetes
import yaml

kopf.permit('', 'persistentvolumeclaims', 'create', 'patch')


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
def relabel(old, new, status, namespace, **kwargs):

    pvc_name = status['create_fn']['pvc-name']
    pvc_patch = {'metadata': {'labels': new}}

    api = kubernetes.client.CoreV1Api()
    obj = api.patch_namespaced_persistent_volume_claim(
        namespace=namespace,
        name=pvc_name,
        body=pvc_patch,
    )
