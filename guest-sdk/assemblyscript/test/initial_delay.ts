// Kopf's callable initial_delay (test/run.mjs): marked in the manifest,
// and the host's "initialDelay" call gets the seconds the function computes.
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";

kopf.module("delays", "0.1.0");
kopf.timer("kopf.dev", "v1", "kopfexamples", "later", tick).interval(60).initialDelayFrom(fromSpec);

function tick(ctx: kopf.Context): kopf.Result { return kopf.ok(); }
function fromSpec(ctx: kopf.Context): f64 { return ctx.spec().get("delay").num; }
