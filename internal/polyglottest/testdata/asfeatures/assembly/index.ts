// The AssemblyScript SDK's features beyond allkinds, for TestAssemblyScriptFeatures
// on the control plane: one function under two resources of one kind (told
// apart by param), a callable resource selector, kopf.EVERYTHING of a group,
// sub-handlers that take more than one cycle, Kopf's kopf.exception, outbound
// HTTP to a declared host (and a refusal for another), and an index read
// whole by a probe when it is too large to travel in requests.
import * as kopf from "../../../../../guest-sdk/assemblyscript/assembly/index";
export { kopf_manifest, kopf_handle } from "../../../../../guest-sdk/assemblyscript/assembly/index";
import { Value } from "../../../../../guest-sdk/assemblyscript/assembly/index";

const G = "kopf.dev", V = "v1", P = "kopfexamples";
kopf.module("asfeatures", "0.1.0");
kopf.onCreate(G, V, P, "stamp", stamp).param(Value.str("kex"));
kopf.onCreate("", "v1", "configmaps", "stamp", stamp).param(Value.str("cm"));
kopf.onCreate("", "", "", "selected", selected).selectResources(isConfigMaps);
kopf.onCreate(G, "", kopf.EVERYTHING, "everything", everything);
kopf.onCreate(G, V, P, "parent", parent);
kopf.onCreate(G, V, P, "fetch", fetch).when(hasURL);
kopf.index(G, V, P, "by_field", byField);
kopf.onProbe("index_size", indexSize);
kopf.allowHosts(["127.0.0.1"]);

function stamp(ctx: kopf.Context): kopf.Result {
  ctx.patch.setStr("metadata.annotations.created-by", ctx.param().str);
  return kopf.ok();
}

function isConfigMaps(r: kopf.ResourceInfo): bool { return r.group.length == 0 && r.plural == "configmaps"; }

function selected(ctx: kopf.Context): kopf.Result {
  ctx.patch.setStr("metadata.annotations.selected", "yes");
  return kopf.ok();
}

function everything(ctx: kopf.Context): kopf.Result {
  ctx.patch.setStr("metadata.annotations.everything", "yes");
  const err = ctx.exception([ctx.body()], "", "everything saw it:", "no error");
  return err === null ? kopf.ok() : kopf.arbitrary(err.toString());
}

function parent(ctx: kopf.Context): kopf.Result {
  ctx.subhandler("first", first);
  ctx.subhandler("later", later);
  return kopf.ok(Value.str("parent done"));
}

function first(ctx: kopf.Context): kopf.Result { return kopf.ok(Value.str("first done")); }

// Fails at its first attempt: the parent waits a cycle for it.
function later(ctx: kopf.Context): kopf.Result {
  if (ctx.retry == 0) return kopf.temporaryAfter("not yet", 1);
  return kopf.ok(Value.str("later done"));
}

function hasURL(ctx: kopf.Context): bool { return ctx.spec().strAt("url").length > 0; }

function fetch(ctx: kopf.Context): kopf.Result {
  const res = kopf.http("GET", ctx.spec().strAt("url")).header("X-Guest", ctx.name).send();
  return kopf.ok(kopf.fields().setNum("status", res.status).setStr("body", res.body));
}

function byField(ctx: kopf.Context): kopf.Result {
  return kopf.ok(kopf.fields().setStr(ctx.spec().strAt("field"), ctx.name));
}

function indexSize(ctx: kopf.Context): kopf.Result {
  return kopf.ok(Value.num(<f64>ctx.index("by_field").length));
}
