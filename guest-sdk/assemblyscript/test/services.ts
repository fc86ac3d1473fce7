// The host's services beyond Kubernetes requests: a whole large index,
// outbound HTTP to a declared host, Events of Kopf's kopf.exception,
// info and warn, and typed access to the object (test/run.mjs).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";
import { Value } from "../assembly/json";

const G = "kopf.dev", V = "v1", P = "kopfexamples";
kopf.module("services", "0.1.0");
kopf.index(G, V, P, "by_field", byField);
kopf.onProbe("index_size", indexSize);
kopf.onCreate(G, V, P, "fetch", fetch).param(Value.str("https://api.example.com/items"));
kopf.onCreate(G, V, P, "fetch_other", fetch).param(Value.str("https://evil.example.org/"));
kopf.onCreate(G, V, P, "exception", exception);
kopf.onCreate(G, V, P, "typed", typed);
kopf.allowHosts(["*.example.com"]);

function byField(ctx: kopf.Context): kopf.Result {
  return kopf.ok(kopf.fields().setStr(ctx.spec().strAt("field"), ctx.name));
}

// The number of keys and of values in the index, read whole.
function indexSize(ctx: kopf.Context): kopf.Result {
  const idx = ctx.index("by_field");
  let values = 0;
  const keys = idx.keys();
  for (let i = 0; i < keys.length; i++) values += idx.get(keys[i]).length;
  ctx.index("by_field"); // read once per call
  return kopf.ok(kopf.fields().setNum("keys", keys.length).setNum("values", values));
}

function fetch(ctx: kopf.Context): kopf.Result {
  const res = kopf.http("POST", ctx.param().str).header("X-Guest", "kopf").json(kopf.fields().setStr("name", ctx.name)).send();
  const body = res.json();
  return kopf.ok(kopf.fields().setNum("status", res.status).setStr("reply", res.header("X-Reply"))
    .set("body", body === null ? Value.str(res.body) : body as Value));
}

function exception(ctx: kopf.Context): kopf.Result {
  const errs = new Array<string>();
  const e1 = ctx.exception([ctx.body()], "", "failed:", "boom");
  if (e1 !== null) errs.push(e1.toString());
  const e2 = ctx.exception([], "Nothing", "about none");
  if (e2 !== null) errs.push(e2.toString());
  const e3 = ctx.infoAbout([ctx.body()], "Fine", "all good");
  if (e3 !== null) errs.push(e3.toString());
  const e4 = ctx.warnAbout([ctx.body()], "Careful", "watch out");
  if (e4 !== null) errs.push(e4.toString());
  return errs.length > 0 ? kopf.arbitrary(errs.join("; ")) : kopf.ok();
}

class Example extends kopf.KubeObject {
  get field(): string { return this.spec.strAt("field"); }
  get replicas(): i64 { return this.spec.intAt("replicas"); }
  get ready(): bool { return this.status.boolAt("ready"); }
}

function typed(ctx: kopf.Context): kopf.Result {
  const ex = ctx.bodyAs<Example>();
  const again = kopf.view<Example>(ctx.body());
  return kopf.ok(kopf.fields().setStr("field", ex.field).setNum("replicas", <f64>ex.replicas).setBool("ready", ex.ready)
    .setStr("name", ex.metadata.name).setStr("team", ex.metadata.label("team")).setNum("generation", <f64>again.metadata.generation)
    .setStr("kind", again.kind));
}
