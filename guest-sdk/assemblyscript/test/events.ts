// Events about other objects (Kopf's kopf.event(objs, ...)): each object's
// reference, and nothing for an empty list (test/run.mjs).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";
import { Value } from "../assembly/json";

kopf.module("events", "0.1.0");
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "post", post);

function post(ctx: kopf.Context): kopf.Result {
  const pod = Value.parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\"}}") as Value;
  const node = Value.parse("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}}") as Value;
  const none = ctx.postEventAbout([], kopf.EVENT_NORMAL, "Nothing", "about no object");
  if (none !== null) return kopf.arbitrary(none.toString());
  const err = ctx.postEventAbout([pod, node], kopf.EVENT_WARNING, "Pressure", "full");
  if (err !== null) return kopf.arbitrary(err.toString());
  return kopf.ok();
}
