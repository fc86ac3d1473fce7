"""The module of abi/testdata/manifest.json, written as a Kopf author would."""

import kopf

kopf.module("kopfexample", "1.0.0")
kopf.permit("", "pods", "get", "list", "create")
kopf.allow_hosts("api.example.com")


@kopf.on.create("kopf.dev", "v1", "kopfexamples", retries=3, backoff=5, param={"greeting": "hello"})
def create_fn(param, **_):
    return {"message": param["greeting"]}


@kopf.on.update("kopf.dev", "v1", "kopfexamples", labels={"app": "demo", "skip": kopf.ABSENT})
def update_fn(**_):
    pass


@kopf.on.delete("kopf.dev", "v1", "kopfexamples", errors=kopf.ErrorsMode.PERMANENT, timeout=60)
def delete_fn(**_):
    pass


@kopf.on.field("kopf.dev", "v1", "kopfexamples", field="spec.field",
               annotations={"owner": kopf.PRESENT}, new=kopf.PRESENT)
def field_fn(**_):
    pass


@kopf.timer("kopf.dev", "v1", "kopfexamples", interval=10, idle=5, sharp=True)
def ping(**_):
    pass


@kopf.daemon("v1", "pods", initial_delay=1, cancellation_timeout=3,
             when=lambda spec, **_: spec.get("nodeName") is not None)
def monitor(stopped, **_):
    while not stopped:
        stopped.wait(10)


@kopf.on.validate("kopf.dev", "kopfexamples", operations=["CREATE", "UPDATE"])
def check(spec, warnings, **_):
    warnings.append("field is deprecated")
    if not spec.get("field"):
        raise kopf.AdmissionError("spec.field must not be empty", code=422)


@kopf.on.startup()
def configure(**_):
    pass
