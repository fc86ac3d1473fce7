"""A Python test guest whose handlers fail on purpose, one way each (the
Python twin of examples/testguests/misbehave and examples/rust/misbehave):
"loop" spins forever (only the host's loop checks stop it), "sleep" sleeps
an hour in time.sleep (only the host's sleep can end it), "oom" allocates
until the memory limit stops it, "raise" raises an arbitrary exception
(an outcome with Kopf's traceback, not a failure of the module), "flood"
logs without end, "nap" sleeps 10 ms and succeeds, and "ok" succeeds (to
show that the module recovers on a fresh instance).
"""
import time

import kopf

kopf.module('misbehave-python', '0.1.0')

RESOURCE = ('kopf.dev', 'v1', 'kopfexamples')


@kopf.on.create(*RESOURCE, id='loop')
def loop(**_):
    n = 0
    while True:
        n += 1


@kopf.on.create(*RESOURCE, id='sleep')
def sleep(**_):
    time.sleep(3600)
    return {'message': 'woke up after an hour'}


@kopf.on.create(*RESOURCE, id='oom')
def oom(**_):
    hold = []
    while True:
        hold.append(bytearray(8 << 20))


@kopf.on.create(*RESOURCE, id='raise')
def fail(**_):
    raise ValueError("misbehave: deliberate failure")


@kopf.on.create(*RESOURCE, id='flood')
def flood(logger, **_):
    while True:
        logger.info("misbehave: flooding the log " + "x" * 1000)


@kopf.on.create(*RESOURCE, id='nap')
def nap(**_):
    time.sleep(0.01)
    return {'message': 'napped'}


@kopf.on.create(*RESOURCE, id='ok')
def ok(**_):
    return {'message': 'ok'}
