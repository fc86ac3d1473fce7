// The richer example that kopf-wasm's guest SDKs share, in AssemblyScript:
// the same operator as examples/children (Go) and examples/rust/children,
// whose end-to-end test (internal/polyglottest, TestChildren) asserts the
// same outcomes for the three. On every KopfExample:
//
// - create_child makes a ConfigMap <name>-child holding spec.field, adopted
//   by the parent (a controller owner reference, the parent's namespace and
//   labels), so the garbage collector deletes it with the parent; result
//   {"child": "<name>-child"} under status.create_child;
// - sync (a field handler on spec.field) copies the new value into the
//   ConfigMap with a merge patch; result {"field": value} under
//   status["sync/spec.field"];
// - heartbeat, a timer every second, counts its runs in
//   status.heartbeat.beats.
import * as kopf from "../../../../guest-sdk/assemblyscript/assembly/index";
export { kopf_manifest, kopf_handle } from "../../../../guest-sdk/assemblyscript/assembly/index";
import { Value } from "../../../../guest-sdk/assemblyscript/assembly/index";

const GROUP = "kopf.dev";
const VERSION = "v1";
const PLURAL = "kopfexamples";

kopf.module("children", "0.1.0");
kopf.onCreate(GROUP, VERSION, PLURAL, "create_child", createChild);
kopf.onField(GROUP, VERSION, PLURAL, "sync", sync).field("spec.field");
kopf.timer(GROUP, VERSION, PLURAL, "heartbeat", heartbeat).interval(1);
kopf.permit("", "configmaps", ["create", "patch"]);

// A field's value as the ConfigMap stores it.
function text(v: Value): string {
  if (v.isNull) return "";
  const json = v.toJSON();
  return json.startsWith("\"") ? v.str : json;
}

function createChild(ctx: kopf.Context): kopf.Result {
  const name = ctx.name + "-child";
  const cm = kopf.fields().setStr("apiVersion", "v1").setStr("kind", "ConfigMap")
    .set("metadata", kopf.fields().setStr("name", name))
    .set("data", kopf.fields().setStr("field", text(ctx.spec().get("field"))));
  ctx.adopt(cm);
  ctx.client("", "v1", "configmaps").namespace(ctx.namespace).create(cm);
  const e = ctx.lastError;
  if (e !== null && !e.alreadyExists) return kopf.arbitrary(e.toString()); // retried after the backoff
  ctx.info("child created", kopf.fields().setStr("configmap", name));
  return kopf.ok(kopf.fields().setStr("child", name));
}

function sync(ctx: kopf.Context): kopf.Result {
  const value = text(ctx.new());
  const patch = kopf.fields().set("data", kopf.fields().setStr("field", value));
  ctx.client("", "v1", "configmaps").namespace(ctx.namespace).patch(ctx.name + "-child", "merge", patch);
  const e = ctx.lastError;
  if (e !== null) {
    if (e.notFound) return kopf.temporaryAfter("the child does not exist yet", 1);
    return kopf.arbitrary(e.toString());
  }
  ctx.info("child synced", kopf.fields().setStr("field", value));
  return kopf.ok(kopf.fields().setStr("field", value));
}

function heartbeat(ctx: kopf.Context): kopf.Result {
  const beats = ctx.status().path("heartbeat.beats").num;
  return kopf.ok(kopf.fields().setNum("beats", beats + 1));
}
