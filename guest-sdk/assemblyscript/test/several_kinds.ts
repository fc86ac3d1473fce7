// One function under several changing kinds (Kopf's @kopf.on.resume with
// @kopf.on.create): one id, once per kind, each entry with its own
// filters, picked by the request's kind (test/run.mjs).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";

kopf.module("several", "0.1.0");
kopf.onResume("", "v1", "pods", "reconcile", reconcile).when(never);
kopf.onCreate("", "v1", "pods", "reconcile", reconcile);
kopf.onUpdate("", "v1", "pods", "reconcile", reconcile).label("app", kopf.Filter.str("web"));

function reconcile(ctx: kopf.Context): kopf.Result { return kopf.ok(kopf.Value.str(ctx.reason)); }
function never(ctx: kopf.Context): bool { return false; }
