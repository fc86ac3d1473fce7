// The module of abi/testdata/manifest.json, registered as an author would:
// its manifest, responses and host calls must equal the ABI's golden
// fixtures byte for byte (test/run.mjs compares them).
import * as kopf from "../assembly/index";
export { kopf_manifest, kopf_handle } from "../assembly/index";
import { Value } from "../assembly/json";

kopf.module("kopfexample", "1.0.0");
kopf.onCreate("kopf.dev", "v1", "kopfexamples", "create_fn", createFn).retries(3).backoff(5)
  .param(Value.object().setStr("greeting", "hello"));
kopf.onUpdate("kopf.dev", "v1", "kopfexamples", "update_fn", updateFn).label("app", kopf.Filter.str("demo")).label("skip", kopf.ABSENT);
kopf.onDelete("kopf.dev", "v1", "kopfexamples", "delete_fn", deleteFn).errors(kopf.ERRORS_PERMANENT).timeout(60);
kopf.onField("kopf.dev", "v1", "kopfexamples", "field_fn", fieldFn).field("spec.field").new(kopf.PRESENT).annotation("owner", kopf.PRESENT);
kopf.timer("kopf.dev", "v1", "kopfexamples", "ping", ping).interval(10).idle(5).sharp();
kopf.daemon("", "v1", "pods", "monitor", monitor).when(isDemo).initialDelay(1).cancellationTimeout(3);
kopf.onValidate("kopf.dev", "", "kopfexamples", "check", check).operations(["CREATE", "UPDATE"]);
kopf.onStartup("configure", configure);
kopf.permit("", "pods", ["get", "list", "create"]);
kopf.allowHosts(["api.example.com"]);

// Gives response-success.json and log.json.
function createFn(ctx: kopf.Context): kopf.Result {
  ctx.info("child created", kopf.fields().setStr("child", ctx.name + "-child"));
  ctx.patch.setStr("metadata.labels.handled", "yes");
  ctx.patch.add("/spec/items/-", Value.str("x"));
  const memo = ctx.memo();
  memo.setNum("seen", memo.get("seen").num + 1);
  return kopf.ok(kopf.fields().setStr("message", ctx.param().strAt("greeting")));
}

// Gives response-temporary.json.
function updateFn(ctx: kopf.Context): kopf.Result {
  return kopf.temporaryAfter("not ready yet", 5);
}

// Makes the request refused in kube-response-forbidden.json.
function deleteFn(ctx: kopf.Context): kopf.Result {
  if (!ctx.client("", "v1", "pods").namespace(ctx.namespace).delete(ctx.name + "-child")) {
    const e = ctx.lastError as kopf.ApiError;
    if (e.forbidden && e.origin == "host") return kopf.arbitrary("refused by the host: " + e.toString());
    return kopf.arbitrary(e.toString());
  }
  return kopf.ok();
}

function fieldFn(ctx: kopf.Context): kopf.Result {
  return kopf.ok(kopf.fields().set("old", ctx.old()).set("new", ctx.new()));
}

function ping(ctx: kopf.Context): kopf.Result { return kopf.ok(Value.str("pong")); }

// Sleeps until the host stops it and counts its rounds.
function monitor(ctx: kopf.Context): kopf.Result {
  let rounds = 0;
  while (!ctx.sleepUntilStopped(2)) rounds++;
  return kopf.ok(kopf.fields().setNum("rounds", rounds).setStr("reason", ctx.stopReason));
}

function isDemo(ctx: kopf.Context): bool { return ctx.labels().strAt("app") == "demo"; }

// Gives response-validate.json.
function check(ctx: kopf.Context): kopf.Result {
  if (ctx.spec().strAt("field").length == 0) {
    ctx.warnings.push("field is deprecated");
    return kopf.admissionError("spec.field must not be empty", 422);
  }
  return kopf.ok();
}

function configure(ctx: kopf.Context): kopf.Result { return kopf.ok(); }

// ---- unit tests of the SDK's own parts, called by test/run.mjs ----

function eq(got: string, want: string): void {
  if (got != want) {
    throw new Error("got " + got + ", want " + want);
  }
}

export function test_log_levels(): void {
  // [record level, host level, written]: an unknown record level is info,
  // an unknown host level lets everything through.
  const cases: Array<Array<string>> = [
    ["debug", "", "y"], ["debug", "info", "n"], ["info", "info", "y"], ["warning", "error", "n"],
    ["error", "warning", "y"], ["warn", "info", "y"], ["warn", "warning", "n"], ["debug", "trace", "y"],
  ];
  for (let i = 0; i < cases.length; i++) {
    eq(kopf.logLevelEnabled(cases[i][0], cases[i][1]) ? "y" : "n", cases[i][2]);
  }
}

export function test_numbers(): void {
  const cases: Array<f64> = [5, 12.5, 1e21, 1e20, 1e-6, 1e-7, 1.5e-7, 123456789012345678, 1e300, -2.5e-10, 0.1, 0];
  const want = ["5", "12.5", "1e+21", "100000000000000000000", "0.000001", "1e-7", "1.5e-7", "123456789012345680", "1e+300", "-2.5e-10", "0.1", "0"];
  for (let i = 0; i < cases.length; i++) eq(Value.num(cases[i]).toJSON(), want[i]);
}

export function test_index_key(): void {
  // Kopf's tuple keys: the compact JSON array, as Go's encoding/json writes it.
  eq(kopf.indexKey([Value.str("default"), Value.str("a<b")]), "[\"default\",\"a\\u003cb\"]");
  eq(kopf.indexKey([]), "[]");
}

export function test_strings(): void {
  eq(Value.str("a\b\f\n\u0001<>&\u2028\u2029\u007f é\"\\/").toJSON(), "\"a\\b\\f\\n\\u0001\\u003c\\u003e\\u0026\\u2028\\u2029\u007f é\\\"\\\\/\"");
}

export function test_parse(): void {
  eq((Value.parse(" {\"b\":1, \"a\":[true,false,null,\"x\\u00e9\\ud83d\\ude00\"], \"a\":2} ") as Value).toJSON(), "{\"a\":2,\"b\":1}");
  eq((Value.parse("\"\\ud800x\"") as Value).toJSON(), "\"\uFFFDx\"");
  const bad = ["", "[1,]", "{\"a\"1}", "01", "1.", "-", "tru", "\"\t\"", "[1] x", "\"\\x\"", "{,}", "1e", "1e999"];
  for (let i = 0; i < bad.length; i++) if (Value.parse(bad[i]) !== null) throw new Error("parsed " + bad[i]);
  eq((Value.parse("[1.5e3,-0,{\"é\":{}},[]]") as Value).toJSON(), "[1500,-0,{\"é\":{}},[]]");
}

export function test_patch_and_adopt(): void {
  const p = new kopf.Patch();
  if (!p.empty) throw new Error("new patch not empty");
  p.setStr("metadata.labels.handled", "yes");
  p.unset("spec.old");
  p.merge(Value.object().set("metadata", Value.object().set("annotations", Value.object().setStr("a", "b"))));
  p.add("/spec/items/-", Value.str("x"));
  p.remove("/spec/gone");
  p.move("/a", "/b");
  eq(p.toJSON(), "{\"merge\":{\"metadata\":{\"annotations\":{\"a\":\"b\"},\"labels\":{\"handled\":\"yes\"}},\"spec\":{\"old\":null}},\"json\":[{\"op\":\"add\",\"path\":\"/spec/items/-\",\"value\":\"x\"},{\"op\":\"remove\",\"path\":\"/spec/gone\"},{\"op\":\"move\",\"path\":\"/b\",\"from\":\"/a\"}]}");
  const owner = Value.parse("{\"apiVersion\":\"kopf.dev/v1\",\"kind\":\"KopfExample\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\",\"labels\":{\"team\":\"a\",\"x\":\"1\"}}}") as Value;
  const child = Value.parse("{\"metadata\":{\"labels\":{\"x\":\"2\"}}}") as Value;
  kopf.adopt(child, owner);
  kopf.adopt(child, owner);
  eq(child.toJSON(), "{\"metadata\":{\"generateName\":\"p-\",\"labels\":{\"team\":\"a\",\"x\":\"2\"},\"namespace\":\"ns\",\"ownerReferences\":[{\"apiVersion\":\"kopf.dev/v1\",\"blockOwnerDeletion\":true,\"controller\":true,\"kind\":\"KopfExample\",\"name\":\"p\",\"uid\":\"u1\"}]}}");
}

export function test_api_error(): void {
  const e = new kopf.ApiError(409, "AlreadyExists", "x exists", "cluster", "create pods ns/x");
  if (!e.alreadyExists || e.conflict || e.notFound) throw new Error("classification");
  eq(e.toString(), "kopf: create pods ns/x: x exists (409 AlreadyExists from the cluster)");
}

export function test_hierarchy_options(): void {
  const owner = Value.parse("{\"apiVersion\":\"kopf.dev/v1\",\"kind\":\"KopfExample\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\",\"labels\":{\"team\":\"a\"}}}") as Value;
  // forced and strict: the owner's name, namespace and labels win; nested templates get the labels.
  const child = Value.parse("{\"metadata\":{\"generateName\":\"x-\",\"namespace\":\"other\",\"labels\":{\"team\":\"b\"}},\"spec\":{\"template\":{\"metadata\":{}}}}") as Value;
  kopf.adopt(child, owner, kopf.hierarchy().forced().strict().nested(["spec.template", "spec.missing"]).controller(false).blockOwnerDeletion(false));
  eq(child.toJSON(), "{\"metadata\":{\"labels\":{\"team\":\"a\"},\"name\":\"p\",\"namespace\":\"ns\",\"ownerReferences\":[{\"apiVersion\":\"kopf.dev/v1\",\"blockOwnerDeletion\":false,\"controller\":false,\"kind\":\"KopfExample\",\"name\":\"p\",\"uid\":\"u1\"}]},\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"team\":\"a\"}}}}}");
  // Not forced: what the child has stays.
  const kept = Value.parse("{\"metadata\":{\"name\":\"mine\",\"namespace\":\"other\",\"labels\":{\"team\":\"b\"}}}") as Value;
  kopf.adopt(kept, owner);
  eq(kept.strAt("metadata.name") + " " + kept.strAt("metadata.namespace") + " " + kept.strAt("metadata.labels.team"), "mine other b");
  kopf.removeOwnerReference(kept, owner);
  eq(kept.get("metadata").get("ownerReferences").toJSON(), "[]");
  kopf.removeOwnerReference(Value.object(), owner); // no metadata: nothing to do
  eq(kopf.buildObjectReference(owner).toJSON(), "{\"apiVersion\":\"kopf.dev/v1\",\"kind\":\"KopfExample\",\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u1\"}");
  eq(kopf.buildObjectReference(Value.parse("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}") as Value).toJSON(), "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n\",\"uid\":\"\"}");
  // harmonize without strict, forced: a generateName replaces the name.
  const named = Value.parse("{\"metadata\":{\"name\":\"mine\"}}") as Value;
  kopf.harmonize(named, "p", kopf.hierarchy().forced());
  eq(named.toJSON(), "{\"metadata\":{\"generateName\":\"p-\"}}");
}

export function test_typed_getters(): void {
  const v = Value.parse("{\"spec\":{\"n\":3.9,\"b\":true,\"l\":[1,2],\"z\":null},\"metadata\":{\"generation\":7,\"finalizers\":[\"a\"]}}") as Value;
  eq(v.intAt("spec.n").toString() + " " + v.numAt("spec.n").toString() + " " + (v.boolAt("spec.b") ? "t" : "f") + " " + v.listAt("spec.l").length.toString(), "3 3.9 t 2");
  eq((v.hasPath("spec.z") ? "y" : "n") + (v.hasPath("spec.q") ? "y" : "n") + (v.hasPath("spec.n.x") ? "y" : "n"), "ynn");
  const o = kopf.view<kopf.KubeObject>(v);
  eq(o.metadata.generation.toString() + " " + o.metadata.finalizers.join(",") + " " + o.metadata.label("none"), "7 a ");
}
