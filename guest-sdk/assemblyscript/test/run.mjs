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
import { FakeHost, declaredWhyNot, callbackRefusal } from "./fakehost.mjs";

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

test("golden: manifest.json", () => sameBytes("manifest.json", new FakeHost(golden).manifestRaw));
test("golden: response-success.json and log.json", () => {
  const h = new FakeHost(golden);
  const req = h.request("create_fn", example);
  req.memo = { seen: 1 };
  sameBytes("response-success.json", h.call(req).raw);
  assert.equal(h.calls.length, 1);
  assert.equal(h.calls[0].func, "log");
  sameBytes("log.json", h.calls[0].request);
});
test("golden: response-temporary.json", () => {
  const h = new FakeHost(golden);
  sameBytes("response-temporary.json", h.call(fixture("request-update.json")).raw);
});
test("golden: response-validate.json", () => {
  const h = new FakeHost(golden);
  sameBytes("response-validate.json", h.call(fixture("request-validate.json")).raw);
});
test("golden: kube-response-forbidden.json", () => {
  const h = new FakeHost(golden);
  const res = h.run("delete_fn", example);
  assert.equal(h.calls.length, 1);
  assert.equal(h.calls[0].func, "kube_request");
  sameBytes("kube-response-forbidden.json", h.calls[0].reply);
  assert.match(res.response.outcome.message, /^refused by the host: kopf: delete pods default\/kopf-example-1-child: /);
  assert.equal(res.response.outcome.status, "error");
});
test("field, when, daemon, timer, startup", () => {
  const h = new FakeHost(golden);
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
  const h = new FakeHost(golden);
  assert.deepEqual(h.call({ handler: "nope" }).response.outcome, { status: "error", message: 'module "kopfexample" has no handler "nope"; rebuild or reload the module' });
  assert.throws(() => h.call("{"), /kopf_handle returned 1: kopf: the request is not a JSON object/);
});
{
  const h = new FakeHost(golden);
  for (const name of Object.keys(h.instance.exports).filter((n) => n.startsWith("test_"))) {
    test(`unit: ${name}`, () => h.invoke(name, ""));
  }
}

const kex = build(join(root, "examples", "assemblyscript", "kopfexample", "assembly", "index.ts"), "kopfexample");
test("kopfexample: manifest", () => {
  const m = new FakeHost(kex).manifest;
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
    const h = new FakeHost(kex);
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
    const h = new FakeHost(kex);
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
  const m = new FakeHost(children).manifest;
  assert.deepEqual(m.handlers.map((h) => h.id), ["create_child", "sync/spec.field", "heartbeat"]);
  assert.equal(m.handlers[2].options.interval, 1);
});
test("children: create adopts the child", () => {
  const h = new FakeHost(children);
  assert.deepEqual(h.run("create_child", family("one")).response.result, { child: "family-child" });
  const cm = h.objects.get("/configmaps/default/family-child");
  assert.equal(cm.data.field, "one");
  assert.equal(cm.metadata.labels.team, "a");
  assert.deepEqual(cm.metadata.ownerReferences.map((r) => [r.kind, r.uid, r.controller]), [["KopfExample", "u1", true]]);
  // A retry finds the ConfigMap it made before.
  assert.deepEqual(h.run("create_child", family("one")).response.result, { child: "family-child" });
});
test("children: sync patches the child", () => {
  const h = new FakeHost(children);
  assert.equal(h.run("sync/spec.field", family("two"), family("one")).response.outcome.status, "temporary");
  h.run("create_child", family("one"));
  assert.deepEqual(h.run("sync/spec.field", family("two"), family("one")).response.result, { field: "two" });
  assert.equal(h.objects.get("/configmaps/default/family-child").data.field, "two");
});
test("children: heartbeat counts", () => {
  assert.deepEqual(new FakeHost(children).run("heartbeat", family("one")).response.result, { beats: 1 });
  assert.deepEqual(new FakeHost(children).run("heartbeat", family("one", { heartbeat: { beats: 4 } })).response.result, { beats: 5 });
});

// examples/assemblyscript/conversion: a convert handler (beyond Kopf),
// the same assertions as the Rust example's cargo tests.
const conversion = build(join(root, "examples", "assemblyscript", "conversion", "assembly", "index.ts"), "conversion");
const widget = (version, spec) => ({ apiVersion: `kopf.dev/${version}`, kind: "Widget", metadata: { name: "w", namespace: "default" }, spec });
test("conversion: manifest", () => {
  const m = new FakeHost(conversion).manifest;
  assert.deepEqual(m.handlers, [{ id: "convert", kind: "convert", resource: { group: "kopf.dev", version: "v1", name: "widgets" },
    filters: {}, options: { versions: ["v1alpha1", "v1"] } }]);
});
test("conversion: both ways", () => {
  const h = new FakeHost(conversion);
  assert.deepEqual(h.convert("convert", widget("v1alpha1", { size: "3" }), "kopf.dev/v1").response, { outcome: { status: "success" }, result: { spec: { replicas: 3 } } });
  assert.deepEqual(h.convert("convert", widget("v1", { replicas: 5 }), "kopf.dev/v1alpha1").response, { outcome: { status: "success" }, result: { spec: { size: "5" } } });
  assert.deepEqual(h.convert("convert", widget("v1", {}), "kopf.dev/v1alpha1").response.result, { spec: {} });
});
test("conversion: a size that is no number fails with the message", () => {
  const res = new FakeHost(conversion).convert("convert", widget("v1alpha1", { size: "many" }), "kopf.dev/v1").response;
  assert.deepEqual(res.outcome, { status: "permanent", message: 'spec.size "many" is not a number' });
});
test("conversion: registration mistakes fail the manifest", () => {
  const mistakes = build(join(sdk, "test", "convert_mistakes.ts"), "convert_mistakes");
  assert.throws(() => new FakeHost(mistakes), (e) => {
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
  assert.deepEqual(new FakeHost(several).manifest.handlers.map((h) => [h.id, h.kind, !!h.filters.when]),
    [["reconcile", "resume", true], ["reconcile", "create", false], ["reconcile", "update", false]]);
});
test("one function under several kinds: the request's kind picks the entry", () => {
  const h = new FakeHost(several);
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "default", labels: { app: "web" } } };
  const when = (kind) => h.call({ ...h.request("reconcile", pod), kind, reason: kind, call: "when" }).response.matched;
  assert.equal(when("resume"), false);
  assert.equal(when("create"), true);
  assert.deepEqual(h.call({ ...h.request("reconcile", pod), kind: "update", reason: "update" }).response.result, "update");
});
test("one function under several kinds: ids declared twice wrongly fail the manifest", () => {
  const mistakes = build(join(sdk, "test", "several_mistakes.ts"), "several_mistakes");
  assert.throws(() => new FakeHost(mistakes), (e) => {
    for (const want of ['handler "two-functions" is declared twice, for ', 'handler "one-kind-twice" is declared twice as a create handler',
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
  const h = new FakeHost(events);
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
  const h = new FakeHost(delays);
  assert.equal(h.manifest.handlers[0].options.initialDelayCallback, true);
  const ex = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "a", namespace: "default" }, spec: { delay: 2.5 } };
  assert.deepEqual(h.call({ ...h.request("later", ex), call: "initialDelay" }).response, { outcome: { status: "success" }, result: 2.5 });
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
