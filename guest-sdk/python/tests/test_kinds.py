"""Daemons, timers, indexes, webhooks, sub-handlers, helpers, events."""

import asyncio
import unittest

from helpers import KopfTestCase, example, kopf

KEX = ("kopf.dev", "v1", "kopfexamples")


class DaemonTest(KopfTestCase):

    def test_stopped_wait_goes_through_the_host(self):
        @kopf.daemon(*KEX, id="d")
        def d(stopped, **_):
            n = 0
            while not stopped:
                stopped.wait(10)
                n += 1
            return {"rounds": n, "reason": str(stopped.reason)}

        self.host.stop_after = 3
        res = self.host.run("d", example())
        self.assertEqual(res.result, {"rounds": 3, "reason": "DaemonStoppingReason.RESOURCE_DELETED"})
        self.assertEqual(self.host.sleeps, [10, 10, 10])

    def test_async_daemons_sleep_through_the_host_and_end_when_stopped(self):
        @kopf.daemon(*KEX, id="d")
        async def d(stopped, **_):
            n = 0
            while not stopped:
                await asyncio.sleep(30)
                n += 1
            await stopped.wait(1)
            return n

        self.host.stop_after = 2
        res = self.host.run("d", example())
        self.assertEqual(res.result, 2)
        self.assertEqual([round(s) for s in self.host.sleeps], [30, 30])

    def test_a_daemon_never_stopped_fails_the_test_instead_of_hanging(self):
        @kopf.daemon(*KEX, id="d")
        def d(stopped, **_):
            while not stopped:
                stopped.wait(1)

        res = self.host.run("d", example())
        self.assertEqual(res.status, "error")
        self.assertIn("was never stopped: set host.stop_after", res.message)

    def test_timers_get_stopped_too(self):
        kopf.timer(*KEX, id="t", interval=5)(lambda stopped, **_: bool(stopped))
        self.assertEqual(self.host.run("t", example()).result, False)


class IndexTest(KopfTestCase):

    def test_indexes_are_kwargs_by_name(self):
        @kopf.index(*KEX, id="by_name")
        def by_name(name, namespace, spec, **_):
            return {(namespace, name): spec["size"]}

        kopf.index(*KEX, id="sizes")(lambda spec, **_: spec["size"])
        seen = {}

        @kopf.on.create(*KEX, id="c")
        def c(by_name, sizes, **_):
            seen["by_name"] = {k: sorted(v) for k, v in by_name.items()}
            seen["sizes"] = sorted(sizes[None])
            seen["one"] = list(by_name[("default", "a")])

        for name, size in (("a", 1), ("b", 2)):
            self.host.run("by_name", example(size, name=name))
            self.host.run("sizes", example(size, name=name))
        self.host.run("c", example(3, name="c"))
        self.assertEqual(seen, {"by_name": {("default", "a"): [1], ("default", "b"): [2]},
                                "sizes": [1, 2], "one": [1]})

    def test_an_index_not_carried_is_looked_up(self):
        kopf.index(*KEX, id="sizes")(lambda name, spec, **_: {name: spec["size"]})
        kopf.on.create(*KEX, id="c")(lambda sizes, **_: list(sizes["a"]))
        self.host.run("sizes", example(4, name="a"))
        req = self.host.request("c", example())
        req["indices"]["sizes"] = None
        res = self.host.call(req)
        self.assertEqual(res.result, [4])
        self.assertEqual([c for c in self.host.calls if c[0] == "index_lookup"][-1][1],
                         {"index": "sizes", "key": "a"})

    def test_a_whole_index_not_carried_is_looked_up(self):
        kopf.index(*KEX, id="sizes")(lambda name, spec, **_: {name: spec["size"]})
        kopf.on.probe(id="p")(lambda sizes, **_: {k: list(v) for k, v in sizes.items()})
        self.host.run("sizes", example(4, name="a"))
        self.host.run("sizes", example(5, name="b"))
        req = self.host.request("p")
        req["indices"]["sizes"] = None
        self.assertEqual(self.host.call(req).result, {"a": [4], "b": [5]})
        self.assertEqual([c for c in self.host.calls if c[0] == "index_lookup"][-1][1],
                         {"index": "sizes", "key": None, "all": True})

    def test_index_results_never_patch(self):
        @kopf.index(*KEX, id="i")
        def i(patch, **_):
            patch.status["x"] = 1
            return 1
        self.assertNotIn("patch", self.host.run("i", example()).response)


class WebhookTest(KopfTestCase):

    def test_validate_kwargs_and_denial(self):
        seen = {}

        @kopf.on.validate(*KEX, id="v")
        def v(dryrun, warnings, userinfo, headers, operation, new, old, spec, **_):
            seen.update(dryrun=dryrun, user=userinfo["username"], op=operation, new=new.spec.size, old=old)
            warnings.append("careful")
            if spec["size"] > 2:
                raise kopf.AdmissionError("too big", code=418)

        ok = self.host.run("v", example(1))
        self.assertEqual(ok.admission, {"allowed": True, "warnings": ["careful"]})
        self.assertEqual(seen, {"dryrun": False, "user": "kopf-testing", "op": "CREATE", "new": 1, "old": None})
        denied = self.host.run("v", example(3))
        self.assertEqual(denied.admission, {"allowed": False, "code": 418, "message": "too big",
                                            "warnings": ["careful"]})

    def test_other_errors_deny_with_500(self):
        kopf.on.validate(*KEX, id="v")(lambda **_: 1 / 0)
        res = self.host.run("v", example())
        self.assertEqual((res.allowed, res.admission["code"]), (False, 500))

    def test_mutation_is_the_patch(self):
        @kopf.on.mutate(*KEX, id="m")
        def m(patch, **_):
            patch.spec["defaulted"] = True
        res = self.host.run("m", example())
        self.assertEqual((res.allowed, res.patch), (True, {"spec": {"defaulted": True}}))


class SubhandlerTest(KopfTestCase):

    def test_cycles_until_every_subhandler_is_done(self):
        calls = []

        @kopf.on.create(*KEX, id="create")
        async def create(spec, **_):
            calls.append("parent")
            await kopf.execute(fns={"a": create_a, "b": create_b})
            calls.append("after")
            return "done"

        async def create_a(retry, **_):
            if retry < 1:
                raise kopf.TemporaryError("not yet", delay=1)
            return "a"

        def create_b(retry, patch, **_):
            patch.status["b"] = retry
            if retry < 2:
                raise kopf.TemporaryError("not yet", delay=1)

        results = self.host.run_cycles("create", example())
        self.assertEqual([r.status for r in results], ["children", "children", "success"])
        self.assertEqual(calls, ["parent", "parent", "parent", "after"])
        self.assertEqual(results[-1].result, "done")
        self.assertEqual([(s["id"], s.get("outcome")) for s in results[1].subhandlers],
                         [("create/a", {"status": "success"}),
                          ("create/b", {"status": "temporary", "message": "not yet", "delay": 1})])
        self.assertEqual(results[1].subhandlers[0].get("result"), "a")
        self.assertEqual(results[2].patch, {"status": {"b": 2}})

    def test_execute_with_a_list_of_functions(self):
        def first(**_):
            return 1

        def second(**_):
            return 2

        @kopf.on.create(*KEX, id="c")
        def c(**_):
            kopf.execute(fns=[first, second])
            return "all done"

        res = self.host.run("c", example())
        self.assertEqual(res.result, "all done")
        self.assertEqual([(s["id"].rsplit(".", 1)[-1], s["result"]) for s in res.subhandlers],
                         [("first", 1), ("second", 2)])

    def test_register_and_nested_subhandlers(self):
        @kopf.on.update(*KEX, id="u")
        def u(spec, **_):
            for task in ("x", "y"):
                def one(task=task, **_):
                    @kopf.subhandler(id="inner")
                    def inner(**_):
                        return task
                kopf.register(one, id=task, retries=2)

        res = self.host.run("u", example(2), example(1))
        self.assertEqual(res.status, "success")
        ids = [(s["id"], s["parent"], s.get("result")) for s in res.subhandlers]
        self.assertEqual(ids, [("u/x", "u", None), ("u/x/inner", "u/x", "x"),
                               ("u/y", "u", None), ("u/y/inner", "u/y", "y")])

    def test_filtered_out_subhandlers_are_not_waited_for(self):
        @kopf.on.create(*KEX, id="c")
        def c(**_):
            kopf.register(lambda **_: 1 / 0, id="never", labels={"x": kopf.PRESENT})
            kopf.register(lambda **_: "yes", id="always", when=lambda spec, **_: True)

        res = self.host.run("c", example())
        self.assertEqual(res.status, "success")
        self.assertEqual([s["id"] for s in res.subhandlers], ["c/always"])

    def test_subhandlers_outside_changing_handlers_fail_clearly(self):
        kopf.on.event(*KEX, id="e")(lambda **_: kopf.register(lambda **_: None, id="x"))
        res = self.host.run("e", example())
        self.assertIn("sub-handlers of event handlers are not supported", res.message)


class HelpersTest(KopfTestCase):

    def test_adopt_uses_the_handled_object(self):
        @kopf.on.create(*KEX, id="c")
        def c(**_):
            child = {"apiVersion": "v1", "kind": "Pod", "spec": {"template": {"metadata": {}}}}
            kopf.adopt(child, nested="spec.template")
            return child

        body = example(labels={"app": "x"})
        child = self.host.run("c", body).result
        self.assertEqual(child["metadata"]["ownerReferences"], [{
            "controller": True, "blockOwnerDeletion": True, "apiVersion": "kopf.dev/v1",
            "kind": "KopfExample", "name": "kopf-example-1", "uid": "uid-kopf-example-1"}])
        self.assertEqual(child["metadata"]["generateName"], "kopf-example-1-")
        self.assertEqual(child["metadata"]["namespace"], "default")
        self.assertEqual(child["metadata"]["labels"], {"app": "x"})
        self.assertEqual(child["spec"]["template"]["metadata"]["labels"], {"app": "x"})

    def test_harmonize_label_and_owner_references_as_kopf(self):
        objs = [{"metadata": {"name": "kept", "labels": {"a": "1"}}}, {}]
        kopf.harmonize_naming(objs, "owner", strict=True)
        kopf.label(objs, {"a": "2", "b": "3"})
        self.assertEqual([o["metadata"].get("name") for o in objs], ["kept", "owner"])
        self.assertEqual(objs[0]["metadata"]["labels"], {"a": "1", "b": "3"})
        owner = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o", "uid": "u"}}
        kopf.append_owner_reference(objs, owner)
        kopf.append_owner_reference(objs, owner)
        self.assertEqual(len(objs[1]["metadata"]["ownerReferences"]), 1)
        kopf.remove_owner_reference(objs, owner)
        self.assertEqual(objs[1]["metadata"]["ownerReferences"], [])

    def test_events(self):
        @kopf.on.create(*KEX, id="c")
        def c(body, **_):
            kopf.info(body, reason="Created", message="made it")
            kopf.warn([body], reason="Careful")
            try:
                raise ValueError("bad")
            except ValueError:
                kopf.exception(body, message="it broke")

        res = self.host.run("c", example())
        about = {"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "name": "kopf-example-1",
                 "uid": "uid-kopf-example-1", "namespace": "default"}
        self.assertEqual(res.events, [
            {"type": "Normal", "reason": "Created", "message": "made it", "about": about},
            {"type": "Warning", "reason": "Careful", "message": "", "about": about},
            {"type": "Error", "reason": "ValueError", "message": "it broke bad", "about": about},
        ])

    def test_logger_levels_and_host_minimum(self):
        @kopf.on.create(*KEX, id="c")
        def c(logger, **_):
            logger.debug("d")
            logger.info("i")
            logger.warning("w")
            logger.critical("c")

        res = self.host.run("c", example())
        self.assertEqual([(r["level"], r["message"]) for r in res.logs],
                         [("debug", "d"), ("info", "i"), ("warning", "w"), ("error", "c")])
        res = self.host.run("c", example(), logLevel="warning")
        self.assertEqual([r["level"] for r in res.logs], ["warning", "error"])

    def test_sandbox_guards(self):
        import threading
        undo = kopf._sandbox.install(force=True)
        try:
            with self.assertRaisesRegex(kopf.SandboxError, "threads are not available in the sandbox"):
                threading.Thread(target=print).start()
            import subprocess
            with self.assertRaisesRegex(kopf.SandboxError, "subprocesses are not available"):
                subprocess.Popen(["true"])
        finally:
            undo()
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()


if __name__ == "__main__":
    unittest.main()
