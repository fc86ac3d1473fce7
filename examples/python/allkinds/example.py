"""One operator with every handler kind (examples/allkinds.md), with Kopf's own API.

The same outcomes as examples/allkinds (Go) and its Rust and AssemblyScript
twins; internal/polyglottest's TestAllKinds runs them all on the real control
plane. Nothing here is specific to kopf-wasm: it runs under Kopf unchanged.
"""
import kopf


@kopf.on.startup()
def startup_fn(logger, **kwargs):
    logger.info("allkinds started")


@kopf.on.cleanup()
def cleanup_fn(logger, **kwargs):
    logger.info("allkinds cleaned up")


@kopf.on.create('kopfexamples')
def create_fn(body, **kwargs):
    kopf.info(body, reason='AllKinds', message='created')

    @kopf.subhandler(id='a')
    def a(**kwargs):
        return 'sub a'

    @kopf.subhandler(id='b')
    def b(**kwargs):
        return 'sub b'


def not_skipped(value, **kwargs):
    return value != 'yes'


@kopf.on.update('kopfexamples', labels={'skip': not_skipped})
def update_fn(new, **kwargs):
    return {'field': new.get('spec', {}).get('field')}


@kopf.on.field('kopfexamples', field='spec.field')
def field_fn(old, new, **kwargs):
    return {'old': old, 'new': new}


@kopf.on.delete('kopfexamples')
def delete_fn(name, logger, **kwargs):
    logger.info(f"deleting {name}")


@kopf.on.resume('kopfexamples')
def resume_fn(**kwargs):
    return 'resumed'


@kopf.on.event('kopfexamples')
def event_fn(type, name, logger, **kwargs):
    logger.info(f"event {type} {name}")


@kopf.timer('kopfexamples', interval=1)
def timer_fn(status, patch, **kwargs):
    if not status.get('ticked'):
        patch.setdefault('status', {})['ticked'] = True


@kopf.daemon('kopfexamples')
def daemon_fn(name, stopped, logger, **kwargs):
    logger.info(f"daemon started {name}")
    while not stopped:
        stopped.wait(1)
    logger.info(f"daemon stopped {name}")


@kopf.index('kopfexamples')
def by_field(spec, name, **kwargs):
    return {spec.get('field'): name}


@kopf.on.probe(id='index_size')
def index_size(by_field, **kwargs):
    return len(by_field)


@kopf.on.validate('kopfexamples')
def validate_fn(spec, **kwargs):
    if spec.get('field') == 'forbidden':
        raise kopf.AdmissionError("field must not be forbidden")


@kopf.on.mutate('kopfexamples')
def mutate_fn(patch, **kwargs):
    patch.setdefault('metadata', {}).setdefault('labels', {})['allkinds-mutated'] = 'yes'
