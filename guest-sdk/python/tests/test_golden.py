"""The SDK produces and decodes the ABI's golden fixtures (abi/testdata)."""

import json
import unittest

from helpers import KopfTestCase, fixture, kopf

from kopf import _runtime, _structs


class GoldenTest(KopfTestCase):

    def setUp(self):
        super().setUp()
        self.import_fresh("golden_module")

    def test_manifest_is_the_golden_one_byte_for_byte(self):
        got = _structs.dumps(json.loads(_runtime.manifest()), indent=2) + "\n"
        self.assertEqual(got, fixture("manifest.json").decode())

    def test_request_update_decodes_into_kwargs(self):
        seen = {}

        @kopf.on.update("kopf.dev", "v1", "kopfexamples", id="update_fn2")
        def handler(**kwargs):
            seen.update(kwargs)
            kwargs["memo"]["seen"] += 1

        req = json.loads(fixture("request-update.json"))
        req["handler"] = "update_fn2"
        res = self.host.call(req)
        self.assertEqual(res.status, "success")
        self.assertEqual(seen["name"], "kopf-example-1")
        self.assertEqual(seen["labels"], {"app": "demo"})
        self.assertEqual(seen["meta"].uid, "6a2c4f0e-0000-4000-8000-000000000001")
        self.assertEqual(seen["spec"].field, "new")
        self.assertEqual(seen["reason"], kopf.Reason.UPDATE)
        self.assertEqual(seen["old"], {"spec": {"field": "old"}})
        self.assertEqual(list(seen["diff"]), [("change", ("spec", "field"), "old", "new")])
        self.assertEqual(seen["diff"][0].op, "change")
        self.assertEqual(seen["retry"], 2)
        self.assertEqual(seen["runtime"].total_seconds(), 12.5)
        self.assertEqual(seen["started"].year, 2026)
        self.assertEqual(res.memo, {"seen": 2})

    def test_response_success_is_produced(self):
        @kopf.on.create("kopf.dev", "v1", "kopfexamples", id="make")
        def make(patch, memo, **_):
            patch.metadata.labels["handled"] = "yes"
            patch.json_patch.append({"op": "add", "path": "/spec/items/-", "value": "x"})
            memo.seen = 2
            return {"message": "hello"}

        req = json.loads(fixture("request-update.json"))
        req.update(handler="make", kind="create", memo={"seen": 1})
        raw = _runtime.handle(json.dumps(req).encode())
        self.assertEqual(_structs.dumps(json.loads(raw), indent=2) + "\n",
                         fixture("response-success.json").decode())

    def test_response_temporary_is_produced(self):
        @kopf.on.create("kopf.dev", "v1", "kopfexamples", id="wait")
        def wait(**_):
            raise kopf.TemporaryError("not ready yet", delay=5)

        req = json.loads(fixture("request-update.json"))
        req.update(handler="wait", kind="create", memo=None)
        raw = _runtime.handle(json.dumps(req).encode())
        self.assertEqual(json.loads(raw), json.loads(fixture("response-temporary.json")))

    def test_validate_request_and_response(self):
        raw = _runtime.handle(fixture("request-validate.json"))
        self.assertEqual(_structs.dumps(json.loads(raw), indent=2) + "\n",
                         fixture("response-validate.json").decode())

    def test_subhandlers_request_and_response(self):
        @kopf.on.create("kopf.dev", "v1", "kopfexamples", id="create_items")
        def create_items(**_):
            for item in ["a", "b", "c"]:
                @kopf.subhandler(id=f"add-{item}", retries=5)
                def add(item=item, **_):
                    if item == "b":
                        raise kopf.TemporaryError("b is not ready yet", delay=4)
                    return {"configMap": f"fleet-{item}"}

        # The fixtures are no pair: in the response add-b is due (not sleeping).
        req = json.loads(fixture("request-subhandlers.json"))
        del req["subhandlers"][1]["sleeping"]
        raw = _runtime.handle(json.dumps(req).encode())
        self.assertEqual(_structs.dumps(json.loads(raw), indent=2) + "\n",
                         fixture("response-children.json").decode())
        # As the request has it, add-b sleeps: registered, not called.
        res = json.loads(_runtime.handle(fixture("request-subhandlers.json")))
        self.assertEqual(res["outcome"], {"status": "children"})
        self.assertEqual([s.get("outcome") for s in res["subhandlers"]],
                         [None, None, {"status": "success"}])

    def test_kube_request_shape(self):
        kopf.permit("", "pods", "patch")

        @kopf.on.create("kopf.dev", "v1", "kopfexamples", id="child")
        def child(**_):
            kopf.kube.apply("v1", "pods", {"apiVersion": "v1", "kind": "Pod",
                                           "metadata": {"name": "kopf-example-1-child"}},
                            field_manager="kopfexample", force=True, namespace="default")

        res = self.host.run("child", json.loads(fixture("request-update.json"))["body"], force=True)
        self.assertEqual(res.status, "success", res.message)
        self.assertEqual(res.kube_requests[0], json.loads(fixture("kube-request.json")))

    def test_kube_response_forbidden_raises(self):
        def deny(req):
            return json.loads(fixture("kube-response-forbidden.json"))
        self.host.kube = deny
        self.host.check_permissions = False
        with self.assertRaises(kopf.kube.ApiError) as caught:
            kopf.kube.delete("v1", "pods", "x", namespace="default")
        self.assertEqual(caught.exception.status, 403)
        self.assertEqual(caught.exception.origin, "host")
        self.assertIn("did not declare permission to delete pods", str(caught.exception))

    def test_log_record_shape(self):
        @kopf.on.create("kopf.dev", "v1", "kopfexamples", id="logs")
        def logs(logger, **_):
            logger.info("child created", extra={"kopf_fields": {"child": "kopf-example-1-child"}})

        res = self.host.run("logs", json.loads(fixture("request-update.json"))["body"], force=True)
        self.assertEqual(res.logs, [json.loads(fixture("log.json"))])


if __name__ == "__main__":
    unittest.main()
