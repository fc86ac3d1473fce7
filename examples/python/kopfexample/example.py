"""Kopf's minimal example operator, as a kopf-wasm Python module.

The same three handlers as examples/kopfexample (Go): each logs a line and
returns a message, which the host stores under status.<handler id>.
Nothing here is specific to kopf-wasm: it runs under Kopf unchanged.
"""
import kopf


@kopf.on.create('kopfexamples')
def create_fn(spec, logger, **kwargs):
    logger.info(f"And here we are! Creating: {dict(spec)}")
    return {'message': 'hello world'}  # will be the new status


@kopf.on.update('kopfexamples')
def update_fn(diff, logger, **kwargs):
    logger.info(f"Updating: diff={len(diff)}")
    return {'message': 'updated'}


@kopf.on.delete('kopfexamples')
def delete_fn(name, logger, **kwargs):
    logger.info(f"Deleting: name={name}")
    return {'message': 'deleted'}
