// The AssemblyScript SDK's tests: builds test/golden.ts (the module of
// abi/testdata, plus unit tests of the SDK's parts as exports named test_*)
// and the example modules, runs them in Node on a fake host (fakehost.mjs),
// and checks the golden fixtures byte for byte and the examples' handlers.
import { execFileSync } from "node:child_process";
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { Host, declaredWhyNot, callbackRefusal } from "./fakehost.mjs";

const sdk = join(dirname(fileURLToPath(import.meta.url)), "..");
const root = join(sdk, "..", "..");
const out = mkdtempSync(join(tmpdir(), "kopf-as-test-"));

// Builds an entry file as hack/guest-build.sh does.
function build(entry, name) {
  const file = join(out, name + ".wasm");
  execFileSync(join(sdk, "node_modules", ".bin", "asc"), [entry, "--config", join(sdk, "asconfig.json"), "--target", "release", "--outFile", file], { stdio: "inherit", cwd: root });
  return readFileSync(file);
}

// Go's json.Indent(dst, src, "", "  ") of compact JSON, plus a newline:
// the fixtures are json.MarshalIndent output.
function indented(compact) {
  let out = "", depth = 0, inStr = false;
  const nl = (d) => "\n" + "  ".repeat(d);
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i];
    if (inStr) {
      if (c === "\\") { out += compact.substr(i, 2); i++; continue; }
      if (c === '"') inStr = false;
      out += c;
      continue;
    }
    if (c === '"') { inStr = true; out += c; }
    else if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      if (compact[i + 1] === close) { out += c + close; i++; continue; }
      out += c + nl(++depth);
    } else if (c === "}" || c === "]") out += nl(--depth) + c;
    else if (c === ",") out += "," + nl(depth);
    else if (c === ":") out += ": ";
    else out += c;
  }
  return out + "\n";
}
const fixture = (name) => readFileSync(join(root, "abi", "testdata", name), "utf8");

let failed = 0, passed = 0;
function test(name, fn) {
  try {
    fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.message}`);
  }
}

const golden = build(join(sdk, "test", "golden.ts"), "golden");
const example = {
  apiVersion: "kopf.dev/v1", kind: "KopfExample",
  metadata: { name: "kopf-example-1", namespace: "default", labels: { app: "demo" } },
  spec: { field: "new", items: [] },
};
// The module's compact bytes, indented as Go indents, equal the fixture.
function sameBytes(name, got) {
  JSON.parse(got);
  assert.equal(indented(got), fixture(name), `${name}: the module's bytes differ from the fixture`);
}

test("golden: manifest.json", () => sameBytes("manifest.json", new Host(golden).manifestRaw));
test("golden: response-success.json and log.json", () => {
  const h = new Host(golden);
  const req = h.request("create_fn", example);
  req.memo = { seen: 1 };
  sameBytes("response-success.json", h.call(req).raw);
  assert.equal(h.calls.length, 1);
  assert.equal(h.calls[0].func, "log");
  sameBytes("log.json", h.calls[0].request);
});
test("golden: response-temporary.json", () => {
  const h = new Host(golden);
  sameBytes("response-temporary.json", h.call(fixture("request-update.json")).raw);
});
test("golden: response-validate.json", () => {
  const h = new Host(golden);
  sameBytes("response-validate.json", h.call(fixture("request-validate.json")).raw);
});
test("golden: kube-response-forbidden.json", () => {
  const h = new Host(golden);
  const res = h.run("delete_fn", example);
  assert.equal(h.calls.length, 1);
  assert.equal(h.calls[0].func, "kube_request");
  sameBytes("kube-response-forbidden.json", h.calls[0].reply);
  assert.match(res.response.outcome.message, /^refused by the host: kopf: delete pods default\/kopf-example-1-child: /);
  assert.equal(res.response.outcome.status, "error");
});
test("field, when, daemon, timer, startup", () => {
  const h = new Host(golden);
  const old = structuredClone(example);
  old.spec.field = "old";
  // field_fn wants an owner annotation: the host would not call it without
  // one, and neither does run (unless forced).
  assert.equal(h.whyNot("field_fn/spec.field", example, old), "its annotations filter wants owner present, the object has none");
  assert.throws(() => h.run("field_fn/spec.field", example, old), /the host would not call handler "field_fn\/spec.field" for this object: its annotations filter/);
  const owned = (o) => ({ ...o, metadata: { ...o.metadata, annotations: { owner: "me" } } });
  assert.deepEqual(h.run("field_fn/spec.field", owned(example), owned(old)).response.result, { old: "old", new: "new" });
  h.force = true;
  assert.deepEqual(h.run("field_fn/spec.field", example, old).response.result, { old: "old", new: "new" });
  h.force = false;
  assert.equal(h.matches("monitor", example), true);
  assert.equal(h.matches("monitor", { ...example, metadata: { ...example.metadata, labels: { app: "other" } } }), false);
  assert.equal(h.whyNot("monitor", { ...example, metadata: { ...example.metadata, labels: { app: "other" } } }), "its when filter returned false");
  h.stopAfter = 2;
  h.stopReason = "deleted";
  assert.deepEqual(h.run("monitor", example).response.result, { reason: "deleted", rounds: 2 });
  assert.deepEqual(h.sleeps, [2, 2, 2]);
  assert.equal(h.run("ping", example).response.result, "pong");
  assert.deepEqual(h.call(h.request("configure")).response, { outcome: { status: "success" } });
});
test("an unknown handler is an arbitrary error; a request that is not JSON fails the call", () => {
  const h = new Host(golden);
  assert.deepEqual(h.call({ handler: "nope" }).response.outcome, { status: "error", message: 'module "kopfexample" has no handler "nope"; rebuild or reload the module' });
  assert.throws(() => h.call("{"), /kopf_handle returned 1: kopf: the request is not a JSON object/);
});
{
  const h = new Host(golden);
  for (const name of Object.keys(h.instance.exports).filter((n) => n.startsWith("test_"))) {
    test(`unit: ${name}`, () => h.invoke(name, ""));
  }
}

const kex = build(join(root, "examples", "assemblyscript", "kopfexample", "assembly", "index.ts"), "kopfexample");
test("kopfexample: manifest", () => {
  const m = new Host(kex).manifest;
  assert.equal(m.module.name, "kopfexample");
  assert.deepEqual(m.handlers.map((h) => [h.id, h.kind, h.resource]), [
    ["create_fn", "create", { group: "kopf.dev", version: "v1", name: "kopfexamples" }],
    ["update_fn", "update", { group: "kopf.dev", version: "v1", name: "kopfexamples" }],
    ["delete_fn", "delete", { group: "kopf.dev", version: "v1", name: "kopfexamples" }],
  ]);
});
test("kopfexample: handlers", () => {
  const obj = (field) => ({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "kopf-example-1", namespace: "default", uid: "u1" }, spec: { field } });
  for (const [id, o, old, message] of [["create_fn", obj("a"), null, "hello world"], ["update_fn", obj("b"), obj("a"), "updated"], ["delete_fn", obj("b"), null, "deleted"]]) {
    const h = new Host(kex);
    const res = h.run(id, o, old);
    assert.deepEqual(res.response, { outcome: { status: "success" }, result: { message } }, id);
    assert.equal(h.logs().length, 1);
    assert.equal(h.logs()[0].level, "info");
    assert.equal(h.kubeRequests().length, 0);
  }
});

test("kopfexample: the host's log level", () => {
  const o = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "kopf-example-1", namespace: "default", uid: "u1" }, spec: { field: "a" } };
  for (const [level, logs] of [["", 1], ["debug", 1], ["info", 1], ["warning", 0], ["error", 0], ["trace", 1]]) {
    const h = new Host(kex);
    const req = h.request("create_fn", o);
    if (level) req.logLevel = level;
    assert.deepEqual(h.call(req).response, { outcome: { status: "success" }, result: { message: "hello world" } }, level);
    assert.equal(h.logs().length, logs, `logLevel ${JSON.stringify(level)}: records sent`);
  }
});

// examples/assemblyscript/children: the same assertions as the Rust
// example's cargo tests.
const children = build(join(root, "examples", "assemblyscript", "children", "assembly", "index.ts"), "children");
const family = (field, status) => ({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "family", namespace: "default", uid: "u1", labels: { team: "a" } }, spec: { field }, ...(status ? { status } : {}) });
test("children: manifest", () => {
  const m = new Host(children).manifest;
  assert.deepEqual(m.handlers.map((h) => h.id), ["create_child", "sync/spec.field", "heartbeat"]);
  assert.equal(m.handlers[2].options.interval, 1);
});
test("children: create adopts the child", () => {
  const h = new Host(children);
  assert.deepEqual(h.run("create_child", family("one")).response.result, { child: "family-child" });
  const cm = h.objects.get("/configmaps/default/family-child");
  assert.equal(cm.data.field, "one");
  assert.equal(cm.metadata.labels.team, "a");
  assert.deepEqual(cm.metadata.ownerReferences.map((r) => [r.kind, r.uid, r.controller]), [["KopfExample", "u1", true]]);
  // A retry finds the ConfigMap it made before.
  assert.deepEqual(h.run("create_child", family("one")).response.result, { child: "family-child" });
});
test("children: sync patches the child", () => {
  const h = new Host(children);
  assert.equal(h.run("sync/spec.field", family("two"), family("one")).response.outcome.status, "temporary");
  h.run("create_child", family("one"));
  assert.deepEqual(h.run("sync/spec.field", family("two"), family("one")).response.result, { field: "two" });
  assert.equal(h.objects.get("/configmaps/default/family-child").data.field, "two");
});
test("children: heartbeat counts", () => {
  assert.deepEqual(new Host(children).run("heartbeat", family("one")).response.result, { beats: 1 });
  assert.deepEqual(new Host(children).run("heartbeat", family("one", { heartbeat: { beats: 4 } })).response.result, { beats: 5 });
});

// examples/assemblyscript/conversion: a convert handler (beyond Kopf),
// the same assertions as the Rust example's cargo tests.
const conversion = build(join(root, "examples", "assemblyscript", "conversion", "assembly", "index.ts"), "conversion");
const widget = (version, spec) => ({ apiVersion: `kopf.dev/${version}`, kind: "Widget", metadata: { name: "w", namespace: "default" }, spec });
test("conversion: manifest", () => {
  const m = new Host(conversion).manifest;
  assert.deepEqual(m.handlers, [{ id: "convert", kind: "convert", resource: { group: "kopf.dev", version: "v1", name: "widgets" },
    filters: {}, options: { versions: ["v1alpha1", "v1"] } }]);
});
test("conversion: both ways", () => {
  const h = new Host(conversion);
  assert.deepEqual(h.convert("convert", widget("v1alpha1", { size: "3" }), "kopf.dev/v1").response, { outcome: { status: "success" }, result: { spec: { replicas: 3 } } });
  assert.deepEqual(h.convert("convert", widget("v1", { replicas: 5 }), "kopf.dev/v1alpha1").response, { outcome: { status: "success" }, result: { spec: { size: "5" } } });
  assert.deepEqual(h.convert("convert", widget("v1", {}), "kopf.dev/v1alpha1").response.result, { spec: {} });
});
test("conversion: a size that is no number fails with the message", () => {
  const res = new Host(conversion).convert("convert", widget("v1alpha1", { size: "many" }), "kopf.dev/v1").response;
  assert.deepEqual(res.outcome, { status: "permanent", message: 'spec.size "many" is not a number' });
});
test("conversion: registration mistakes fail the manifest", () => {
  const mistakes = build(join(sdk, "test", "convert_mistakes.ts"), "convert_mistakes");
  assert.throws(() => new Host(mistakes), (e) => {
    for (const want of ["option versions of handler empty: no versions", 'handler "qualified" declares the version "kopf.dev/v1"',
      'handler "core" is a convert handler of a core resource', "option labels does not apply to convert handlers (handler labelled)",
      "option versions does not apply to validate handlers (handler validator)"]) {
      assert.ok(e.message.includes(want), `want ${want} in ${e.message}`);
    }
    return true;
  });
});

// One function under several changing kinds: one id once per kind, each
// entry with its own filters, picked by the request's kind.
const several = build(join(sdk, "test", "several_kinds.ts"), "several_kinds");
test("one function under several kinds: the manifest", () => {
  assert.deepEqual(new Host(several).manifest.handlers.map((h) => [h.id, h.kind, !!h.filters.when]),
    [["reconcile", "resume", true], ["reconcile", "create", false], ["reconcile", "update", false]]);
});
test("one function under several kinds: the request's kind picks the entry", () => {
  const h = new Host(several);
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "default", labels: { app: "web" } } };
  const when = (kind) => h.call({ ...h.request("reconcile", pod), kind, reason: kind, call: "when" }).response.matched;
  assert.equal(when("resume"), false);
  assert.equal(when("create"), true);
  assert.deepEqual(h.call({ ...h.request("reconcile", pod), kind: "update", reason: "update" }).response.result, "update");
});
test("one function under several kinds: ids declared twice wrongly fail the manifest", () => {
  const mistakes = build(join(sdk, "test", "several_mistakes.ts"), "several_mistakes");
  assert.throws(() => new Host(mistakes), (e) => {
    for (const want of ['handler "two-functions" is declared twice, for two different functions: give one of them an id of its own', 'handler "one-kind-twice" is declared twice as a create handler',
      'handler "daemon-too" is declared twice (only create, update, delete, resume and field handlers share an id)',
      'handler "both-delays" sets both initialDelay and initialDelayCallback', "option initialDelayFrom does not apply to create handlers (handler create-delayed)"]) {
      assert.ok(e.message.includes(want), `want ${want} in ${e.message}`);
    }
    return true;
  });
});

// Events about other objects carry each one's reference; an empty list
// posts nothing, as Kopf's kopf.event([], ...).
const events = build(join(sdk, "test", "events.ts"), "events");
test("events about objects, and about none", () => {
  const h = new Host(events);
  const obj = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "a", namespace: "default" } };
  assert.deepEqual(h.run("post", obj).response.outcome, { status: "success" });
  assert.deepEqual(h.events(), [
    { type: "Warning", reason: "Pressure", message: "full", about: { apiVersion: "v1", kind: "Pod", name: "p", namespace: "ns", uid: "u" } },
    { type: "Warning", reason: "Pressure", message: "full", about: { apiVersion: "v1", kind: "Node", name: "n1" } },
  ]);
});

// Kopf's callable initial_delay.
const delays = build(join(sdk, "test", "initial_delay.ts"), "initial_delay");
test("callable initial delay: the manifest marks it; the host's call gets the seconds", () => {
  const h = new Host(delays);
  assert.equal(h.manifest.handlers[0].options.initialDelayCallback, true);
  const ex = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "a", namespace: "default" }, spec: { delay: 2.5 } };
  assert.deepEqual(h.call({ ...h.request("later", ex), call: "initialDelay" }).response, { outcome: { status: "success" }, result: 2.5 });
});

// Sub-handlers: the parent is called cycle after cycle until all are finished.
const subs = build(join(sdk, "test", "subhandlers.ts"), "subhandlers");
const subObj = (labels) => ({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "s", namespace: "default", uid: "u1", labels }, spec: { field: "x" } });
test("sub-handlers: run when the parent returns, with their own progress, until all are finished", () => {
  const h = new Host(subs);
  const cycles = h.runCycles("create_fn", subObj({ skip: "yes", team: "a" }));
  assert.equal(cycles.length, 2);
  const [first, second] = cycles;
  assert.deepEqual(first.outcome, { status: "children" });
  assert.equal(first.result, undefined);
  assert.deepEqual(first.subhandlers, [
    { id: "create_fn/a", parent: "create_fn", options: {}, outcome: { status: "success" }, result: "sub a" },
    { id: "create_fn/b", parent: "create_fn", options: { retries: 3, param: "p" }, outcome: { status: "temporary", message: "not yet", delay: 0 } },
    { id: "create_fn/nested", parent: "create_fn", options: {}, outcome: { status: "success" } },
    { id: "create_fn/nested/inner", parent: "create_fn/nested", options: {}, outcome: { status: "success" }, result: "sub a" },
  ]);
  // They share the parent's patch and memo; their log records name them.
  assert.deepEqual(first.patch, { merge: { metadata: { labels: { a: "yes" } } } });
  assert.deepEqual(first.memo, { a: 2 });
  assert.deepEqual(h.logs().map((l) => l.fields), [{ subhandler: "create_fn/a" }, { subhandler: "create_fn/nested/inner" }]);
  // The next cycle runs only the unfinished one, with its retry and param.
  assert.deepEqual(second.outcome, { status: "success" });
  assert.equal(second.result, "parent");
  assert.deepEqual(second.subhandlers.map((s) => [s.id, s.outcome ? s.outcome.status : "-", s.result]), [
    ["create_fn/a", "-", undefined], ["create_fn/b", "success", "sub b p"], ["create_fn/nested", "-", undefined],
  ]);
});
test("sub-handlers: a label filter, callable or not, leaves one out unrun and unwaited", () => {
  const h = new Host(subs);
  const ids = h.runCycles("create_fn", subObj({ team: "b" }))[0].subhandlers.map((s) => s.id);
  assert.deepEqual(ids, ["create_fn/a", "create_fn/b", "create_fn/skipped", "create_fn/by_callable", "create_fn/nested", "create_fn/nested/inner"]);
});
test("sub-handlers: execute() returns the outcome to return while some are unfinished", () => {
  const h = new Host(subs);
  const obj = subObj({});
  const cycles = h.runCycles("explicit", obj, { ...obj, spec: { field: "old" } });
  assert.deepEqual(cycles.map((c) => [c.outcome.status, c.result]), [["children", undefined], ["success", "after"]]);
});
test("sub-handlers: of a timer, a permanent outcome of their own; used-up retries are not called", () => {
  const h = new Host(subs);
  const res = h.run("tick", subObj({})).response;
  assert.deepEqual(res.outcome, { status: "success" });
  assert.deepEqual(res.subhandlers, [
    { id: "tick/x", parent: "tick", options: {}, outcome: { status: "permanent", message: "sub-handlers of timer handlers are not supported (only of changing handlers, as in Kopf)" } },
    { id: "tick/", parent: "tick", options: {}, outcome: { status: "permanent", message: "the sub-handler has no id; give it one (AssemblyScript functions have no names at run time)" } },
  ]);
  const cycles = h.runCycles("used_up", subObj({}));
  assert.deepEqual(cycles.map((c) => [c.outcome.status, c.subhandlers[0].outcome]), [["children", { status: "error", message: "broken" }], ["success", { status: "error", message: "broken" }]]);
  // The host's record says its retries are used up: not called, not waited for (the host fails it).
  const req = { ...h.request("used_up", subObj({})), subhandlers: [{ id: "used_up/failing", retry: 2, started: "2026-01-01T00:00:00Z" }] };
  const res2 = h.call(req).response;
  assert.deepEqual([res2.outcome, res2.subhandlers], [{ status: "success" }, [{ id: "used_up/failing", parent: "used_up", options: { retries: 2 } }]]);
});

// Callable filters, selectors, one function under several resources.
const callables = build(join(sdk, "test", "callables.ts"), "callables");
const sized = (name, size, labels, annotations) => ({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name, namespace: "default", labels, annotations }, spec: { size } });
test("callable filters: the manifest marks them, the module decides after the declarative ones", () => {
  const h = new Host(callables);
  assert.deepEqual(h.spec("by_label").filters, { labels: { team: { callback: true } }, annotations: { note: { present: true } }, when: true });
  assert.deepEqual(h.spec("by_value/spec.size").filters, { field: "spec.size", value: { callback: true }, when: true });
  assert.deepEqual(h.spec("by_old_new/spec.size").filters, { field: "spec.size", old: { callback: true }, new: { callback: true }, when: true });
  const note = { note: "x" };
  assert.equal(h.whyNot("by_label", sized("a", 1, { team: "a", v: "2" }, note), sized("a", 1, { team: "a" }, note)), "");
  assert.equal(h.whyNot("by_label", sized("a", 1, { team: "b", v: "2" }, note), sized("a", 1, { team: "b" }, note)),
    "its callable labels filter on team (or its when filter, if it has one) returned false");
  assert.equal(h.whyNot("by_label", sized("a", 1, { v: "2" }, note), sized("a", 1, {}, note)),
    "its callable labels filter on team (or its when filter, if it has one) returned false");
  assert.equal(h.whyNot("by_label", sized("a", 1, { team: "a", v: "2" }), sized("a", 1, { team: "a" })), "its annotations filter wants note present, the object has none");
  // value: the new or the old value may match; old and new: each its own.
  assert.equal(h.whyNot("by_value/spec.size", sized("a", 5), sized("a", 20)), "");
  assert.equal(h.whyNot("by_value/spec.size", sized("a", 6), sized("a", 5)), "its callable value filter on spec.size (or its when filter, if it has one) returned false");
  assert.equal(h.whyNot("by_old_new/spec.size", sized("a", 20), sized("a", 5)), "");
  assert.equal(h.whyNot("by_old_new/spec.size", sized("a", 30), sized("a", 20)),
    "one of its callable filters (old filter on spec.size, new filter on spec.size) or its when filter, if it has one, returned false");
  assert.deepEqual(h.run("by_old_new/spec.size", sized("a", 20), sized("a", 5)).response.result, "called");
  // Not a changing handler: the body's value, then when.
  assert.equal(h.whyNot("event_value/spec.size", sized("a", 20)), "");
  assert.equal(h.whyNot("event_value/spec.size", sized("b", 20)), "its callable value filter on spec.size (or its when filter, if it has one) returned false");
  assert.equal(h.whyNot("event_value/spec.size", sized("a", 2)), "its callable value filter on spec.size (or its when filter, if it has one) returned false");
});
test("selectors: everything, a category, a callable", () => {
  const h = new Host(callables);
  assert.deepEqual(h.spec("everything").resource, { name: "", everything: true });
  assert.deepEqual(h.spec("category").resource, { name: "", category: "all" });
  assert.deepEqual(h.spec("selected").resource, { group: "kopf.dev", name: "", callback: true });
  assert.deepEqual(h.select("selected", [
    { group: "kopf.dev", version: "v1", plural: "kopfexamples", categories: ["all"], namespaced: true, preferred: true },
    { group: "kopf.dev", version: "v1", plural: "clusterthings", categories: ["all"] },
    { version: "v1", plural: "pods", categories: ["all"], namespaced: true },
  ]), [true, false, false]);
  assert.deepEqual(h.call({ handler: "everything", kind: "create", retry: 0, call: "select", body: [] }).response.outcome,
    { status: "error", message: "handler everything has no callable selector" });
});
test("one function under several resources of one kind: one id, the param tells them apart", () => {
  const h = new Host(callables);
  const multi = h.manifest.handlers.filter((s) => s.id === "multi");
  assert.deepEqual(multi.map((s) => [s.kind, s.resource.name, s.options.param]), [["update", "pods", "pods"], ["update", "services", "services"]]);
  assert.deepEqual(h.manifest.handlers.filter((s) => s.id === "watch").map((s) => s.resource.name), ["pods", "configmaps"]);
  const svc = { apiVersion: "v1", kind: "Service", metadata: { name: "s", namespace: "default", labels: { app: "web" } } };
  assert.equal(h.call({ ...h.request("multi", svc), param: "services" }).response.result, "services");
});
test("selector and several-resource mistakes fail the manifest", () => {
  const mistakes = build(join(sdk, "test", "part2_mistakes.ts"), "part2_mistakes");
  assert.throws(() => new Host(mistakes), (e) => {
    for (const want of [
      'handler "other-filters" is declared twice as a update handler with other filters or options: one function under several resources of one kind must have the same filters and options (param may differ)',
      'handler "same-resource" is declared twice as a update handler: give one of them an id of its own',
      'handler "tick" is declared twice as a timer handler', 'option category of handler category-named: pass "" as the plural with a category',
      'handler "nothing" has no resource', 'handler "convert-everything" is a convert handler; it must name its custom resource',
      "option category does not apply to validate handlers (handler validate-category)"]) {
      assert.ok(e.message.includes(want), `want ${want} in ${e.message}`);
    }
    return true;
  });
});

// A whole large index, outbound HTTP, Events of kopf.exception, typed access.
const services = build(join(sdk, "test", "services.ts"), "services");
const item = (name, field) => ({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name, namespace: "default", uid: "u-" + name, labels: { team: "a" }, generation: 3 }, spec: { field, replicas: 2 }, status: { ready: true } });
test("a large index is read whole from the host, once per call", () => {
  const big = {};
  for (let i = 0; i < 2000; i++) big["field-" + i] = ["name-" + i, "other-" + i];
  for (const [limit, lookups] of [[Infinity, 0], [4096, 1]]) {
    const h = new Host(services);
    h.indices = { by_field: big };
    h.indexInline = limit;
    const req = h.request("index_size");
    assert.equal(req.indices.by_field === null, lookups === 1);
    assert.deepEqual(h.call(req).response.result, { keys: 2000, values: 4000 }, `indexInline ${limit}`);
    assert.deepEqual(h.requests("index_lookup"), lookups ? [{ index: "by_field", key: null, all: true }] : []);
  }
  // The host failing to read it: an empty index, and an error record.
  const h = new Host(services);
  h.indices = { by_field: big };
  h.indexInline = 10;
  const req = h.request("index_size");
  h.indices = {};
  assert.deepEqual(h.call(req).response.result, { keys: 0, values: 0 });
  assert.equal(h.logs()[0].message, "kopf: the index could not be read from the host");
});
test("outbound HTTP to a declared host; another fails the call", () => {
  const h = new Host(services);
  assert.deepEqual(h.manifest.permissions.hosts, ["*.example.com"]);
  h.http = (req, body) => ({ status: 201, headers: { "x-reply": "yes" }, body: JSON.stringify({ got: JSON.parse(body), guest: req.headers["X-Guest"], method: req.method }) });
  assert.deepEqual(h.run("fetch", item("a", "x")).response.result, { status: 201, reply: "yes", body: { got: { name: "a" }, guest: "kopf", method: "POST" } });
  assert.deepEqual(h.requests("http_request"), [{ url: "https://api.example.com/items", method: "POST", headers: { "Content-Type": "application/json", "X-Guest": "kopf" } }]);
  assert.throws(() => h.run("fetch_other", item("a", "x")), /the request to https:\/\/evil.example.org\/ is not allowed: declare its host/);
});
test("Events: kopf.exception, info and warn about objects", () => {
  const h = new Host(services);
  assert.deepEqual(h.run("exception", item("a", "x")).response.outcome, { status: "success" });
  const about = { apiVersion: "kopf.dev/v1", kind: "KopfExample", name: "a", namespace: "default", uid: "u-a" };
  assert.deepEqual(h.events(), [
    { type: "Error", reason: "Error", message: "failed: boom", about },
    { type: "Normal", reason: "Fine", message: "all good", about },
    { type: "Warning", reason: "Careful", message: "watch out", about },
  ]);
});
test("typed access: a class with typed getters over the object", () => {
  const h = new Host(services);
  assert.deepEqual(h.run("typed", item("a", "x")).response.result, { field: "x", replicas: 2, ready: true, name: "a", team: "a", generation: 3, kind: "KopfExample" });
});

// examples/assemblyscript/allkinds (examples/allkinds.md): every kind but
// convert, as the Go module; TestAllKinds runs it on the control plane.
const allkinds = build(join(root, "examples", "assemblyscript", "allkinds", "assembly", "index.ts"), "allkinds");
const akObj = (name, field, labels) => ({ apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name, namespace: "default", uid: "u-" + name, labels }, spec: { field } });
test("allkinds: the manifest has every kind but convert", () => {
  assert.deepEqual(new Host(allkinds).manifest.handlers.map((h) => [h.id, h.kind]), [
    ["startup_fn", "startup"], ["cleanup_fn", "cleanup"], ["create_fn", "create"], ["update_fn", "update"], ["field_fn/spec.field", "field"],
    ["delete_fn", "delete"], ["resume_fn", "resume"], ["event_fn", "event"], ["timer_fn", "timer"], ["daemon_fn", "daemon"],
    ["by_field", "index"], ["index_size", "probe"], ["validate_fn", "validate"], ["mutate_fn", "mutate"],
  ]);
});
test("allkinds: create_fn posts its Event and finishes its two sub-handlers in one call", () => {
  const h = new Host(allkinds);
  const [res] = h.runCycles("create_fn", akObj("one", "a"));
  assert.deepEqual(res.outcome, { status: "success" });
  assert.deepEqual(res.subhandlers.map((s) => [s.id, s.result]), [["create_fn/a", "sub a"], ["create_fn/b", "sub b"]]);
  assert.deepEqual(h.events(), [{ type: "Normal", reason: "AllKinds", message: "created" }]);
});
test("allkinds: update_fn's callable label filter, field_fn's old and new", () => {
  const h = new Host(allkinds);
  assert.deepEqual(h.run("update_fn", akObj("one", "c"), akObj("one", "a")).response.result, { field: "c" });
  assert.equal(h.whyNot("update_fn", akObj("one", "d", { skip: "yes" }), akObj("one", "c")), "its callable labels filter on skip (or its when filter, if it has one) returned false");
  assert.deepEqual(h.run("field_fn/spec.field", akObj("one", "c"), akObj("one", "a")).response.result, { old: "a", new: "c" });
  assert.deepEqual(h.run("field_fn/spec.field", akObj("one", "a")).response.result, { old: null, new: "a" });
});
test("allkinds: the timer patches once, the daemon waits to be stopped, the probe counts the index's keys", () => {
  const h = new Host(allkinds);
  assert.deepEqual(h.run("timer_fn", akObj("one", "a")).response.patch, { merge: { status: { ticked: true } } });
  assert.equal(h.run("timer_fn", { ...akObj("one", "a"), status: { ticked: true } }).response.patch, undefined);
  h.stopAfter = 1;
  h.run("daemon_fn", akObj("one", "a"));
  assert.deepEqual(h.logs().map((l) => l.message), ["daemon started one", "daemon stopped one"]);
  assert.deepEqual(h.run("by_field", akObj("one", "a")).response.result, { a: "one" });
  h.indices = { by_field: { a: ["one"], b: ["two"] } };
  h.indexInline = 0;
  assert.equal(h.call(h.request("index_size")).response.result, 2);
});
test("allkinds: validate_fn refuses a forbidden field, mutate_fn labels", () => {
  const h = new Host(allkinds);
  assert.deepEqual(h.run("validate_fn", akObj("bad", "forbidden")).response.admission, { allowed: false, code: 500, message: "field must not be forbidden" });
  assert.deepEqual(h.run("validate_fn", akObj("good", "a")).response.admission, { allowed: true });
  assert.deepEqual(h.run("mutate_fn", akObj("one", "a")).response.patch, { merge: { metadata: { labels: { "allkinds-mutated": "yes" } } } });
});

// The shared filter table (abi/testdata/filters.json; its format in
// abi/testdata/filters.md): the fake host decides each case as the host
// does, in the host's words; a case's "when" is the module's answer.
for (const c of JSON.parse(fixture("filters.json")).cases) {
  test(`filter table: ${c.name}`, () => {
    const f = c.handler.filters || {};
    let why = declaredWhyNot(c.handler, c.object, c.old);
    if (!why && f.when && c.when === false) why = callbackRefusal(f);
    assert.equal(why, c.why);
    assert.equal(c.called, c.why === "");
  });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
