"""Kopf's documented handler snippets, as Kopf's docs write them, run
through kopf.testing.Host (issue 30, item 7).

Each class is one section of Kopf's docs. A snippet's code is Kopf's but
for its Kubernetes-client lines and kopf.permit() lines, each marked with
a "kopf-wasm:" comment. Snippets that cannot run in a kopf-wasm module are
listed in docs/python-kopf-docs.md with what to do instead.
"""

import ast
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import textwrap
import unittest
import unittest.mock
import warnings

from helpers import KopfTestCase, example

import kopf


def load(source, name="docs_snippet"):
    """Runs a snippet as a module of its own, as the build imports the
    author's files; its decorators fill the test's registry."""
    module = type(sys)(name)
    module.__file__ = f"/{name}.py"
    module.kopf = kopf  # the docs' snippets without `import kopf` continue one that has it
    exec(compile(textwrap.dedent(source), module.__file__, "exec"), module.__dict__)
    return module


def kex(name="kopf-example-1", **kw):
    return example(name=name, **kw)


def pod(name, namespace="ns", labels=None, containers=()):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": "uid-" + name,
                         "labels": labels or {}},
            "spec": {"containers": [{"name": c} for c in containers]}}


class DocsTestCase(KopfTestCase):

    def ids(self):
        return [h.id for h in self.registry.handlers]

    def printed(self, fn, *args, **kwargs):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            res = fn(*args, **kwargs)
        return res, out.getvalue()

    def ok(self, res):
        self.assertEqual(res.status, "success", res.message)
        return res

    def messages(self, res):
        return [log.get("message") for log in res.logs]


PVC_YAML = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: "{name}"
spec:
  resources:
    requests:
      storage: "{size}"
"""


def evc(size="1G", labels=None):
    meta = {"name": "my-claim", "namespace": "default", "uid": "evc-uid", "labels": labels or {}}
    return {"apiVersion": "kopf.dev/v1", "kind": "EphemeralVolumeClaim", "metadata": meta,
            "spec": {"size": size}, "status": {"create_fn": {"pvc-name": "my-claim"}}}


@unittest.skipUnless(importlib.util.find_spec("yaml"), "the walkthrough needs PyYAML")
class WalkthroughTest(DocsTestCase):
    """Walkthrough: the first steps (the final operator runs in test_examples)."""

    def setUp(self):
        super().setUp()
        self.dir = tempfile.TemporaryDirectory()
        with open(os.path.join(self.dir.name, "pvc.yaml"), "w") as f:
            f.write(PVC_YAML)
        self.addCleanup(self.dir.cleanup)

    def load_here(self, source):
        module = type(sys)("ephemeral")
        module.__file__ = os.path.join(self.dir.name, "ephemeral.py")
        exec(compile(textwrap.dedent(source), module.__file__, "exec"), module.__dict__)
        return module

    def test_the_first_handler(self):
        load('''
        import kopf
        import logging

        @kopf.on.create('ephemeralvolumeclaims')
        def create_fn(body, **kwargs):
            logging.info(f"A handler is called with body: {body}")
        ''')
        res = self.ok(self.host.run("create_fn", evc()))
        self.assertTrue(self.messages(res)[0].startswith("A handler is called with body: "), self.messages(res))

    def test_creating_the_child(self):
        warnings.simplefilter("ignore", ResourceWarning)  # the walkthrough's open() is never closed
        self.load_here('''
        import os
        import kopf
        import kubernetes
        import yaml

        kopf.permit("", "persistentvolumeclaims", "create")  # kopf-wasm: what the handler may request

        @kopf.on.create('ephemeralvolumeclaims')
        def create_fn(spec, name, namespace, logger, **kwargs):

            size = spec.get('size')
            if not size:
                raise kopf.PermanentError(f"Size must be set. Got {size!r}.")

            path = os.path.join(os.path.dirname(__file__), 'pvc.yaml')
            tmpl = open(path, 'rt').read()
            text = tmpl.format(name=name, size=size)
            data = yaml.safe_load(text)

            api = kubernetes.client.CoreV1Api()
            obj = api.create_namespaced_persistent_volume_claim(
                namespace=namespace,
                body=data,
            )

            logger.info(f"PVC child is created: {obj}")
        ''')
        res = self.ok(self.host.run("create_fn", evc()))
        self.assertIn(("", "persistentvolumeclaims", "default", "my-claim"), self.host.objects)
        self.assertTrue(self.messages(res)[0].startswith("PVC child is created: "))

    def test_relabelling_with_old_and_new(self):
        self.load_here('''
        import kopf
        import kubernetes

        kopf.permit("", "persistentvolumeclaims", "patch")  # kopf-wasm: what the handler may request

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
        ''')
        self.host.objects[("", "persistentvolumeclaims", "default", "my-claim")] = {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "my-claim", "namespace": "default"}}
        self.ok(self.host.run("relabel/metadata.labels", evc(labels={"a": "b"}), evc(labels={"a": "c"})))
        pvc = self.host.objects[("", "persistentvolumeclaims", "default", "my-claim")]
        self.assertEqual(pvc["metadata"]["labels"], {"a": "b"})


class HandlersTest(DocsTestCase):
    """Handlers: registering, event-watching, state-changing, resuming,
    field handlers, sub-handlers."""

    def test_registering(self):
        load('''
        import kopf

        @kopf.on.create('kopfexamples')
        def my_handler(spec, **_):
            pass
        ''')
        self.assertIsNone(self.ok(self.host.run("my_handler", kex())).result)

    def test_registering_an_instance_method(self):
        load('''
        import kopf

        class MyCls:
            def my_handler(self, spec, **kwargs):
                print(repr(self))

        instance = MyCls()
        kopf.on.create('kopfexamples')(instance.my_handler)
        ''')
        res, out = self.printed(self.host.run, "MyCls.my_handler", kex())
        self.ok(res)
        self.assertIn("MyCls object", out)

    def test_event_watching(self):
        load('''
        import kopf

        @kopf.on.event('kopfexamples')
        def my_handler(event, **_):
            pass
        ''')
        self.ok(self.host.run("my_handler", kex(), type="ADDED"))

    def test_state_changing(self):
        load('''
        import kopf

        @kopf.on.create('kopfexamples')
        def my_handler(spec, **_):
            pass

        @kopf.on.update('kopfexamples')
        def my_handler(spec, old, new, diff, **_):
            pass

        @kopf.on.delete('kopfexamples')
        def my_handler(spec, **_):
            pass
        ''')
        kinds = sorted(h.kind for h in self.registry.handlers)
        self.assertEqual(kinds, ["create", "delete", "update"])
        self.ok(self.host.run("my_handler", kex(size=2), kex(size=1), kind="update"))
        self.ok(self.host.run("my_handler", kex(), kind="delete"))

    def test_resuming(self):
        load('''
        @kopf.on.resume('kopfexamples')
        @kopf.on.create('kopfexamples')
        def my_handler(spec, **_):
            pass

        @kopf.on.resume('kopfexamples', deleted=True)
        def my_handler2(spec, **_):  # the docs' my_handler, another snippet: renamed apart
            pass
        ''')
        self.ok(self.host.run("my_handler", kex(), kind="resume"))
        self.ok(self.host.run("my_handler", kex(), kind="create"))
        self.assertTrue(self.host.spec("my_handler2").options.get("deleted"))

    def test_resuming_with_tasks(self):
        # As written, the create/resume handler reads `name` it does not take:
        # a NameError in Kopf too, retried as any error.
        load('''
        import asyncio
        TASKS = {}

        async def some_coroutine(spec):
            pass

        @kopf.on.delete('kopfexamples')
        async def my_handler(spec, name, **_):
            if name in TASKS:
                TASKS[name].cancel()

        @kopf.on.resume('kopfexamples')
        @kopf.on.create('kopfexamples')
        def my_handler(spec, **_):
            if name not in TASKS:
                TASKS[name] = asyncio.create_task(some_coroutine(spec))
        ''')
        res = self.host.run("my_handler", kex(), kind="create")
        self.assertEqual((res.status, res.message), ("error", "NameError: name 'name' is not defined"))
        self.ok(self.host.run("my_handler", kex(), kind="delete"))

    def test_field_handler(self):
        load('''
        import kopf

        @kopf.on.field('kopfexamples', field='spec.somefield')
        def somefield_changed(old, new, **_):
            pass
        ''')
        self.ok(self.host.run("somefield_changed/spec.somefield", kex(somefield=2), kex(somefield=1)))
        with self.assertRaises(kopf.testing.FilteredOut):
            self.host.run("somefield_changed/spec.somefield", kex(size=2), kex(size=1))

    def test_subhandlers_with_execute(self):
        # The docs' snippet has a stray one-space indent before `await`; it is
        # fixed here, as Python refuses it in Kopf too.
        mod = load('''
        import functools
        import kopf

        seen = []

        @kopf.on.create('kopfexamples')
        async def create_fn(spec, **_):
            fns = {}

            for item in spec.get('items', []):
                fns[item] = functools.partial(handle_item, item=item)

            await kopf.execute(fns=fns)

        def handle_item(item, *, spec, **_):
            seen.append(item)
        ''')
        results = self.host.run_cycles("create_fn", kex(items=["a", "b"]))
        self.assertEqual(results[-1].status, "success", results[-1].message)
        self.assertEqual(sorted(mod.seen), ["a", "b"])

    def test_subhandlers_with_decorator(self):
        load('''
        import kopf

        @kopf.on.create('kopfexamples')
        def create_fn(spec, **_):

            for item in spec.get('items', []):

                @kopf.subhandler(id=item)
                def handle_item(item=item, **_):
                    pass
        ''')
        results = self.host.run_cycles("create_fn", kex(items=["a", "b"]))
        self.assertEqual(results[-1].status, "success", results[-1].message)
        self.assertEqual(sorted(s["id"] for s in results[0].subhandlers), ["create_fn/a", "create_fn/b"])


class DaemonsTest(DocsTestCase):
    """Daemons: spawning, termination, timeouts, safe sleep, postponing,
    restarting, fields access, results, errors, filtering."""

    def test_spawning(self):
        # The sync daemon's time.sleep() is not woken by the stop (README):
        # the host stops it after the sleep.
        load('''
        import asyncio
        import time
        import kopf

        @kopf.daemon('kopfexamples')
        async def monitor_kex_async(**kwargs):
            while True:
                ...  # check something
                await asyncio.sleep(10)

        @kopf.daemon('kopfexamples')
        def monitor_kex_sync(stopped, **kwargs):
            while not stopped:
                ...  # check something
                time.sleep(10)
        ''')
        self.host.stop_after = 2
        self.ok(self.host.run("monitor_kex_async", kex()))
        self.assertEqual([round(s) for s in self.host.sleeps], [10, 10])
        self.host.stopped = True
        self.ok(self.host.run("monitor_kex_sync", kex()))

    def test_termination(self):
        load('''
        import asyncio
        import kopf

        @kopf.daemon('kopfexamples')
        def monitor_kex(stopped, **kwargs):
            while not stopped:
                time.sleep(1.0)
            print("We are done. Bye.")
        ''')
        # As written, `time` is not imported: a NameError in Kopf too.
        res = self.host.run("monitor_kex", kex())
        self.assertEqual((res.status, res.message), ("error", "NameError: name 'time' is not defined"))
        self.host.stopped = True
        res, out = self.printed(self.host.run, "monitor_kex", kex())
        self.assertEqual(out, "We are done. Bye.\n")

    def test_cancellation(self):
        load('''
        import asyncio
        import kopf

        @kopf.daemon('kopfexamples', cancellation_timeout=1.0)
        async def monitor_kex(**kwargs):
            try:
                while True:
                    await asyncio.sleep(10)
            except asyncio.CancelledError:
                print("We are done. Bye.")
        ''')
        self.host.stop_after = 1
        res, out = self.printed(self.host.run, "monitor_kex", kex())
        self.ok(res)
        self.assertEqual(out, "We are done. Bye.\n")
        self.assertEqual(self.host.spec("monitor_kex").options.get("cancellationTimeout"), 1.0)

    def test_timeouts(self):
        load('''
        import asyncio
        import kopf

        @kopf.daemon('kopfexamples',
                     cancellation_backoff=1.0, cancellation_timeout=3.0)
        async def monitor_kex(stopped, **kwargs):
            while not stopped:
                await asyncio.sleep(1)
        ''')
        self.host.stop_after = 3
        self.ok(self.host.run("monitor_kex", kex()))
        self.assertEqual([round(s) for s in self.host.sleeps], [1, 1, 1])

    def test_safe_sleep(self):
        load('''
        import kopf

        @kopf.daemon('kopfexamples')
        def monitor_kex(stopped, **kwargs):
            while not stopped:
                stopped.wait(10)
        ''', "sync_sleep")
        self.host.stop_after = 2
        self.ok(self.host.run("monitor_kex", kex()))
        self.assertEqual(self.host.sleeps, [10, 10])

    def test_safe_sleep_async(self):
        load('''
        import kopf

        @kopf.daemon('kopfexamples')
        async def monitor_kex(stopped, **kwargs):
            while not stopped:
                await stopped.wait(10)
        ''')
        self.host.stop_after = 1
        self.ok(self.host.run("monitor_kex", kex()))
        self.assertEqual(self.host.sleeps, [10])

    def test_postponing(self):
        load('''
        import asyncio
        import kopf

        @kopf.daemon('kopfexamples', initial_delay=30)
        async def monitor_kex(stopped, **kwargs):
            while True:
                await asyncio.sleep(1.0)
        ''')
        self.assertEqual(self.host.spec("monitor_kex").options.get("initialDelay"), 30)
        self.host.stop_after = 1
        self.ok(self.host.run("monitor_kex", kex()))

    def test_restarting(self):
        load('''
        import asyncio
        import kopf

        @kopf.daemon('kopfexamples')
        async def monitor_kex(stopped, **kwargs):
            await asyncio.sleep(10.0)
            raise kopf.TemporaryError("Need to restart.", delay=10)
        ''')
        res = self.host.run("monitor_kex", kex())
        self.assertEqual((res.status, res.message, res.delay), ("temporary", "Need to restart.", 10))

    def test_fields_access(self):
        load('''
        import random
        import time
        import kopf

        @kopf.daemon('kopfexamples')
        def monitor_kex(stopped, logger, body, spec, **kwargs):
            while not stopped:
                logger.info(f"FIELD={spec['field']}")
                time.sleep(1)

        @kopf.timer('kopfexamples', interval=2.5)
        def modify_kex_sometimes(patch, **kwargs):
            patch.spec['field'] = random.randint(0, 100)
        ''')
        res = self.ok(self.host.run("modify_kex_sometimes", kex()))
        self.assertIn(res.patch["spec"]["field"], range(0, 101))
        # A sync daemon checks `stopped` between its time.sleep()s: stop it after one round.
        with unittest.mock.patch("time.sleep", lambda s: setattr(self.host, "stopped", True)):
            res = self.ok(self.host.run("monitor_kex", kex(field=7)))
        self.assertIn("FIELD=7", self.messages(res))

    def test_results(self):
        load('''
        import asyncio
        import kopf

        @kopf.daemon('kopfexamples')
        async def monitor_kex(stopped, **kwargs):
            await asyncio.sleep(10.0)
            return {'finished': True}
        ''')
        self.assertEqual(self.ok(self.host.run("monitor_kex", kex())).result, {"finished": True})

    def test_errors(self):
        load('''
        @kopf.daemon('kopfexamples',
                     errors=kopf.ErrorsMode.TEMPORARY, backoff=1, retries=10)
        def monitor_kex(retry, **_):
            if retry < 3:
                raise kopf.TemporaryError("I'll be back!", delay=1)
            elif retry < 5:
                raise EnvironmentError("Something happened!")
            else:
                raise kopf.PermanentError("Bye-bye!")
        ''')
        self.assertEqual(self.host.run("monitor_kex", kex(), retry=0).outcome,
                         {"status": "temporary", "message": "I'll be back!", "delay": 1})
        res = self.host.run("monitor_kex", kex(), retry=3)
        self.assertEqual((res.status, res.message), ("error", "OSError: Something happened!"))
        self.assertEqual(self.host.run("monitor_kex", kex(), retry=5).status, "permanent")

    def test_filtering(self):
        load('''
        import time
        import kopf

        @kopf.daemon('kopfexamples',
                     annotations={'some-annotation': 'some-value'},
                     labels={'some-label': 'some-value'},
                     when=lambda name, **_: 'some' in name)
        def monitor_selected_kexes(stopped, **kwargs):
            while not stopped:
                time.sleep(1)
        ''')
        self.host.stopped = True
        good = dict(labels={"some-label": "some-value"}, annotations={"some-annotation": "some-value"})
        self.ok(self.host.run("monitor_selected_kexes", kex("some-kex", **good)))
        with self.assertRaises(kopf.testing.FilteredOut):
            self.host.run("monitor_selected_kexes", kex("other-kex", **good))
        with self.assertRaises(kopf.testing.FilteredOut):
            self.host.run("monitor_selected_kexes", kex("some-kex"))


class TimersTest(DocsTestCase):
    """Timers: intervals, sharpness, idling, postponing, combined timing,
    errors, results, filtering."""

    def test_timing_options(self):
        load('''
        import asyncio
        import time
        import kopf

        @kopf.timer('kopfexamples', interval=1.0)
        def ping_kex(spec, **kwargs):
            pass

        @kopf.timer('kopfexamples', interval=1.0, sharp=True)
        def sharp_kex(spec, **kwargs):
            time.sleep(0.3)

        @kopf.timer('kopfexamples', idle=10)
        def idle_kex(spec, **kwargs):
            print(f"FIELD={spec['field']}")

        @kopf.timer('kopfexamples', idle=10, interval=1)
        def idle_interval_kex(spec, **kwargs):
            print(f"FIELD={spec['field']}")

        @kopf.timer('kopfexamples', interval=1, initial_delay=5)
        def delayed_kex(spec, **kwargs):
            print(f"FIELD={spec['field']}")

        @kopf.timer('kopfexamples',
                    initial_delay=60, interval=10, idle=600)
        def combined_kex(spec, **kwargs):
            pass
        ''')
        # One snippet per Kopf section, renamed apart here (they all say ping_kex).
        opts = {h.id: h.options for h in self.registry.handlers}
        self.assertEqual(opts["sharp_kex"].get("sharp"), True)
        self.assertEqual(opts["idle_kex"].get("idle"), 10)
        self.assertEqual((opts["combined_kex"].get("initialDelay"), opts["combined_kex"].get("interval"),
                          opts["combined_kex"].get("idle")), (60, 10, 600))
        self.ok(self.host.run("ping_kex", kex()))
        self.ok(self.host.run("sharp_kex", kex()))
        for id in ("idle_kex", "idle_interval_kex", "delayed_kex"):
            res, out = self.printed(self.host.run, id, kex(field="x"))
            self.ok(res)
            self.assertEqual(out, "FIELD=x\n")

    def test_errors(self):
        load('''
        import kopf

        @kopf.timer('kopfexamples',
                    errors=kopf.ErrorsMode.TEMPORARY, interval=10, backoff=5)
        def monitor_kex_by_time(name, retry, **kwargs):
            if retry < 3:
                raise Exception()
        ''')
        res = self.host.run("monitor_kex_by_time", kex(), retry=0)
        self.assertEqual(res.status, "error")  # the host retries it after backoff=5 (errors=TEMPORARY)
        self.assertEqual(self.host.spec("monitor_kex_by_time").options.get("backoff"), 5)
        self.ok(self.host.run("monitor_kex_by_time", kex(), retry=3))

    def test_results(self):
        load('''
        import random
        import kopf

        @kopf.timer('kopfexamples', interval=10)
        def ping_kex(spec, **kwargs):
            return random.randint(0, 100)
        ''')
        self.assertIn(self.ok(self.host.run("ping_kex", kex())).result, range(0, 101))

    def test_filtering(self):
        load('''
        import kopf

        @kopf.timer('kopfexamples', interval=10,
                    annotations={'some-annotation': 'some-value'},
                    labels={'some-label': 'some-value'},
                    when=lambda name, **_: 'some' in name)
        def ping_kex(spec, **kwargs):
            pass
        ''')
        good = dict(labels={"some-label": "some-value"}, annotations={"some-annotation": "some-value"})
        self.ok(self.host.run("ping_kex", kex("handsome", **good)))
        self.assertTrue(self.host.why_not("ping_kex", kex("handsome")))


class ArgumentsTest(DocsTestCase):
    """Arguments: parametrization."""

    def test_parametrization(self):
        # As written, count_updates reads `body` it does not take (a NameError
        # in Kopf too) and child_updated calls the author's patch_parent().
        mod = load('''
        import kopf

        parents = []
        def patch_parent(patch):
            parents.append(patch)

        @kopf.on.create('KopfExample', param=1000)
        @kopf.on.resume('KopfExample', param=100)
        @kopf.on.update('KopfExample', param=10, field='spec.field')
        @kopf.on.update('KopfExample', param=1, field='spec.items')
        def count_updates(param, patch, **_):
            patch.status['counter'] = body.status.get('counter', 0) + param

        @kopf.on.update('Child1', param='first', field='status.done', new=True)
        @kopf.on.update('Child2', param='second', field='status.done', new=True)
        def child_updated(param, patch, **_):
            patch_parent({'status': {param: {'done': True}}})
        ''')
        res = self.host.run("count_updates", kex(), kind="create")
        self.assertEqual(res.request["param"], 1000)
        self.assertEqual((res.status, res.message), ("error", "NameError: name 'body' is not defined"))
        child = {"apiVersion": "kopf.dev/v1", "kind": "Child1", "metadata": {"name": "c", "namespace": "ns"},
                 "status": {"done": True}}
        old = dict(child, status={"done": False})
        handlers = [h for h in self.registry.handlers if h.id.startswith("child_updated")]
        self.assertEqual(sorted(h.options.get("param") for h in handlers), ["first", "second"])
        # status.done is in the diff-base because a handler's field is (Kopf's extra fields): the host calls it.
        self.assertEqual(self.host.why_not(handlers[0].id, child, old), "")
        self.ok(self.host.run(handlers[0].id, child, old, kind="update"))
        self.assertIn(mod.parents[0], ({"status": {"first": {"done": True}}},
                                       {"status": {"second": {"done": True}}}))

    def test_parametrization_of_one_function(self):
        load('''
        import kopf

        @kopf.on.update('KopfExample', param=10, field='spec.field')
        @kopf.on.update('KopfExample', param=1, field='spec')
        def fn(param, **_):
            pass
        ''')
        self.assertEqual(sorted(h.options.get("param") for h in self.registry.handlers), [1, 10])


class AsyncAwaitTest(DocsTestCase):
    """Async/Await."""

    def test_async_handler(self):
        load('''
        import asyncio
        import kopf

        @kopf.on.create('kopfexamples')
        async def create_fn(spec, **_):
            await asyncio.sleep(1.0)
        ''')
        self.ok(self.host.run("create_fn", kex()))


class ResourceSpecificationTest(DocsTestCase):
    """Resource specification: every documented form of a selector."""

    SELECTORS = [
        ('kopf.dev', 'v1', 'kopfexamples'), ('kopf.dev/v1', 'kopfexamples'), ('apps', 'v1', 'deployments'),
        ('apps/v1', 'deployments'), ('', 'v1', 'pods'), ('kopf.dev', 'kopfexamples'), ('apps', 'deployments'),
        ('kopfexamples.kopf.dev',), ('deployments.apps',), ('v1', 'pods'), ('kopfexamples',), ('deployments',),
        ('pods',), ('kopfexample',), ('KopfExample',), ('kex',), ('StatefulSet',), ('pod',), ('v1', 'events'),
        ('pods.v1',), ('pods.metrics.k8s.io',), ('metrics.k8s.io', 'pods'),
    ]

    def test_every_form(self):
        # Two forms of one selector on one function: one handler, as Kopf serves it once.
        load('''
        @kopf.on.event('kopf.dev', 'v1', 'kopfexamples')
        @kopf.on.event('kopf.dev/v1', 'kopfexamples')
        def fn(**_):
            pass
        ''')
        self.assertEqual([h.id for h in self.registry.handlers], ["fn"])
        self.registry.handlers.clear()
        load('''
        @kopf.on.event('kopf.dev', 'v1', 'kopfexamples')
        @kopf.on.event('kopf.dev/v1', 'kopfexamples')
        @kopf.on.event('apps', 'v1', 'deployments')
        @kopf.on.event('apps/v1', 'deployments')
        @kopf.on.event('', 'v1', 'pods')
        def fn1(**_):
            pass

        @kopf.on.event('kopf.dev', 'kopfexamples')
        @kopf.on.event('apps', 'deployments')
        def fn2(**_):
            pass

        @kopf.on.event('kopfexamples.kopf.dev')
        @kopf.on.event('deployments.apps')
        def fn3(**_):
            pass

        @kopf.on.event('v1', 'pods')
        @kopf.on.event('', 'v1', 'pods')
        def fn4(**_):
            pass

        @kopf.on.event('kopfexamples')
        @kopf.on.event('deployments')
        @kopf.on.event('pods')
        def fn5(**_):
            pass

        @kopf.on.event('kopfexamples')
        @kopf.on.event('kopfexample')
        @kopf.on.event('KopfExample')
        @kopf.on.event('kex')
        @kopf.on.event('StatefulSet')
        @kopf.on.event('deployments')
        @kopf.on.event('pod')
        def fn6(**_):
            pass

        @kopf.on.event(kind='KopfExample')
        @kopf.on.event(plural='kopfexamples')
        @kopf.on.event(singular='kopfexample')
        @kopf.on.event(shortcut='kex')
        def fn7(**_):
            pass

        @kopf.on.event(category='all')
        def fn8(**_):
            pass

        @kopf.on.event('kopf.dev', 'v1', kopf.EVERYTHING)
        @kopf.on.event('kopf.dev/v1', kopf.EVERYTHING)
        @kopf.on.event('kopf.dev', kopf.EVERYTHING)
        def fn9(**_):
            pass

        @kopf.on.event(kopf.EVERYTHING)
        def fn10(**_):
            pass

        @kopf.on.event(kopf.EVERYTHING, labels={'only-this': kopf.PRESENT})
        def fn11(**_):
            pass

        @kopf.on.event('v1', 'events')
        def fn12(**_):
            pass

        @kopf.on.event('pods')  # NOT SO GOOD, ambiguous, though works
        @kopf.on.event('pods.v1')  # GOOD, specific
        @kopf.on.event('v1', 'pods')  # GOOD, specific
        @kopf.on.event('pods.metrics.k8s.io')  # GOOD, specific
        @kopf.on.event('metrics.k8s.io', 'pods')  # GOOD, specific
        def fn(**_):
            pass
        ''')
        # (fn1..fn12 stand for the docs' fn: one snippet each.) One function under
        # several selectors of one kind is one id with an entry per selector; two
        # forms of one selector ('pods.v1' and 'v1', 'pods') are one entry.
        selectors = [h.resource for h in self.registry.handlers]
        self.assertEqual(len(selectors), 31)  # 37 decorators, 6 of them a second form of a selector above
        self.assertEqual(len({h.id for h in self.registry.handlers}), 13)
        self.assertIn({"group": "metrics.k8s.io", "name": "pods"},
                      [{k: v for k, v in s.items() if v} for s in selectors])
        self.ok(self.host.run("fn11", pod("p", labels={"only-this": "x"}), type="ADDED"))
        with self.assertRaises(kopf.testing.FilteredOut):
            self.host.run("fn11", pod("p"), type="ADDED")


class FilteringTest(DocsTestCase):
    """Filtering: metadata, field, change, value-callback, callback filters
    and their helpers."""

    def test_metadata_filters(self):
        load('''
        @kopf.on.create('kopfexamples',
                        labels={'some-label': 'somevalue'},
                        annotations={'some-annotation': 'somevalue'})
        def my_handler(spec, **_):
            pass

        @kopf.on.create('kopfexamples',
                        labels={'some-label': kopf.PRESENT},
                        annotations={'some-annotation': kopf.PRESENT})
        def present(spec, **_):
            pass

        @kopf.on.create('kopfexamples',
                        labels={'some-label': kopf.ABSENT},
                        annotations={'some-annotation': kopf.ABSENT})
        def absent(spec, **_):
            pass
        ''')
        tagged = kex(labels={"some-label": "somevalue"}, annotations={"some-annotation": "somevalue"})
        other = kex(labels={"some-label": "other"}, annotations={"some-annotation": "other"})
        self.ok(self.host.run("my_handler", tagged))
        self.assertTrue(self.host.why_not("my_handler", other))
        self.ok(self.host.run("present", other))
        self.assertTrue(self.host.why_not("present", kex()))
        self.ok(self.host.run("absent", kex()))
        self.assertTrue(self.host.why_not("absent", tagged))

    def test_field_filters(self):
        load('''
        @kopf.on.create('kopfexamples', field='spec.field', value='world')
        def created_with_world_in_field(**_):
            pass

        @kopf.on.create('kopfexamples', field='spec.field', value=kopf.PRESENT)
        def created_with_field(**_):
            pass

        @kopf.on.create('kopfexamples', field='spec.no-field', value=kopf.ABSENT)
        def created_without_field(**_):
            pass

        @kopf.on.update('kopfexamples', field='spec.field')
        def field_is_affected(old, new, **_):
            pass

        @kopf.on.update('kopfexamples', field='spec.field', param='fld')
        @kopf.on.update('kopfexamples', field='spec.items', param='itm')
        def one_of_the_fields_is_affected(old, new, **_):
            pass
        ''')
        self.ok(self.host.run("created_with_world_in_field/spec.field", kex(field="world")))
        self.assertTrue(self.host.why_not("created_with_world_in_field/spec.field", kex(field="hello")))
        self.ok(self.host.run("created_with_field/spec.field", kex(field="hello")))
        self.assertTrue(self.host.why_not("created_with_field/spec.field", kex()))
        self.ok(self.host.run("created_without_field/spec.no-field", kex()))
        self.ok(self.host.run("field_is_affected/spec.field", kex(field="b"), kex(field="a")))
        self.assertTrue(self.host.why_not("field_is_affected/spec.field", kex(size=2, field="a"), kex(field="a")))
        ids = [h.id for h in self.registry.handlers if h.id.startswith("one_of")]
        self.assertEqual(len(ids), 2)

    def test_change_filters(self):
        load('''
        @kopf.on.update('kopfexamples', field='spec.field', old='x', new='y')
        def field_is_edited(**_):
            pass

        @kopf.on.update('kopfexamples', field='spec.field', old=kopf.ABSENT, new=kopf.PRESENT)
        def field_is_added(**_):
            pass

        @kopf.on.update('kopfexamples', field='spec.field', old=kopf.PRESENT, new=kopf.ABSENT)
        def field_is_removed(**_):
            pass

        @kopf.on.update('kopfexamples', field='spec.field', new='world')
        def hello_world(**_):
            pass

        @kopf.on.update('kopfexamples', field='spec.field', old='world')
        def goodbye_world(**_):
            pass
        ''')
        self.ok(self.host.run("field_is_edited/spec.field", kex(field="y"), kex(field="x")))
        self.assertTrue(self.host.why_not("field_is_edited/spec.field", kex(field="z"), kex(field="x")))
        self.ok(self.host.run("field_is_added/spec.field", kex(field="y"), kex()))
        self.ok(self.host.run("field_is_removed/spec.field", kex(), kex(field="y")))
        self.ok(self.host.run("hello_world/spec.field", kex(field="world"), kex(field="x")))
        self.ok(self.host.run("goodbye_world/spec.field", kex(field="x"), kex(field="world")))
        self.assertTrue(self.host.why_not("goodbye_world/spec.field", kex(field="y"), kex(field="x")))

    def test_value_callbacks(self):
        load('''
        def check_value(value, spec, **_):
            return value == 'some-value' and spec.get('field') is not None

        @kopf.on.create('kopfexamples',
                        labels={'some-label': check_value},
                        annotations={'some-annotation': check_value})
        def my_handler(spec, **_):
            pass
        ''')
        meta = dict(labels={"some-label": "some-value"}, annotations={"some-annotation": "some-value"})
        self.ok(self.host.run("my_handler", kex(field=1, **meta)))
        self.assertTrue(self.host.why_not("my_handler", kex(**meta)))

    def test_callback_filters(self):
        load('''
        def is_good_enough(spec, **_):
            return spec.get('field') in spec.get('items', [])

        @kopf.on.create('kopfexamples', when=is_good_enough)
        def my_handler(spec, **_):
            pass

        @kopf.on.create('kopfexamples', when=lambda spec, **_: spec.get('field') in spec.get('items', []))
        def my_handler2(spec, **_):
            pass
        ''')
        # The docs name both my_handler: two handlers of one kind need distinct ids here (README).
        for id in ("my_handler", "my_handler2"):
            self.ok(self.host.run(id, kex(field="a", items=["a"])))
            self.assertTrue(self.host.why_not(id, kex(field="b", items=["a"])))

    def test_callback_helpers(self):
        load('''
        import kopf

        def whole_fn1(name, **_): return name.startswith('kopf-')
        def whole_fn2(spec, **_): return spec.get('field') == 'value'
        def value_fn1(value, **_): return value.startswith('some')
        def value_fn2(value, **_): return value.endswith('label')

        @kopf.on.create('kopfexamples',
                        when=kopf.all_([whole_fn1, whole_fn2]),
                        labels={'somelabel': kopf.all_([value_fn1, value_fn2])})
        def create_fn1(**_):
            pass

        @kopf.on.create('kopfexamples',
                        when=kopf.any_([whole_fn1, whole_fn2]),
                        labels={'somelabel': kopf.any_([value_fn1, value_fn2])})
        def create_fn2(**_):
            pass
        ''')
        both = kex("kopf-x", field="value", labels={"somelabel": "some-label"})
        half = kex("other", field="value", labels={"somelabel": "some-value"})
        self.ok(self.host.run("create_fn1", both))
        self.assertTrue(self.host.why_not("create_fn1", half))
        self.ok(self.host.run("create_fn2", half))


class ResultsDeliveryTest(DocsTestCase):
    """Results delivery."""

    def test_results(self):
        # As written, `random` is not imported: create_kex_2 fails with a NameError in Kopf too.
        load('''
        import kopf

        @kopf.on.create('kopfexamples')
        def create_kex_1(**_):
            return 100

        @kopf.on.create('kopfexamples')
        def create_kex_2(uid, **_):
            return {'r1': random.randint(0, 100), 'r2': random.randint(100, 999)}
        ''')
        self.assertEqual(self.ok(self.host.run("create_kex_1", kex())).result, 100)
        res = self.host.run("create_kex_2", kex())
        self.assertEqual((res.status, res.message), ("error", "NameError: name 'random' is not defined"))

    def test_results_as_inputs(self):
        # pykube's lines are changed to the kubernetes client's (kopf-wasm: marked).
        load('''
        import kopf
        import kubernetes  # kopf-wasm: instead of pykube

        kopf.permit("batch", "jobs", "create")  # kopf-wasm: what the handlers may request
        kopf.permit("", "persistentvolumeclaims", "create")  # kopf-wasm

        @kopf.on.create('kopfexamples')
        def create_job(status, **_):
            if not status.get('create_pvc', {}):
                raise kopf.TemporaryError("PVC is not created yet.", delay=10)

            pvc_name = status['create_pvc']['name']

            obj = kubernetes.client.BatchV1Api().create_namespaced_job(  # kopf-wasm: instead of pykube
                'default', {'metadata': {'name': pvc_name}})                    # kopf-wasm
            return {'name': obj.metadata.name}

        @kopf.on.create('kopfexamples')
        def create_pvc(**_):
            obj = kubernetes.client.CoreV1Api().create_namespaced_persistent_volume_claim(  # kopf-wasm
                'default', {'metadata': {'name': 'pvc-1'}})                                      # kopf-wasm
            return {'name': obj.metadata.name}
        ''')
        res = self.host.run("create_job", kex())
        self.assertEqual((res.status, res.delay), ("temporary", 10))
        pvc = self.ok(self.host.run("create_pvc", kex()))
        body = kex()
        body["status"] = {"create_pvc": pvc.result}
        self.assertEqual(self.ok(self.host.run("create_job", body)).result, {"name": "pvc-1"})
        self.assertEqual([r["verb"] for r in self.host.kube_requests], ["create", "create"])


class ErrorHandlingTest(DocsTestCase):
    """Error handling: temporary, permanent and regular errors, timeouts,
    retries, backoff."""

    def test_temporary_errors(self):
        load('''
        import kopf

        def is_data_ready():  # the author's, as the docs imply
            return False

        @kopf.on.create('kopfexamples')
        def create_fn(spec, **_):
            if not is_data_ready():
                raise kopf.TemporaryError("The data is not yet ready.", delay=60)
        ''')
        self.assertEqual(self.host.run("create_fn", kex()).outcome,
                         {"status": "temporary", "message": "The data is not yet ready.", "delay": 60})

    def test_permanent_errors(self):
        # As written, `datetime` is not imported (a NameError in Kopf too): imported here.
        load('''
        import datetime
        import kopf

        @kopf.on.create('kopfexamples')
        def create_fn(spec, **_):
            valid_until = datetime.datetime.fromisoformat(spec['validUntil'])
            if valid_until <= datetime.datetime.now(datetime.timezone.utc):
                raise kopf.PermanentError("The object is not valid anymore.")
        ''')
        res = self.host.run("create_fn", kex(validUntil="2020-01-01T00:00:00+00:00"))
        self.assertEqual((res.status, res.message), ("permanent", "The object is not valid anymore."))

    def test_regular_errors_timeouts_retries_backoff(self):
        load('''
        import kopf

        @kopf.on.create('kopfexamples', errors=kopf.ErrorsMode.PERMANENT)
        def create_fn(spec, **_):
            raise Exception()

        @kopf.on.create('kopfexamples', timeout=60*60)
        def create_fn2(spec, **_):
            raise kopf.TemporaryError(delay=60)

        @kopf.on.create('kopfexamples', retries=3)
        def create_fn3(spec, **_):
            raise Exception()

        @kopf.on.create('kopfexamples', backoff=30)
        def create_fn4(spec, **_):
            raise Exception()
        ''')
        # One snippet each in the docs, all named create_fn; numbered apart here.
        res = self.host.run("create_fn", kex())
        self.assertEqual(res.status, "error")  # the host fails it at once: errors=PERMANENT
        self.assertEqual(self.host.spec("create_fn").options.get("errors"), "permanent")
        self.assertEqual(self.host.run("create_fn2", kex()).outcome,
                         {"status": "temporary", "message": "TemporaryError", "delay": 60})
        self.assertEqual(self.host.spec("create_fn2").options.get("timeout"), 3600)
        self.assertEqual(self.host.spec("create_fn3").options.get("retries"), 3)
        res = self.host.run("create_fn4", kex())
        self.assertEqual(res.status, "error")
        self.assertTrue(self.messages(res)[0].startswith(
            "Handler 'create_fn4' failed with an exception. Will retry.\nTraceback"), self.messages(res))
        self.assertEqual(self.host.spec("create_fn4").options.get("backoff"), 30)


class MemosTest(DocsTestCase):
    """In-memory containers: resource memos."""

    def test_resource_memos(self):
        load('''
        import kopf

        @kopf.on.event('KopfExample')
        def pinged(memo: kopf.Memo, **_):
            memo.counter = memo.get('counter', 0) + 1

        @kopf.timer('KopfExample', interval=10)
        def tick(memo: kopf.Memo, logger, **_):
            logger.info(f"{memo.counter} events have been received in 10 seconds.")
            memo.counter = 0
        ''')
        for _ in range(3):
            self.ok(self.host.run("pinged", kex(), type="MODIFIED"))
        res = self.ok(self.host.run("tick", kex()))
        self.assertIn("3 events have been received in 10 seconds.", self.messages(res))
        self.assertEqual(res.memo, {"counter": 0})


    def test_custom_memo_handlers_with_a_startup_memo(self):
        # The docs' custom memo class is passed to kopf.operator(memo=...), which a
        # module has not: its handlers (annotated kopf.Memo, not the class) run when
        # a startup handler fills the operator memo instead (kopf-wasm: added).
        load('''
        import kopf

        @kopf.on.startup()  # kopf-wasm: instead of kopf.operator(memo=CustomContext(...))
        def fill_memo(memo: kopf.Memo, **_):
            memo.create_tpl = "Hello, {name}!"
            memo.delete_tpl = "Good bye, {name}!"

        @kopf.on.create('kopfexamples')
        def create_fn(memo, **kwargs):
            print(memo.create_tpl.format(**kwargs))

        @kopf.on.delete('kopfexamples')
        def delete_fn(memo, **kwargs):
            print(memo.delete_tpl.format(**kwargs))
        ''')
        self.ok(self.host.run("fill_memo"))
        res, out = self.printed(self.host.run, "create_fn", kex())
        self.ok(res)
        res, out2 = self.printed(self.host.run, "delete_fn", kex())
        self.assertEqual(out + out2, "Hello, kopf-example-1!\nGood bye, kopf-example-1!\n")


class IndexingTest(DocsTestCase):
    """In-memory indexing: declaration, structure, content, recipes,
    conditional indexing, errors."""

    PODS = [pod("pod1a", "namespace1", {"label1": "value1a", "label2": "value2b"}, ["main1", "sidecar2"]),
            pod("pod1b", "namespace1", {"label2": "value2a"}, ["main2"]),
            pod("pod2a", "namespace2", {"label2": "value2b"}, ["main"])]

    def feed(self, *ids):
        for p in self.PODS:
            for id in ids:
                self.host.run(id, p)

    def test_declaration(self):
        load('''
        import kopf

        @kopf.index('pods')
        def my_idx(**_):
            ...

        # ... continued from previous examples:
        @kopf.timer('KopfExample', interval=5)
        def tick(my_idx: kopf.Index, **_):
            ...

        @kopf.on.probe()
        def metric(my_idx: kopf.Index, **_):
            ...
        ''')
        self.feed("my_idx")
        self.ok(self.host.run("tick", kex()))
        self.ok(self.host.run("metric"))

    def test_structure_and_content(self):
        mod = load('''
        import kopf

        @kopf.index('pods')
        def string_keys(namespace, name, **_):
            return {namespace: name}

        @kopf.index('pods')
        def tuple_keys(namespace, name, **_):
            return {(namespace, name): 'hello'}

        @kopf.index('pods')
        def by_label(labels, name, **_):
            return {(label, value): name for label, value in labels.items()}

        @kopf.timer('kex', interval=5)
        def tick(by_label: kopf.Index, **_):
            print(list(by_label.get(('label2', 'value2b'), [])))
            # ['pod1', 'pod3']
            for podname in by_label.get(('label2', 'value2b'), []):
                print(f"==> {podname}")

        @kopf.index('pods')
        def pod_names(name: str, **_):
            return name

        @kopf.index('pods')
        def container_names(spec: kopf.Spec, **_):
            return {container['name'] for container in spec.get('containers', [])}

        @kopf.index('pods')
        def pods_list(namespace, name, **_):
            return namespace, name

        @kopf.timer('kopfexamples', interval=5)
        def tick_list(pods_list: kopf.Index, **_):
            for ns, name in pods_list.get(None, []):
                print(f"{ns}::{name}")

        @kopf.index('pods')
        def pods_dict(namespace, name, **_):
            return {(namespace, name): None}

        @kopf.timer('kopfexamples', interval=5)
        def tick_dict(pods_dict: kopf.Index, spec: kopf.Spec, namespace: str, **_):
            monitored_namespace = spec.get('monitoredNamespace', namespace)
            for ns, name in pods_dict:
                if ns == monitored_namespace:
                    print(f"in {ns}: {name}")

        @kopf.index('pods')
        def primary(namespace, name, spec, **_):
            container_names = {container['name'] for container in spec['containers']}
            return {(namespace, name): container_names}

        @kopf.index('pods')
        def secondary(namespace, name, **_):
            return {namespace: name}

        @kopf.timer('kopfexamples', interval=5)
        def tick_both(primary: kopf.Index, secondary: kopf.Index, spec: kopf.Spec, **_):
            namespace_containers = set()
            monitored_namespace = spec.get('monitoredNamespace', 'default')
            for pod_name in secondary.get(monitored_namespace, []):
                reconstructed_key = (monitored_namespace, pod_name)
                pod_containers, *_ = primary[reconstructed_key]
                namespace_containers |= pod_containers
            print(f"containers in {monitored_namespace}: {namespace_containers}")

        @kopf.index('pods')
        def empty_index(**_):
            pass

        @kopf.index('pods')
        def index_of_nones(**_):
            return {'key': None}

        seen = {}
        @kopf.timer('kopfexamples', interval=5)
        def peek(string_keys, tuple_keys, pod_names, container_names, empty_index, index_of_nones, **_):
            # the test's own timer: each index as {key: [values]}
            for name, idx in dict(string_keys=string_keys, tuple_keys=tuple_keys, pod_names=pod_names,
                                  container_names=container_names, empty_index=empty_index,
                                  index_of_nones=index_of_nones).items():
                seen[name] = {key: list(store) for key, store in idx.items()}
        ''')
        # The docs' snippets of this section, together (three timers say tick there).
        self.feed("string_keys", "tuple_keys", "by_label", "pod_names", "container_names", "pods_list",
                  "pods_dict", "primary", "secondary", "empty_index", "index_of_nones")
        res, out = self.printed(self.host.run, "tick", kex())
        self.ok(res)
        self.assertEqual(out, "['pod1a', 'pod2a']\n==> pod1a\n==> pod2a\n")
        res, out = self.printed(self.host.run, "tick_list", kex())
        self.assertEqual(out, "namespace1::pod1a\nnamespace1::pod1b\nnamespace2::pod2a\n")
        res, out = self.printed(self.host.run, "tick_dict", kex(name="k"), force=False)
        self.assertEqual(out, "")  # the kex is in "default"
        # Index values travel as JSON, their sets tagged: primary's sets come back as sets.
        res, out = self.printed(self.host.run, "tick_both", kex(monitoredNamespace="namespace1"))
        self.ok(res)
        prefix = "containers in namespace1: "
        self.assertTrue(out.startswith(prefix), out)
        self.assertEqual(ast.literal_eval(out[len(prefix):]), {"main1", "sidecar2", "main2"})
        self.ok(self.host.run("peek", kex()))
        seen = mod.seen
        self.assertEqual(seen["string_keys"], {"namespace1": ["pod1a", "pod1b"], "namespace2": ["pod2a"]})
        self.assertEqual(seen["tuple_keys"][("namespace1", "pod1a")], ["hello"])
        self.assertEqual(seen["pod_names"], {None: ["pod1a", "pod1b", "pod2a"]})
        self.assertEqual(seen["container_names"][None][0], {"main1", "sidecar2"})  # a set again
        self.assertEqual(seen["empty_index"], {})
        self.assertEqual(seen["index_of_nones"], {"key": [None, None, None]})

    def test_mirroring_resources(self):
        load('''
        import kopf

        @kopf.index('deployments')
        def whole_deployments(name: str, namespace: str, body: kopf.Body, **_):
            return {(namespace, name): body}

        @kopf.timer('kopfexamples', interval=5)
        def tick(whole_deployments: kopf.Index, **_):
            deployment, *_ = whole_deployments[('kube-system', 'coredns')]
            actual = deployment.status.get('replicas')
            desired = deployment.spec.get('replicas')
            print(f"{deployment.meta.name}: {actual}/{desired}")
        ''')
        self.host.run("whole_deployments", {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "metadata": {"name": "coredns", "namespace": "kube-system"},
                                             "spec": {"replicas": 2}, "status": {"replicas": 1}})
        res, out = self.printed(self.host.run, "tick", kex())
        self.ok(res)
        self.assertEqual(out, "coredns: 1/2\n")

    def test_errors_in_indexing(self):
        # fn2 of the permanent snippet says kopf.PermamentError (sic): an
        # AttributeError in Kopf too, which the default errors mode ignores.
        load('''
        import kopf

        @kopf.index('pods', errors=kopf.ErrorsMode.IGNORED)  # the default
        def fn1(**_):
            raise Exception("Keep the stale values, if any.")

        @kopf.index('pods', errors=kopf.ErrorsMode.PERMANENT)
        def fn2(**_):
            raise Exception("Excluded forever.")

        @kopf.index('pods')
        def fn3(**_):
            raise kopf.PermamentError("Excluded forever.")

        @kopf.index('pods', errors=kopf.ErrorsMode.TEMPORARY)
        def fn4(**_):
            raise Exception("Excluded for 60s.")

        @kopf.index('pods')
        def fn5(**_):
            raise kopf.TemporaryError("Excluded for 30s.", delay=30)
        ''')
        p = self.PODS[0]
        self.assertEqual(self.host.run("fn2", p).status, "error")
        self.assertEqual(self.host.spec("fn2").options.get("errors"), "permanent")
        self.assertEqual(self.host.run("fn4", p).status, "error")
        self.assertEqual(self.host.spec("fn4").options.get("errors"), "temporary")
        self.assertEqual(self.host.run("fn5", p).outcome,
                         {"status": "temporary", "message": "Excluded for 30s.", "delay": 30})
        self.assertNotEqual(self.host.run("fn1", p).status, "success")
        self.assertNotEqual(self.host.run("fn3", p).status, "success")


class AdmissionControlTest(DocsTestCase):
    """Admission control: validation and mutation handlers, warnings,
    admission errors."""

    def test_validation(self):
        load('''
        import kopf

        @kopf.on.validate('kopfexamples')
        def say_hello(warnings: list[str], **_):
            warnings.append("Verified with the operator's hook.")

        @kopf.on.validate('kopfexamples')
        def check_numbers(spec, **_):
            if not isinstance(spec.get('numbers', []), list):
                raise kopf.AdmissionError("Numbers must be a list if present.")

        @kopf.on.validate('kopfexamples')
        def convertible_numbers(spec, warnings, **_):
            if isinstance(spec.get('numbers', []), list):
                for val in spec.get('numbers', []):
                    if not isinstance(val, float):
                        try:
                            float(val)
                        except ValueError:
                            raise kopf.AdmissionError(f"Cannot convert {val!r} to a number.")
                        else:
                            warnings.append(f"{val!r} is not a number but can be converted.")

        @kopf.on.validate('kopfexamples')
        def numbers_range(spec, **_):
            if isinstance(spec.get('numbers', []), list):
                if not all(0 <= float(val) <= 100 for val in spec.get('numbers', [])):
                    raise kopf.AdmissionError("Numbers must be below 0..100.", code=499)
        ''')
        res = self.host.run("say_hello", kex(), operation="CREATE")
        self.assertTrue(res.allowed)
        self.assertEqual(res.admission.get("warnings"), ["Verified with the operator's hook."])
        res = self.host.run("check_numbers", kex(numbers="x"), operation="CREATE")
        self.assertFalse(res.allowed)
        self.assertIn("Numbers must be a list if present.", str(res.admission))
        res = self.host.run("convertible_numbers", kex(numbers=["1"]), operation="CREATE")
        self.assertEqual(res.admission.get("warnings"), ["'1' is not a number but can be converted."])
        self.assertFalse(self.host.run("convertible_numbers", kex(numbers=["a"]), operation="CREATE").allowed)
        res = self.host.run("numbers_range", kex(numbers=[500]), operation="CREATE")
        self.assertFalse(res.allowed)
        self.assertIn("499", str(res.admission))

    def test_mutation(self):
        load('''
        import kopf

        @kopf.on.mutate('kopfexamples')
        def ensure_default_numbers(spec, patch, **_):
            if 'numbers' not in spec:
                patch.spec['numbers'] = [1, 2, 3]

        @kopf.on.mutate('kopfexamples')
        def convert_numbers_if_possible(spec, patch, **_):
            if 'numbers' in spec and isinstance(spec.get('numbers'), list):
                patch.spec['numbers'] = [_maybe_number(v) for v in spec['numbers']]

        def _maybe_number(v):
            try:
                return float(v)
            except ValueError:
                return v
        ''')
        res = self.host.run("ensure_default_numbers", kex(), operation="CREATE")
        self.assertEqual(res.patch, {"spec": {"numbers": [1, 2, 3]}})
        res = self.host.run("convert_numbers_if_possible", kex(numbers=["1", "x"]), operation="CREATE")
        self.assertEqual(res.patch, {"spec": {"numbers": [1.0, "x"]}})

    def test_warnings_and_errors(self):
        load('''
        import kopf

        @kopf.on.validate('kopfexamples')
        def ensure_default_numbers(spec, warnings: list[str], **_):
            if spec.get('field') == 'value':
                warnings.append("The default value is used. It is okay but worth changing.")

        @kopf.on.validate('kopfexamples')
        def validate1(spec, **_):
            if spec.get('field') == 'value':
                raise kopf.AdmissionError("Meh! I don't like it. Change the field.", code=400)
        ''')
        res = self.host.run("ensure_default_numbers", kex(field="value"), operation="CREATE")
        self.assertEqual(res.admission.get("warnings"),
                         ["The default value is used. It is okay but worth changing."])
        res = self.host.run("validate1", kex(field="value"), operation="CREATE")
        self.assertFalse(res.allowed)
        self.assertIn("Change the field.", str(res.admission))

    def test_authenticating_apiservers_handler(self):
        # The snippet's startup handler (a WebhookServer with cafile=) cannot run; its
        # validation handler does: kopf-wasm passes the headers and an empty sslpeer.
        load('''
        @kopf.on.validate('kex')
        def show_auth(headers, sslpeer, **_):
            print(f'{headers=}')
            print(f'{sslpeer=}')
        ''')
        res, out = self.printed(self.host.run, "show_auth", kex(), operation="CREATE")
        self.assertTrue(res.allowed)
        self.assertIn("sslpeer={}", out)

    def test_managed_webhooks_setting(self):
        load('''
        @kopf.on.startup()
        def configure(settings: kopf.OperatorSettings, **_):
            settings.admission.managed = 'auto.kopf.dev'
        ''')
        res = self.ok(self.host.run("configure"))
        self.assertIn("has no effect", " ".join(self.messages(res)))


class StartupCleanupTest(DocsTestCase):
    """Startup and cleanup."""

    def test_startup_and_cleanup(self):
        mod = load('''
        import asyncio
        import kopf

        LOCK: asyncio.Lock

        @kopf.on.startup()
        async def startup_fn(logger, **kwargs):
            global LOCK
            LOCK = asyncio.Lock()  # uses the running asyncio loop by default

        @kopf.on.cleanup()
        async def cleanup_fn(logger, **kwargs):
            pass
        ''')
        self.ok(self.host.run("startup_fn"))
        self.assertIsInstance(mod.LOCK, __import__("asyncio").Lock)
        self.ok(self.host.run("cleanup_fn"))


class HealthChecksTest(DocsTestCase):
    """Health-checks: probe handlers."""

    def test_probes(self):
        load('''
        import datetime
        import kopf
        import random

        @kopf.on.probe(id='now')
        def get_current_timestamp(**kwargs):
            return datetime.datetime.now(datetime.timezone.utc).isoformat()

        @kopf.on.probe(id='random')
        def get_random_value(**kwargs):
            return random.randint(0, 1_000_000)
        ''')
        self.assertRegex(self.ok(self.host.run("now")).result, r"^\d{4}-\d\d-\d\dT")
        self.assertIn(self.ok(self.host.run("random")).result, range(0, 1_000_001))


class AuthenticationTest(DocsTestCase):
    """Authentication: the logging lines of credentials lifecycle (the
    login handlers cannot run: docs/python-kopf-docs.md)."""

    def test_silencing_the_authentication_loggers(self):
        load('''
        import logging

        logging.getLogger('kopf.activities.authentication').disabled = True
        logging.getLogger('kopf._core.engines.activities').disabled = True
        ''')


class ConfigurationTest(DocsTestCase):
    """Configuration: settings written in a startup handler. They run; each
    write logs one line saying the host's own settings decide."""

    def test_settings_writes_log_and_do_nothing(self):
        load('''
        import concurrent.futures
        import logging
        import random
        import kopf

        @kopf.on.startup()
        def configure(settings: kopf.OperatorSettings, **_):
            settings.posting.level = logging.WARNING
            settings.watching.connect_timeout = 1 * 60
            settings.watching.server_timeout = 10 * 60

        @kopf.on.startup()
        def configure2(settings: kopf.OperatorSettings, **_):
            settings.posting.level = logging.ERROR

        @kopf.on.startup()
        def configure3(settings: kopf.OperatorSettings, **_):
            settings.posting.enabled = False

        @kopf.on.startup()
        def configure4(settings: kopf.OperatorSettings, **_):
            settings.execution.max_workers = 20

        @kopf.on.startup()
        async def configure5(settings: kopf.OperatorSettings, **_):
            settings.execution.executor = concurrent.futures.ThreadPoolExecutor()

        @kopf.on.startup()
        async def configure6(settings: kopf.OperatorSettings, **kwargs):
            settings.execution.max_workers = 1000

        @kopf.on.startup()
        def configure7(settings: kopf.OperatorSettings, **_):
            settings.networking.connect_timeout = 10
            settings.networking.request_timeout = 60
            settings.watching.server_timeout = 10 * 60

        @kopf.on.startup()
        def configure8(settings: kopf.OperatorSettings, **_):
            settings.persistence.finalizer = 'my-operator.example.com/kopf-finalizer'

        @kopf.on.startup()
        def configure9(settings: kopf.OperatorSettings, **_):
            settings.networking.error_backoffs = [10, 20, 30]

        class InfiniteBackoffsWithJitter:
            def __iter__(self):
                while True:
                    yield 10 + random.randint(-5, +5)

        @kopf.on.startup()
        def configure10(settings: kopf.OperatorSettings, **_):
            settings.networking.error_backoffs = InfiniteBackoffsWithJitter()

        @kopf.on.startup()
        def configure11(settings: kopf.OperatorSettings, **_):
            settings.batching.error_delays = [10, 20, 30]

        @kopf.on.startup()
        def configure12(settings: kopf.OperatorSettings, **_):
            settings.peering.priority = 100

        @kopf.on.startup()
        def configure13(settings: kopf.OperatorSettings, **_):
            settings.peering.name = "example"
            settings.peering.mandatory = True

        @kopf.on.startup()
        def configure14(settings: kopf.OperatorSettings, **_):
            settings.peering.standalone = True

        @kopf.on.startup()
        def configure15(settings: kopf.OperatorSettings, **_):
            settings.peering.priority = random.randint(0, 32767)

        @kopf.on.startup()
        def configure16(settings: kopf.OperatorSettings, **_):
            settings.peering.stealth = True
        ''')
        # Each snippet is its own `configure` in the docs; numbered apart here.
        writes = {"configure": 3, "configure7": 3, "configure13": 2}
        for h in self.registry.handlers:
            res = self.ok(self.host.run(h.id))
            lines = [m for m in self.messages(res) if "has no effect" in m]
            self.assertEqual(len(lines), writes.get(h.id, 1), (h.id, self.messages(res)))
        self.assertEqual(len(self.registry.handlers), 16)


class EventsTest(DocsTestCase):
    """Events: for the handled objects and for other objects."""

    def test_events_of_the_handled_object(self):
        load('''
        import kopf

        @kopf.on.create('kopfexamples')
        def create_fn(body, **_):
            kopf.event(body,
                       type='SomeType',
                       reason='SomeReason',
                       message='Some message')

        @kopf.on.create('kopfexamples')
        def create_fn2(body, **_):
            kopf.warn(body, reason='SomeReason', message='Some message')
            kopf.info(body, reason='SomeReason', message='Some message')
            try:
                raise RuntimeError("Exception text.")
            except:
                kopf.exception(body, reason="SomeReason", message="Some exception:")
        ''')
        res = self.ok(self.host.run("create_fn", kex()))
        self.assertEqual([(e["type"], e["reason"], e["message"]) for e in res.events],
                         [("SomeType", "SomeReason", "Some message")])
        res = self.ok(self.host.run("create_fn2", kex()))
        self.assertEqual([e["type"] for e in res.events], ["Warning", "Normal", "Error"])
        self.assertIn("Exception text.", res.events[2]["message"])

    def test_events_of_other_objects(self):
        load('''
        import kopf
        import kubernetes

        kopf.permit("", "pods", "create")  # kopf-wasm: what the handler may request

        @kopf.on.create('kopfexamples')
        def create_fn(name, namespace, uid, **_):

            pod = kubernetes.client.V1Pod(metadata={'name': 'p'})  # kopf-wasm: a named pod for the fake store
            api = kubernetes.client.CoreV1Api()
            obj = api.create_namespaced_pod(namespace, pod)

            msg = f"This pod is created by KopfExample {name}"
            kopf.info(obj.to_dict(), reason='SomeReason', message=msg)
        ''')
        res = self.ok(self.host.run("create_fn", kex()))
        self.assertEqual(res.kube_requests[0]["verb"], "create")
        self.assertEqual(res.events[0]["message"], "This pod is created by KopfExample kopf-example-1")



class HierarchiesTest(DocsTestCase):
    """Hierarchies: labels, owner references, names, namespaces, adopting,
    3rd-party libraries."""

    OWNER = dict(labels={"somelabel": "somevalue"})

    def run_printed(self, source):
        load(source)
        res, out = self.printed(self.host.run, "create_fn", kex(**self.OWNER))
        self.ok(res)
        return eval(out)

    def test_labels(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment'}]
            kopf.label(objs, {'label1': 'value1', 'label2': 'value2'})
            print(objs)
        ''')
        self.assertEqual(objs[0], {'kind': 'Job', 'metadata': {'labels': {'label1': 'value1', 'label2': 'value2'}}})

    def test_labels_of_the_owner(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment'}]
            kopf.label(objs)
            print(objs)
        ''')
        self.assertEqual(objs[1], {'kind': 'Deployment', 'metadata': {'labels': {'somelabel': 'somevalue'}}})

    def test_labels_forced(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment'}]
            kopf.label(objs, {'label1': 'value1', 'somelabel': 'not-this'}, forced=True)
            kopf.label(objs, forced=True)
            print(objs)
        ''')
        self.assertEqual(objs[0]["metadata"]["labels"], {'label1': 'value1', 'somelabel': 'somevalue'})

    def test_nested_labels(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment', 'spec': {'template': {}}}]
            kopf.label(objs, {'label1': 'value1'}, nested='spec.template')
            kopf.label(objs, nested='spec.template')
            print(objs)
        ''')
        labels = {'label1': 'value1', 'somelabel': 'somevalue'}
        self.assertEqual(objs, [{'kind': 'Job', 'metadata': {'labels': labels}},
                                {'kind': 'Deployment', 'metadata': {'labels': labels},
                                 'spec': {'template': {'metadata': {'labels': labels}}}}])

    def test_owner_references(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment'}]
            kopf.append_owner_reference(objs)
            print(objs)
        ''')
        self.assertEqual(objs[0]["metadata"]["ownerReferences"],
                         [{'controller': True, 'blockOwnerDeletion': True, 'apiVersion': 'kopf.dev/v1',
                           'kind': 'KopfExample', 'name': 'kopf-example-1', 'uid': 'uid-kopf-example-1'}])

    def test_owner_reference_one_liners(self):
        owner = kex()
        objs = [{'kind': 'Job'}]
        kopf.append_owner_reference(objs, owner)
        self.assertEqual(len(objs[0]["metadata"]["ownerReferences"]), 1)
        kopf.remove_owner_reference(objs, owner)
        self.assertEqual(objs[0]["metadata"]["ownerReferences"], [])
        load('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}]
            kopf.append_owner_reference(objs, controller=False, block_owner_deletion=False)
            kopf.harmonize_naming(objs, 'some-name')
            kopf.harmonize_naming(objs, 'some-name', forced=True)
            kopf.harmonize_naming(objs, 'some-name', strict=True)
            kopf.harmonize_naming(objs, 'some-name', strict=True, forced=True)
            kopf.adjust_namespace(objs, 'namespace')
            kopf.adjust_namespace(objs, 'namespace', forced=True)
            print(objs)
        ''')
        res, out = self.printed(self.host.run, "create_fn", kex())
        self.ok(res)
        obj = eval(out)[0]
        self.assertEqual(obj["metadata"]["ownerReferences"][0]["controller"], False)
        self.assertEqual(obj["metadata"]["name"], "some-name")
        self.assertEqual(obj["metadata"]["namespace"], "namespace")

    def test_names(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment'}]
            kopf.harmonize_naming(objs, forced=True, strict=True)
            print(objs)
        ''')
        self.assertEqual(objs, [{'kind': 'Job', 'metadata': {'name': 'kopf-example-1'}},
                                {'kind': 'Deployment', 'metadata': {'name': 'kopf-example-1'}}])

    def test_generated_names(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment'}]
            kopf.harmonize_naming(objs)
            print(objs)
        ''')
        self.assertEqual(objs[0], {'kind': 'Job', 'metadata': {'generateName': 'kopf-example-1-'}})

    def test_namespaces(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment'}]
            kopf.adjust_namespace(objs, forced=True)
            print(objs)
        ''')
        self.assertEqual(objs[1], {'kind': 'Deployment', 'metadata': {'namespace': 'default'}})

    def test_adopting(self):
        objs = self.run_printed('''
        @kopf.on.create('KopfExample')
        def create_fn(**_):
            objs = [{'kind': 'Job'}, {'kind': 'Deployment'}]
            kopf.adopt(objs, strict=True, forced=True, nested='spec.template')
            print(objs)
        ''')
        meta = objs[0]["metadata"]
        self.assertEqual((meta["name"], meta["namespace"], meta["labels"]),
                         ("kopf-example-1", "default", {"somelabel": "somevalue"}))
        self.assertEqual(meta["ownerReferences"][0]["kind"], "KopfExample")

    def test_third_party_pykube(self):
        # pykube's lines are changed to a plain dict (kopf-wasm: marked).
        objs = self.run_printed('''
        import kopf

        @kopf.on.create('KopfExample')
        def create_fn(**_):
            pod = {'apiVersion': 'v1', 'kind': 'Pod'}  # kopf-wasm: instead of pykube.objects.Pod(api, {})
            kopf.adopt(pod)
            print([pod])
        ''')
        self.assertEqual(objs[0]["metadata"]["generateName"], "kopf-example-1-")

    def test_third_party_kubernetes(self):
        load('''
        import kopf
        import kubernetes.client

        @kopf.on.create('KopfExample')
        def create_fn(**_):
            pod = kubernetes.client.V1Pod()
            kopf.adopt(pod)
            print(pod)
        ''')
        res, out = self.printed(self.host.run, "create_fn", kex(**self.OWNER))
        self.ok(res)
        for text in ("kopf-example-1-", "somevalue", "'namespace': 'default'", "uid-kopf-example-1"):
            self.assertIn(text, out)


class IdempotenceTest(DocsTestCase):
    """Idempotence: kopf.execute() within one handling cycle."""

    def test_execute_retries_until_all_succeed(self):
        load('''
        import functools
        import kopf

        @kopf.on.create('kopfexamples')
        async def create(spec, namespace, **kwargs):
            print("Entering create()!")  # executed ~7 times.
            await kopf.execute(fns={
                'a': create_a,
                'b': create_b,
            })
            print("Leaving create()!")  # executed 1 time only.

        async def create_a(retry, **kwargs):
            if retry < 2:
                raise kopf.TemporaryError("Not ready yet.", delay=10)

        async def create_b(retry, **kwargs):
            if retry < 6:
                raise kopf.TemporaryError("Not ready yet.", delay=10)
        ''')
        results, out = self.printed(self.host.run_cycles, "create", kex())
        self.assertEqual(results[-1].status, "success", results[-1].message)
        self.assertEqual(out.count("Entering create()!"), 7)
        self.assertEqual(out.count("Leaving create()!"), 1)


class ReferenceTest(DocsTestCase):
    """API reference: kopf.register, kopf.subhandler and kopf.on.create's
    examples."""

    def test_register_and_subhandler(self):
        load('''
        import kopf

        @kopf.on.create('kopfexamples')
        def creation_handler(**kwargs):
            pass

        @kopf.on.create('kopfexamples')
        def create_it(spec, **kwargs):
            for task in spec.get('tasks', []):

                def create_single_task(task=task, **_):
                    pass

                kopf.register(id=task, fn=create_single_task)

        @kopf.on.create('kopfexamples')
        def create(*, spec, **kwargs):

            for task in spec.get('tasks', []):

                @kopf.subhandler(id=f'task_{task}')
                def create_task(*, spec, task=task, **kwargs):
                    pass
        ''')
        self.ok(self.host.run("creation_handler", kex()))
        results = self.host.run_cycles("create_it", kex(tasks=["t1", "t2"]))
        self.assertEqual(results[-1].status, "success", results[-1].message)
        self.assertEqual(sorted(s["id"] for s in results[0].subhandlers), ["create_it/t1", "create_it/t2"])
        results = self.host.run_cycles("create", kex(tasks=["t1"]))
        self.assertEqual([s["id"] for s in results[0].subhandlers], ["create/task_t1"])
        self.assertEqual(results[-1].status, "success", results[-1].message)


    def test_subhandler_of_the_reference(self):
        load('''
        @kopf.on.create('kopfexamples')
        def create_it(spec, **kwargs):
            for task in spec.get('tasks', []):

                @kopf.subhandler(id=task)
                def create_single_task(task=task, **_):
                    pass
        ''')
        results = self.host.run_cycles("create_it", kex(tasks=["t1", "t2"]))
        self.assertEqual(results[-1].status, "success", results[-1].message)
        self.assertEqual(sorted(s["id"] for s in results[0].subhandlers), ["create_it/t1", "create_it/t2"])


class TipsAndTricksTest(DocsTestCase):
    """Tips & Tricks: excluding handlers forever."""

    def test_excluding_handlers_forever(self):
        load('''
        import kopf

        @kopf.on.update('kopfexamples', annotations={'update-fn-never-again': kopf.ABSENT})
        def update_fn(patch, **_):
            patch.metadata.annotations['update-fn-never-again'] = 'yes'
            raise kopf.PermanentError("Never call update-fn again.")

        @kopf.daemon('kopfexamples', annotations={'monitor-never-again': kopf.ABSENT})
        async def monitor_kex(patch, **kwargs):
            patch.metadata.annotations['monitor-never-again'] = 'yes'
        ''')
        res = self.host.run("update_fn", kex(size=2), kex(size=1))
        self.assertEqual(res.status, "permanent")
        self.assertEqual(res.patch, {"metadata": {"annotations": {"update-fn-never-again": "yes"}}})
        self.assertTrue(self.host.why_not("update_fn", kex(size=3, annotations={"update-fn-never-again": "yes"}),
                                          kex(size=2, annotations={"update-fn-never-again": "yes"})))
        res = self.ok(self.host.run("monitor_kex", kex()))
        self.assertEqual(res.patch, {"metadata": {"annotations": {"monitor-never-again": "yes"}}})


if __name__ == "__main__":
    unittest.main()
