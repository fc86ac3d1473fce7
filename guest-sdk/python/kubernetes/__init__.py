"""A small stand-in for the official Kubernetes Python client inside a
kopf-wasm module: the common typed calls with dict bodies, through the
host's kube_request (permission-checked like every module's request).

    import kubernetes
    api = kubernetes.client.CoreV1Api()
    obj = api.create_namespaced_persistent_volume_claim(namespace=namespace, body=data)
    return {"pvc-name": obj.metadata.name}

What it covers is listed in guest-sdk/python/README.md; anything else
raises AttributeError naming what to use instead (kopf.kube).
"""

from . import client, config  # noqa: F401

__version__ = "0.0.0+kopf-wasm"
