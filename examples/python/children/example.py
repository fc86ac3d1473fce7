"""The children example (examples/children in Go, and in Rust and
AssemblyScript), written with Kopf's own API: a ConfigMap per KopfExample,
adopted; a field handler that keeps it in sync; a timer that counts.

Only the Kubernetes client lines differ from a Kopf operator: kopf-wasm's
`kubernetes` module is a small shim of the official client that goes
through the host (and its permission checks).
"""
import kopf
import kubernetes

kopf.permit('', 'configmaps', 'create', 'patch')


def text(value):
    return '' if value is None else str(value)


@kopf.on.create('kopfexamples')
def create_child(spec, name, namespace, logger, **kwargs):
    child = f"{name}-child"
    cm = {
        'apiVersion': 'v1', 'kind': 'ConfigMap',
        'metadata': {'name': child},
        'data': {'field': text(spec.get('field'))},
    }
    kopf.adopt(cm)
    api = kubernetes.client.CoreV1Api()
    try:
        api.create_namespaced_config_map(namespace=namespace, body=cm)
    except kubernetes.client.exceptions.ApiException as e:
        if e.status != 409:  # already exists: created by an earlier attempt
            raise
    logger.info(f"child created: configmap={child}")
    return {'child': child}


@kopf.on.field('kopfexamples', field='spec.field')
def sync(new, name, namespace, logger, **kwargs):
    value = text(new)
    api = kubernetes.client.CoreV1Api()
    try:
        api.patch_namespaced_config_map(name=f"{name}-child", namespace=namespace, body={'data': {'field': value}})
    except kubernetes.client.exceptions.ApiException as e:
        if e.status == 404:
            raise kopf.TemporaryError("the child does not exist yet", delay=1)
        raise
    logger.info(f"child synced: field={value}")
    return {'field': value}


@kopf.timer('kopfexamples', interval=1)
def heartbeat(status, **kwargs):
    return {'beats': status.get('heartbeat', {}).get('beats', 0) + 1}
