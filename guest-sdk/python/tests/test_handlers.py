"""Decorators, kwargs, outcomes, patches, memos, async handlers."""

import asyncio
import json
import unittest

from helpers import KopfTestCase, example, kopf

from kopf import _runtime

KEX = ("kopf.dev", "v1", "kopfexamples")


class ManifestTest(KopfTestCase):

    def test_selectors_as_kopf_parses_them(self):
        cases = [
            (("kopf.dev", "v1", "kopfexamples"), {"group": "kopf.dev", "version": "v1", "name": "kopfexamples"}),
            (("kopf.dev/v1", "kopfexamples"), {"group": "kopf.dev", "version": "v1", "name": "kopfexamples"}),
            (("apps", "deployments"), {"group": "apps", "name": "deployments"}),
            (("v1", "pods"), {"version": "v1", "name": "pods"}),
            (("kopfexamples.kopf.dev",), {"group": "kopf.dev", "name": "kopfexamples"}),
            (("pods.v1",), {"version": "v1", "name": "pods"}),
            (("pods.v1beta1.metrics.k8s.io",), {"group": "metrics.k8s.io", "version": "v1beta1", "name": "pods"}),
            (("pods",), {"name": "pods"}),
            (("apps", kopf.EVERYTHING), {"group": "apps", "name": "", "everything": True}),
        ]
        for i, (args, want) in enumerate(cases):
            kopf.on.event(*args, id=f"e{i}")(lambda **_: None)
        got = [h["resource"] for h in self.host.manifest()["handlers"]]
        self.assertEqual(got, [want for _, want in cases])

    def test_keyword_selectors_and_category(self):
        kopf.on.event(group="apps", version="v1", kind="Deployment", id="a")(lambda **_: None)
        kopf.on.event(category="all", id="b")(lambda **_: None)
        got = [h["resource"] for h in self.host.manifest()["handlers"]]
        self.assertEqual(got, [{"group": "apps", "version": "v1", "name": "Deployment"},
                               {"name": "", "category": "all"}])

    def test_ids_as_kopf_derives_them(self):
        def fn(**_):
            pass
        kopf.on.create(*KEX)(fn)
        kopf.on.field(*KEX, field="spec.size")(fn)
        kopf.on.field(*KEX, field=("spec", "replicas"), id="named")(fn)
        kopf.index(*KEX, field="spec.size", id="sizes")(fn)
        anonymous = lambda **_: None  # noqa: E731
        kopf.on.event(*KEX)(anonymous)
        ids = [h["id"] for h in self.host.manifest()["handlers"]]
        prefix = "ManifestTest.test_ids_as_kopf_derives_them.<locals>.fn"
        self.assertEqual(ids, [prefix, prefix + "/spec.size", "named/spec.replicas", "sizes",
                               f"lambda:test_handlers.py:{anonymous.__code__.co_firstlineno}"])

    def test_one_function_under_several_decorators(self):
        @kopf.on.resume(*KEX, id="fn")
        @kopf.on.create(*KEX, id="fn")
        @kopf.on.update(*KEX, id="fn")
        def fn(reason, **_):
            return {"reason": str(reason)}

        kinds = [(h["id"], h["kind"]) for h in self.host.manifest()["handlers"]]
        self.assertEqual(kinds, [("fn", "update"), ("fn", "create"), ("fn", "resume")])
        self.assertEqual(self.host.run("fn", example(), kind="create").result, {"reason": "create"})
        self.assertEqual(self.host.run("fn", example(2), example(1), kind="update").result, {"reason": "update"})
        self.assertEqual(self.host.run("fn", example(), kind="resume").result, {"reason": "resume"})

    def test_an_id_twice_in_one_kind_is_refused(self):
        kopf.on.create(*KEX, id="x")(lambda **_: None)
        with self.assertRaisesRegex(ValueError, "declared twice as a create handler"):
            kopf.on.create("v1", "pods", id="x")(lambda **_: None)
        kopf.timer(*KEX, id="t")(lambda **_: None)
        with self.assertRaisesRegex(ValueError, "only create, update, delete, resume and field"):
            kopf.daemon(*KEX, id="t")(lambda **_: None)

    def test_options(self):
        kopf.on.delete(*KEX, id="d", optional=True, retries=2, timeout=datetime_minutes(1),
                       errors=kopf.ErrorsMode.IGNORED, param=0)(lambda **_: None)
        kopf.on.resume(*KEX, id="r", deleted=True, backoff=1.5)(lambda **_: None)
        kopf.daemon(*KEX, id="dm", cancellation_backoff=1, cancellation_polling=2)(lambda **_: None)
        kopf.on.mutate(*KEX, id="m", operation="CREATE", subresource="*", persistent=True,
                       side_effects=True, ignore_failures=True)(lambda **_: None)
        kopf.on.probe(id="p")(lambda **_: None)
        kopf.on.cleanup(id="c", retries=1)(lambda **_: None)
        got = {h["id"]: h["options"] for h in self.host.manifest()["handlers"]}
        self.assertEqual(got, {
            "d": {"errors": "ignored", "timeout": 60, "retries": 2, "param": 0, "optional": True},
            "r": {"backoff": 1.5, "deleted": True},
            "dm": {"cancellationBackoff": 1, "cancellationPolling": 2},
            "m": {"operations": ["CREATE"], "subresource": "*", "persistent": True, "sideEffects": True,
                  "ignoreFailures": True},
            "p": {}, "c": {"retries": 1},
        })

    def test_filter_mistakes_raise_at_decoration(self):
        with self.assertRaisesRegex(TypeError, "need a field"):
            kopf.on.update(*KEX, value=1)
        with self.assertRaisesRegex(TypeError, "cannot be combined"):
            kopf.on.update(*KEX, field="spec.x", value=1, old=2)
        with self.assertRaisesRegex(ValueError, "kopf.ABSENT"):
            kopf.on.create(*KEX, labels={"a": None})
        with self.assertRaisesRegex(TypeError, "give seconds"):
            kopf.timer(*KEX, initial_delay=lambda **_: 1)
        with self.assertRaisesRegex(ValueError, "selects nothing"):
            kopf.on.validate(*KEX, operations=[])

    def test_login_is_one_line_and_no_handler(self):
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            @kopf.on.login()
            def login_fn(**_):
                pass
        self.assertEqual(err.getvalue().count("\n"), 1)
        self.assertIn("login_fn) is not served: the kopf-wasm host logs in", err.getvalue())
        self.assertEqual(self.host.manifest()["handlers"], [])


def datetime_minutes(n):
    import datetime
    return datetime.timedelta(minutes=n)


class KwargsTest(KopfTestCase):

    def test_resource_handler_kwargs(self):
        seen = {}

        @kopf.on.create(*KEX, id="c", param={"p": 1})
        def c(body, spec, meta, status, name, namespace, uid, labels, annotations, reason, old, new,
              diff, retry, started, runtime, patch, logger, memo, param, resource, **kwargs):
            seen.update(locals())

        body = example(3, labels={"a": "b"}, annotations={"n": "v"})
        body["status"] = {"phase": "x"}
        res = self.host.run("c", body)
        self.assertEqual(res.status, "success", res.message)
        self.assertEqual((seen["name"], seen["namespace"], seen["uid"]),
                         ("kopf-example-1", "default", "uid-kopf-example-1"))
        self.assertEqual(seen["spec"].size, 3)
        self.assertEqual(seen["spec"].get("missing", 7), 7)
        self.assertEqual(seen["meta"].name, "kopf-example-1")
        self.assertEqual(seen["meta"]["labels"], {"a": "b"})
        self.assertEqual(seen["status"].phase, "x")
        self.assertEqual(seen["body"].spec.size, 3)
        self.assertEqual((dict(seen["labels"]), dict(seen["annotations"])), ({"a": "b"}, {"n": "v"}))
        self.assertEqual(seen["reason"], kopf.Reason.CREATE)
        self.assertIsNone(seen["old"])
        self.assertEqual(seen["new"]["spec"], {"size": 3})
        self.assertEqual(seen["diff"][0].operation, kopf.DiffOperation.ADD)
        self.assertEqual(seen["param"], {"p": 1})
        self.assertEqual(seen["resource"].plural, "kopfexamples")
        self.assertEqual(seen["resource"].api_version, "kopf.dev/v1")
        self.assertIsInstance(seen["patch"], kopf.Patch)
        self.assertIsInstance(seen["memo"], kopf.Memo)
        with self.assertRaisesRegex(TypeError, "read-only"):
            seen["spec"]["size"] = 4
        self.assertEqual(json.loads(json.dumps(seen["body"]))["spec"], {"size": 3})

    def test_handlers_without_kwargs_get_what_they_name(self):
        @kopf.on.create(*KEX, id="c")
        def c(name, spec):
            return {"name": name, "size": spec["size"]}
        self.assertEqual(self.host.run("c", example(2)).result, {"name": "kopf-example-1", "size": 2})

    def test_field_handler_gets_the_fields_values(self):
        seen = {}

        @kopf.on.field(*KEX, field="spec.size", id="f")
        def f(old, new, diff, **_):
            seen.update(old=old, new=new, diff=list(diff))

        self.host.run("f/spec.size", example(2), example(1))
        self.assertEqual(seen, {"old": 1, "new": 2, "diff": [("change", (), 1, 2)]})

    def test_event_kwargs(self):
        seen = {}
        kopf.on.event(*KEX, id="e")(lambda type, event, **_: seen.update(type=type, event=event))
        self.host.run("e", example())
        self.assertEqual(seen["type"], "ADDED")
        self.assertEqual(seen["event"]["object"]["metadata"]["name"], "kopf-example-1")

    def test_activity_kwargs_and_settings(self):
        seen = {}

        @kopf.on.startup(id="s")
        def s(activity, settings, memo, logger, **_):
            seen["activity"] = activity
            settings.persistence.finalizer = "x"
            memo.ready = True

        res = self.host.run("s")
        self.assertEqual(seen["activity"], "startup")
        self.assertEqual(res.memo, {"ready": True})
        self.assertIn("settings.persistence.finalizer = 'x' has no effect", res.logs[0]["message"])

    def test_memo_is_kept_per_object(self):
        @kopf.on.event(*KEX, id="count")
        def count(memo, **_):
            memo["n"] = memo.get("n", 0) + 1
            return memo["n"]

        a, b = example(name="a"), example(name="b")
        self.assertEqual(self.host.run("count", a).result, 1)
        self.assertEqual(self.host.run("count", a).result, 2)
        self.assertEqual(self.host.run("count", b).result, 1)
        unchanged = self.host.call(self.host.request("count", a))
        self.assertEqual(unchanged.memo, {"n": 3})


class MemoTest(KopfTestCase):

    def test_values_that_are_not_json_are_dropped_with_a_line(self):
        @kopf.on.startup(id="s")
        def s(memo, **_):
            memo.client = object()
            memo.ready = True

        res = self.host.run("s")
        self.assertEqual((res.status, res.memo), ("success", {"ready": True}))
        self.assertIn("memo keys client are not JSON", res.logs[0]["message"])


class OutcomeTest(KopfTestCase):

    def run_raising(self, exc, kind="create", id="x", **options):
        def fail(**_):
            raise exc
        getattr(kopf.on, kind)(*KEX, id=id, **options)(fail)
        return self.host.run(id, example(), force=True)

    def test_success_with_a_result(self):
        kopf.on.create(*KEX, id="x")(lambda **_: {"a": 1})
        res = self.host.run("x", example())
        self.assertEqual((res.status, res.result), ("success", {"a": 1}))

    def test_non_dict_results_and_none(self):
        kopf.on.create(*KEX, id="x")(lambda **_: "done")
        kopf.on.create(*KEX, id="y")(lambda **_: None)
        self.assertEqual(self.host.run("x", example()).result, "done")
        self.assertNotIn("result", self.host.run("y", example()).response)

    def test_temporary_error(self):
        res = self.run_raising(kopf.TemporaryError("later", delay=7))
        self.assertEqual(res.outcome, {"status": "temporary", "message": "later", "delay": 7})
        res = self.run_raising(kopf.TemporaryError("default"), id="y")
        self.assertEqual(res.delay, 60)

    def test_temporary_error_without_delay_leaves_it_to_the_host(self):
        res = self.run_raising(kopf.TemporaryError("backoff", delay=None))
        self.assertEqual(res.outcome, {"status": "temporary", "message": "backoff"})

    def test_permanent_error(self):
        res = self.run_raising(kopf.PermanentError("never"))
        self.assertEqual(res.outcome, {"status": "permanent", "message": "never"})

    def test_arbitrary_exception_logs_the_traceback_as_kopf(self):
        res = self.run_raising(ValueError("boom"))
        self.assertEqual(res.outcome, {"status": "error", "message": "ValueError: boom"})
        log = res.logs[0]
        self.assertEqual(log["level"], "error")
        self.assertTrue(log["message"].startswith("Handler 'x' failed with an exception. Will retry.\nTraceback"))
        self.assertIn('raise exc', log["message"])
        self.assertIn("ValueError: boom", log["message"])

    def test_errors_mode_words_the_log(self):
        res = self.run_raising(KeyError("k"), errors=kopf.ErrorsMode.PERMANENT)
        self.assertIn("Will stop.", res.logs[0]["message"])

    def test_a_result_that_is_no_json_is_an_error(self):
        kopf.on.create(*KEX, id="x")(lambda **_: object())
        res = self.host.run("x", example())
        self.assertEqual(res.status, "error")
        self.assertIn("is not JSON", res.message)

    def test_unknown_handler_and_bad_request(self):
        res = self.host.call({"handler": "nope", "kind": "create"})
        self.assertEqual(res.status, "error")
        self.assertIn("has no handler 'nope'", res.message)
        raw = json.loads(_runtime.handle(b"not json"))
        self.assertEqual(raw["outcome"]["status"], "error")

    def test_system_exit_is_an_outcome_too(self):
        res = self.run_raising(SystemExit(3))
        self.assertEqual(res.status, "error")


class PatchTest(KopfTestCase):

    def test_patch_sections_fold_into_one_merge_patch(self):
        @kopf.on.create(*KEX, id="p")
        def p(patch, **_):
            _ = patch.spec  # reading adds nothing
            patch.status["phase"] = "done"
            patch.metadata.labels["l"] = "v"
            patch.meta.annotations["a"] = None
            patch["data"] = {"k": 1}

        res = self.host.run("p", example())
        self.assertEqual(res.patch, {"status": {"phase": "done"}, "metadata": {"labels": {"l": "v"},
                                     "annotations": {"a": None}}, "data": {"k": 1}})

    def test_patch_fns_become_json_patch_operations(self):
        @kopf.on.create(*KEX, id="p")
        def p(patch, **_):
            patch.fns.append(lambda body: body["spec"].update(size=5, extra=[1]))

        res = self.host.run("p", example(1))
        self.assertEqual(res.json_patch, [{"op": "replace", "path": "/spec/size", "value": 5},
                                          {"op": "add", "path": "/spec/extra", "value": [1]}])

    def test_an_empty_patch_is_no_patch(self):
        kopf.on.create(*KEX, id="p")(lambda patch, **_: patch.status)
        self.assertNotIn("patch", self.host.run("p", example()).response)

    def test_failures_keep_the_patch(self):
        @kopf.on.create(*KEX, id="p")
        def p(patch, **_):
            patch.status["tried"] = True
            raise kopf.TemporaryError("again", delay=1)
        res = self.host.run("p", example())
        self.assertEqual((res.status, res.patch), ("temporary", {"status": {"tried": True}}))


class AsyncTest(KopfTestCase):

    def test_async_handlers_run_to_completion(self):
        @kopf.on.create(*KEX, id="a")
        async def a(spec, **_):
            results = await asyncio.gather(double(spec["size"]), double(1))
            await asyncio.wait_for(asyncio.sleep(0), timeout=1)
            return {"sum": sum(results)}

        async def double(x):
            await asyncio.sleep(0.001)
            return 2 * x

        self.assertEqual(self.host.run("a", example(3)).result, {"sum": 8})

    def test_async_errors_are_outcomes(self):
        @kopf.on.create(*KEX, id="a")
        async def a(**_):
            await asyncio.sleep(0)
            raise kopf.TemporaryError("later", delay=2)
        self.assertEqual(self.host.run("a", example()).outcome,
                         {"status": "temporary", "message": "later", "delay": 2})

    def test_background_tasks_get_one_line_and_are_cancelled(self):
        @kopf.on.create(*KEX, id="a")
        async def a(**_):
            asyncio.get_running_loop().create_task(asyncio.sleep(3600))
            return "ok"
        res = self.host.run("a", example())
        self.assertEqual(res.result, "ok")
        self.assertEqual(len(res.logs), 1)
        self.assertIn("A background task (sleep) was still running", res.logs[0]["message"])

    def test_awaiting_what_cannot_finish_fails_clearly(self):
        @kopf.on.create(*KEX, id="a")
        async def a(**_):
            await asyncio.get_running_loop().create_future()
        res = self.host.run("a", example())
        self.assertEqual(res.status, "error")
        self.assertIn("nothing in the sandbox can finish", res.message)

    def test_run_in_executor_runs_inline(self):
        @kopf.on.create(*KEX, id="a")
        async def a(**_):
            return await asyncio.get_running_loop().run_in_executor(None, lambda: 42)
        self.assertEqual(self.host.run("a", example()).result, 42)


if __name__ == "__main__":
    unittest.main()
