"""Kopf's decorators: ``@kopf.on.create(...)`` and the rest.

Each decorator registers the function as one handler and returns it
unchanged, so one function may carry several decorators (each is its own
handler; changing ones share the function's id, as in Kopf).
"""

from . import _registry, _subhandlers
from ._registry import error_options as _error_options, seconds

__all__ = [
    "startup", "cleanup", "login", "probe", "resume", "create", "update", "delete",
    "field", "event", "timer", "daemon", "index", "validate", "mutate", "subhandler",
    "register",
]


def _decorator(kind, resource, id, param, registry, filters, options):
    reg = registry or _registry.get_default_registry()
    options = dict(options)
    if param is not None:
        options["param"] = _registry._structs.plain(param)

    _registry.build_filters(kind, **filters)  # mistakes raise here, as in Kopf

    def decorator(fn):
        reg.add(kind, fn, id=id, resource=resource, filters=filters, options=options)
        return fn
    return decorator


# --- Activities -----------------------------------------------------------

def startup(*, id=None, param=None, errors=None, timeout=None, retries=None, backoff=None,
            cooldown=None, registry=None):
    """@kopf.on.startup: runs when the host loads the module, before it
    watches (the host retries it until done)."""
    return _decorator("startup", None, id, param, registry, {},
                      _error_options(errors, timeout, retries, backoff, cooldown))


def cleanup(*, id=None, param=None, errors=None, timeout=None, retries=None, backoff=None,
            cooldown=None, registry=None):
    """@kopf.on.cleanup: runs when the host stops serving the module."""
    return _decorator("cleanup", None, id, param, registry, {},
                      _error_options(errors, timeout, retries, backoff, cooldown))


def probe(*, id=None, param=None, errors=None, timeout=None, retries=None, backoff=None,
          cooldown=None, registry=None):
    """@kopf.on.probe: its result is reported under its id by the host's
    liveness endpoint."""
    return _decorator("probe", None, id, param, registry, {},
                      _error_options(errors, timeout, retries, backoff, cooldown))


def login(**_):
    """@kopf.on.login: not served. The host logs in to the cluster itself."""
    def decorator(fn):
        _registry.note(f"@kopf.on.login ({_registry.callable_id(fn)}) is not served: "
                       "the kopf-wasm host logs in to the cluster itself; the handler is ignored")
        return fn
    return decorator


# --- Changing handlers ----------------------------------------------------

def _resource(args, group, version, kind, plural, singular, shortcut, category):
    return _registry.selector(args, group=group, version=version, kind=kind, plural=plural,
                              singular=singular, shortcut=shortcut, category=category)


def resume(*args, group=None, version=None, kind=None, plural=None, singular=None,
           shortcut=None, category=None, id=None, param=None, errors=None, timeout=None,
           retries=None, backoff=None, cooldown=None, deleted=None, labels=None,
           annotations=None, when=None, field=None, value=None, registry=None):
    """@kopf.on.resume: objects found when the operator starts."""
    return _decorator("resume", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value),
                      dict(_error_options(errors, timeout, retries, backoff, cooldown), deleted=bool(deleted)))


def create(*args, group=None, version=None, kind=None, plural=None, singular=None,
           shortcut=None, category=None, id=None, param=None, errors=None, timeout=None,
           retries=None, backoff=None, cooldown=None, labels=None, annotations=None,
           when=None, field=None, value=None, registry=None):
    """@kopf.on.create: objects' creation."""
    return _decorator("create", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value),
                      _error_options(errors, timeout, retries, backoff, cooldown))


def update(*args, group=None, version=None, kind=None, plural=None, singular=None,
           shortcut=None, category=None, id=None, param=None, errors=None, timeout=None,
           retries=None, backoff=None, cooldown=None, labels=None, annotations=None,
           when=None, field=None, value=None, old=None, new=None, registry=None):
    """@kopf.on.update: essential changes (the field's, with field=)."""
    return _decorator("update", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value,
                           old=old, new=new),
                      _error_options(errors, timeout, retries, backoff, cooldown))


def delete(*args, group=None, version=None, kind=None, plural=None, singular=None,
           shortcut=None, category=None, id=None, param=None, errors=None, timeout=None,
           retries=None, backoff=None, cooldown=None, optional=None, requires_finalizer=None,
           labels=None, annotations=None, when=None, field=None, value=None, registry=None):
    """@kopf.on.delete: deletion. The host keeps a finalizer on the objects
    unless optional=True (or requires_finalizer=False)."""
    if requires_finalizer is not None and optional is None:
        optional = not requires_finalizer
    return _decorator("delete", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value),
                      dict(_error_options(errors, timeout, retries, backoff, cooldown), optional=bool(optional)))


def field(*args, field, group=None, version=None, kind=None, plural=None, singular=None,
          shortcut=None, category=None, id=None, param=None, errors=None, timeout=None,
          retries=None, backoff=None, cooldown=None, labels=None, annotations=None, when=None,
          value=None, old=None, new=None, registry=None):
    """@kopf.on.field: changes of one field; the id is "fn/<field>"."""
    return _decorator("field", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value,
                           old=old, new=new),
                      _error_options(errors, timeout, retries, backoff, cooldown))


def event(*args, group=None, version=None, kind=None, plural=None, singular=None,
          shortcut=None, category=None, id=None, param=None, labels=None, annotations=None,
          when=None, field=None, value=None, registry=None):
    """@kopf.on.event: every watch event; its errors are ignored."""
    return _decorator("event", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value), {})


# --- Timers, daemons, indexes ---------------------------------------------

def _delay(name, value):
    if callable(value):
        raise TypeError(f"{name} is a callable: kopf-wasm declares it in the manifest, so give seconds")
    return seconds(name, value)


def timer(*args, group=None, version=None, kind=None, plural=None, singular=None,
          shortcut=None, category=None, id=None, param=None, errors=None, timeout=None,
          retries=None, backoff=None, cooldown=None, interval=None, initial_delay=None,
          sharp=None, idle=None, labels=None, annotations=None, when=None, field=None,
          value=None, registry=None):
    """@kopf.timer: runs every interval seconds for each object."""
    return _decorator("timer", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value),
                      dict(_error_options(errors, timeout, retries, backoff, cooldown),
                           interval=seconds("interval", interval), initialDelay=_delay("initial_delay", initial_delay),
                           idle=seconds("idle", idle), sharp=bool(sharp)))


def daemon(*args, group=None, version=None, kind=None, plural=None, singular=None,
           shortcut=None, category=None, id=None, param=None, errors=None, timeout=None,
           retries=None, backoff=None, cooldown=None, initial_delay=None,
           cancellation_backoff=None, cancellation_timeout=None, cancellation_polling=None,
           labels=None, annotations=None, when=None, field=None, value=None, registry=None):
    """@kopf.daemon: one long-running call per object; it should return
    when the ``stopped`` kwarg says so."""
    return _decorator("daemon", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value),
                      dict(_error_options(errors, timeout, retries, backoff, cooldown),
                           initialDelay=_delay("initial_delay", initial_delay),
                           cancellationBackoff=seconds("cancellation_backoff", cancellation_backoff),
                           cancellationTimeout=seconds("cancellation_timeout", cancellation_timeout),
                           cancellationPolling=seconds("cancellation_polling", cancellation_polling)))


def index(*args, group=None, version=None, kind=None, plural=None, singular=None,
          shortcut=None, category=None, id=None, param=None, errors=None, timeout=None,
          retries=None, backoff=None, cooldown=None, labels=None, annotations=None, when=None,
          field=None, value=None, registry=None):
    """@kopf.index: the result is indexed under the handler's id, which is
    also the name of the kwarg that gives the index to every handler."""
    return _decorator("index", _resource(args, group, version, kind, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value),
                      _error_options(errors, timeout, retries, backoff, cooldown))


# --- Admission webhooks ---------------------------------------------------

def _webhook(kind, args, group, version, kind_, plural, singular, shortcut, category, id, param,
             operation, operations, subresource, persistent, side_effects, ignore_failures,
             labels, annotations, when, field, value, registry):
    if operation is not None:
        operations = [operation] if operations is None else list(operations) + [operation]
    if operations is not None:
        operations = list(operations)
        if not operations:
            raise ValueError("operations=[] selects nothing: omit it for every operation")
    return _decorator(kind, _resource(args, group, version, kind_, plural, singular, shortcut, category),
                      id, param, registry,
                      dict(labels=labels, annotations=annotations, when=when, field=field, value=value),
                      dict(operations=operations, subresource=subresource, persistent=bool(persistent),
                           sideEffects=bool(side_effects), ignoreFailures=bool(ignore_failures)))


def validate(*args, group=None, version=None, kind=None, plural=None, singular=None,
             shortcut=None, category=None, id=None, param=None, operation=None, operations=None,
             subresource=None, persistent=None, side_effects=None, ignore_failures=None,
             labels=None, annotations=None, when=None, field=None, value=None, registry=None):
    """@kopf.on.validate: raise kopf.AdmissionError to deny."""
    return _webhook("validate", args, group, version, kind, plural, singular, shortcut, category, id,
                    param, operation, operations, subresource, persistent, side_effects,
                    ignore_failures, labels, annotations, when, field, value, registry)


def mutate(*args, group=None, version=None, kind=None, plural=None, singular=None,
           shortcut=None, category=None, id=None, param=None, operation=None, operations=None,
           subresource=None, persistent=None, side_effects=None, ignore_failures=None,
           labels=None, annotations=None, when=None, field=None, value=None, registry=None):
    """@kopf.on.mutate: the ``patch`` kwarg is the mutation."""
    return _webhook("mutate", args, group, version, kind, plural, singular, shortcut, category, id,
                    param, operation, operations, subresource, persistent, side_effects,
                    ignore_failures, labels, annotations, when, field, value, registry)


# --- Sub-handlers ---------------------------------------------------------

subhandler = _subhandlers.subhandler
this = _subhandlers.subhandler  # Kopf's old name of @kopf.subhandler
register = _subhandlers.register
