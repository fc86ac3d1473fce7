// Ids declared twice wrongly: the manifest export must fail with every
// mistake (test/run.mjs checks the message).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";

kopf.module("several-mistakes", "0.1.0");
kopf.onCreate("", "v1", "pods", "two-functions", one);
kopf.onUpdate("", "v1", "pods", "two-functions", other);
kopf.onCreate("", "v1", "pods", "one-kind-twice", one);
kopf.onCreate("", "v1", "pods", "one-kind-twice", one);
kopf.onCreate("", "v1", "pods", "daemon-too", one);
kopf.daemon("", "v1", "pods", "daemon-too", one);
kopf.daemon("", "v1", "pods", "both-delays", one).initialDelay(1).initialDelayFrom(never);
kopf.onCreate("", "v1", "pods", "create-delayed", one).initialDelayFrom(never);

function one(ctx: kopf.Context): kopf.Result { return kopf.ok(); }
function other(ctx: kopf.Context): kopf.Result { return kopf.ok(); }
function never(ctx: kopf.Context): f64 { return 0; }
