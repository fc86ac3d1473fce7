"""kopf.kube and the kubernetes client shim: the host requests they make."""

import unittest

from helpers import KopfTestCase, kopf

import kubernetes


class KubeTest(KopfTestCase):

    def setUp(self):
        super().setUp()
        self.host.check_permissions = False

    def last(self):
        return self.host.kube_requests[-1]

    def test_dynamic_client_request_shapes(self):
        kopf.kube.create("v1", "ConfigMap", {"metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "1"}})
        self.assertEqual(self.last(), {"verb": "create", "version": "v1", "resource": "configmaps",
                                       "namespace": "ns", "body": {"metadata": {"name": "c", "namespace": "ns"},
                                                                   "data": {"a": "1"}}})
        got = kopf.kube.get("v1", "configmaps", "c", namespace="ns")
        self.assertEqual((got.metadata.name, got["data"]["a"], got.spec), ("c", "1", None))
        kopf.kube.patch("v1", "configmaps", "c", {"data": {"b": "2"}}, namespace="ns")
        self.assertEqual(self.last()["patchType"], "merge")
        self.host.kube = lambda req: {"body": {}} if req["resource"] == "deployments" else None
        kopf.kube.patch("apps/v1", "Deployment", "d", [{"op": "remove", "path": "/x"}], namespace="ns")
        self.assertEqual({k: self.last()[k] for k in ("group", "version", "resource", "patchType")},
                         {"group": "apps", "version": "v1", "resource": "deployments", "patchType": "json"})
        items = kopf.kube.list("v1", "configmaps", namespace="ns", label_selector="app=x")
        self.assertEqual((items, self.last()["labelSelector"]), ([], "app=x"))
        self.assertEqual(len(kopf.kube.list("v1", "configmaps")), 1)
        kopf.kube.delete("v1", "configmaps", "c", namespace="ns")
        with self.assertRaises(kopf.kube.ApiError) as caught:
            kopf.kube.get("v1", "configmaps", "c", namespace="ns")
        self.assertEqual(caught.exception.status, 404)

    def test_plurals_of_kinds(self):
        got = [kopf.kube.plural_of(k) for k in ("Pod", "NetworkPolicy", "Ingress", "Endpoints", "pods", "Status")]
        self.assertEqual(got, ["pods", "networkpolicies", "ingresses", "endpoints", "pods", "statuses"])

    def test_undeclared_requests_are_refused_as_the_host_does(self):
        self.host.check_permissions = True
        kopf.permit("", "pods", "get")
        with self.assertRaises(kopf.kube.ApiError) as caught:
            kopf.kube.delete("v1", "pods", "x", namespace="ns")
        self.assertEqual((caught.exception.status, caught.exception.origin), (403, "host"))
        self.assertIn("kopf.permit('', 'pods', 'delete')", str(caught.exception))
        with self.assertRaises(kopf.kube.ApiError) as caught:
            kopf.kube.get("v1", "pods", "x", namespace="ns")
        self.assertEqual(caught.exception.status, 404)  # allowed, and not there

    def test_permit_checks_verbs(self):
        with self.assertRaisesRegex(ValueError, "needs RBAC verbs"):
            kopf.permit("", "pods", "read")

    def test_kubernetes_client_as_kopfs_walkthrough_uses_it(self):
        kubernetes.config.load_incluster_config()
        kubernetes.config.load_kube_config()
        api = kubernetes.client.CoreV1Api()
        data = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "claim"},
                "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
        obj = api.create_namespaced_persistent_volume_claim(namespace="default", body=data)
        self.assertEqual(obj.metadata.name, "claim")
        self.assertEqual(self.last()["resource"], "persistentvolumeclaims")
        api.patch_namespaced_persistent_volume_claim(namespace="default", name="claim",
                                                     body={"spec": {"resources": {"requests": {"storage": "2Gi"}}}})
        self.assertEqual((self.last()["verb"], self.last()["patchType"]), ("patch", "strategic"))
        listed = api.list_namespaced_persistent_volume_claim("default")
        self.assertEqual([o.metadata.name for o in listed.items], ["claim"])
        api.delete_namespaced_persistent_volume_claim("claim", "default")
        with self.assertRaises(kubernetes.client.ApiException) as caught:
            api.read_namespaced_persistent_volume_claim("claim", "default")
        self.assertEqual(caught.exception.status, 404)
        self.assertIn('"code": 404', caught.exception.body)
        from kubernetes.client.rest import ApiException
        self.assertIs(ApiException, kubernetes.client.ApiException)

    def test_typed_apis_and_models(self):
        self.host.kube = lambda req: {"body": {}}  # shapes only: every request succeeds
        pod = kubernetes.client.V1Pod(metadata=kubernetes.client.V1ObjectMeta(name="p", owner_references=None))
        self.assertEqual(pod, {"metadata": {"name": "p"}})
        kubernetes.client.AppsV1Api().create_namespaced_deployment("ns", {"metadata": {"name": "d"}})
        self.assertEqual((self.last()["group"], self.last()["resource"]), ("apps", "deployments"))
        kubernetes.client.CoreV1Api().create_namespace({"metadata": {"name": "n"}})
        self.assertEqual((self.last()["resource"], "namespace" in self.last()), ("namespaces", False))
        kubernetes.client.CustomObjectsApi().patch_namespaced_custom_object(
            "kopf.dev", "v1", "ns", "kopfexamples", "x", {"spec": {}})
        self.assertEqual({k: self.last()[k] for k in ("group", "resource", "patchType")},
                         {"group": "kopf.dev", "resource": "kopfexamples", "patchType": "merge"})
        kubernetes.client.CoreV1Api().patch_namespaced_pod_status("p", "ns", {"status": {}})
        self.assertEqual(self.last()["subresource"], "status")
        with self.assertRaisesRegex(AttributeError, "use kopf.kube"):
            kubernetes.client.CoreV1Api().connect_get_namespaced_pod_exec
        with self.assertRaisesRegex(AttributeError, "use kopf.kube"):
            kubernetes.client.Watch

    def test_kopf_adopts_client_models(self):
        @kopf.on.create("kopf.dev", "v1", "kopfexamples", id="c")
        def c(**_):
            pod = kubernetes.client.V1Pod(metadata=kubernetes.client.V1ObjectMeta(labels={"a": "b"}))
            kopf.adopt(pod)
            obj = kubernetes.client.CoreV1Api().create_namespaced_pod(pod.metadata.namespace, pod)
            kopf.info(obj.to_dict(), reason="Created", message=obj.metadata.name)
            return obj.metadata.name

        body = {"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
                "metadata": {"name": "ex", "namespace": "ns", "uid": "u"}}
        res = self.host.run("c", body)
        self.assertEqual(res.status, "success", res.message)
        self.assertTrue(res.result.startswith("ex-"))
        self.assertEqual(res.events[0]["reason"], "Created")


if __name__ == "__main__":
    unittest.main()
