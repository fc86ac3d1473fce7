// kopf: write kopf-wasm handlers in AssemblyScript.
//
// Kopf's programming model for handlers that run as a WebAssembly module
// in the kopf-wasm host, speaking ABI v1 through Extism's kernel imports.
// Register handlers at the top level of the module's entry file (it runs
// once per instance, from _initialize), and re-export the entry points:
//
//   import * as kopf from "<sdk>/assembly";
//   export { kopf_manifest, kopf_handle } from "<sdk>/assembly";
//
//   kopf.module("kopfexample", "0.1.0");
//   kopf.onCreate("kopf.dev", "v1", "kopfexamples", "create_fn", createFn).retries(3);
//
//   function createFn(ctx: kopf.Context): kopf.Result {
//     ctx.info("creating", kopf.fields().set("spec", ctx.spec()));
//     ctx.patch.set("metadata.labels.handled", kopf.Value.str("yes"));
//     return kopf.ok(kopf.fields().setStr("message", "hello world"));
//   }

import { Value, NULL, quote, formatNumber, sortedKeys, setKeys, encodeError, parseError, write } from "./json";
import { hostCall, input, output, setError } from "./host";
import { Hierarchy, DEFAULT_HIERARCHY, adopt } from "./hierarchy";
import { Typed, KubeObject } from "./typed";

export { Value, NULL, indent, quote } from "./json";
export * from "./hierarchy";
export * from "./http";
export * from "./typed";

// ---- outcomes ----

/** A handler's outcome: ok(value) (stored under status.<id>; an object is
 * merged, anything else replaces, null writes nothing), or one of Kopf's
 * errors: temporary, permanent, admissionError, arbitrary. */
export class Result {
  status: string = "success";
  message: string = "";
  delay: f64 = 0;
  hasDelay: bool = false;
  code: i32 = 0;
  value: Value = NULL;
  get ok(): bool { return this.status == "success"; }
}

export function ok(value: Value = NULL): Result {
  const r = new Result();
  r.value = value;
  return r;
}
function failed(status: string, message: string): Result {
  const r = new Result();
  r.status = status;
  r.message = message;
  return r;
}
/** Kopf's TemporaryError, retried after the handler's backoff. */
export function temporary(message: string): Result { return failed("temporary", message); }
/** Kopf's TemporaryError, retried after delay seconds (0: at once). */
export function temporaryAfter(message: string, delay: f64): Result {
  const r = failed("temporary", message);
  r.delay = delay;
  r.hasDelay = true;
  return r;
}
/** Kopf's PermanentError: no retries for this cause. */
export function permanent(message: string): Result { return failed("permanent", message); }
/** Kopf's AdmissionError: denies a webhook request with an HTTP code (500 when 0). */
export function admissionError(message: string, code: i32 = 0): Result {
  const r = failed("permanent", message);
  r.code = code == 0 ? 500 : code;
  return r;
}
/** Any other error: the handler's errors mode decides. */
export function arbitrary(message: string): Result { return failed("error", message); }

/** A new JSON object, for results and log fields. */
export function fields(): Value { return Value.object(); }

// ---- registration ----

export type Handler = (ctx: Context) => Result;
export type When = (ctx: Context) => bool;
/** A callable filter (Kopf's callables in labels=, annotations=, value=,
 * old=, new=): the label's or annotation's value, or the field's (NULL when
 * absent), and the context; it must only look. */
export type ValueFn = (value: Value, ctx: Context) => bool;
/** A callable resource selector (Kopf's fn(resource) -> bool). */
export type Selector = (resource: ResourceInfo) => bool;
/** A callable initial delay (Kopf's initial_delay=fn): seconds from the object. */
export type InitialDelay = (ctx: Context) => f64;

/** Errors modes, Kopf's errors=. */
export const ERRORS_IGNORED = "ignored";
export const ERRORS_TEMPORARY = "temporary";
export const ERRORS_PERMANENT = "permanent";

/** Filters on labels, annotations and field values: a value, PRESENT,
 * ABSENT, or a callable (Filter.callable(fn), Kopf's callable filters). */
export class Filter {
  // The type is spelled out, not ValueFn: AssemblyScript 0.28 resolves an
  // alias met first here as recursive (through Context's fields).
  callableFn: ((value: Value, ctx: Context) => bool) | null = null;
  constructor(public value: Value, public present: bool, public absent: bool) {}
  static is(v: Value): Filter { return new Filter(v, false, false); }
  static str(s: string): Filter { return new Filter(Value.str(s), false, false); }
  /** A callable filter: the module decides, after every declarative filter
   * matched; the host asks it before calling the handler. */
  static callable(fn: ValueFn): Filter { const f = new Filter(NULL, false, false); f.callableFn = fn; return f; }
  get isCallable(): bool { return this.callableFn !== null; }
}

/** One callable filter of a handler: where it looks ("labels",
 * "annotations", "value", "old", "new"), the key, and the function. */
class Callback {
  constructor(public where: string, public key: string, public fn: ValueFn) {}
}
export const PRESENT = new Filter(NULL, true, false);
export const ABSENT = new Filter(NULL, false, true);

const RESOURCE_KINDS = ["create", "update", "delete", "resume", "field", "event", "timer", "daemon", "index", "validate", "mutate"];
const ERROR_KINDS = ["create", "update", "delete", "resume", "field", "timer", "daemon", "index", "startup", "cleanup", "probe"];
const OLD_NEW_KINDS = ["update", "field"];
const WEBHOOK_KINDS = ["validate", "mutate"];
const SELECTING_KINDS = ["create", "update", "delete", "resume", "field", "event", "timer", "daemon", "index"];

/** One handler's registration: Kopf's options as chained methods. An option
 * that does not fit the kind is a registration mistake, reported by the
 * manifest export (the host then refuses the module). */
export class Registration {
  id: string;
  kind: string;
  group: string = "";
  version: string = "";
  plural: string = "";
  hasResource: bool = false;
  fn: Handler;
  whenFn: When | null = null;
  /** Callable label, annotation and value filters, in declaration order. */
  callbacks: Array<Callback> = [];
  initialDelayFn: InitialDelay | null = null;
  selectFn: Selector | null = null;
  categoryS: string = "";
  everything: bool = false;
  labels: Map<string, Filter> = new Map<string, Filter>();
  annotations: Map<string, Filter> = new Map<string, Filter>();
  fieldPath: string = "";
  valueF: Filter | null = null;
  oldF: Filter | null = null;
  newF: Filter | null = null;
  errorsMode: string = "";
  timeoutS: f64 = 0;
  retriesN: i32 = 0;
  backoffS: f64 = 0;
  paramV: Value = NULL;
  optionalB: bool = false;
  deletedB: bool = false;
  intervalS: f64 = 0;
  initialDelayS: f64 = 0;
  idleS: f64 = 0;
  sharpB: bool = false;
  cancellationBackoffS: f64 = 0;
  cancellationTimeoutS: f64 = 0;
  cancellationPollingS: f64 = 0;
  operationsL: Array<string> = [];
  subresourceS: string = "";
  persistentB: bool = false;
  sideEffectsB: bool = false;
  ignoreFailuresB: bool = false;
  versionsL: Array<string> = [];

  constructor(kind: string, id: string, fn: Handler) {
    this.kind = kind;
    this.id = id;
    this.fn = fn;
  }

  private fits(name: string, kinds: Array<string> | null): bool {
    if (kinds !== null && !kinds.includes(this.kind)) {
      registry.problems.push("option " + name + " does not apply to " + this.kind + " handlers (handler " + this.id + ")");
      return false;
    }
    return true;
  }

  param(v: Value): Registration { if (this.fits("param", null)) this.paramV = v; return this; }
  errors(mode: string): Registration { if (this.fits("errors", ERROR_KINDS)) this.errorsMode = mode; return this; }
  retries(n: i32): Registration { if (this.fits("retries", ERROR_KINDS)) this.retriesN = n; return this; }
  timeout(seconds: f64): Registration { if (this.fits("timeout", ERROR_KINDS)) this.timeoutS = seconds; return this; }
  backoff(seconds: f64): Registration { if (this.fits("backoff", ERROR_KINDS)) this.backoffS = seconds; return this; }
  optional(): Registration { if (this.fits("optional", ["delete"])) this.optionalB = true; return this; }
  deleted(): Registration { if (this.fits("deleted", ["resume"])) this.deletedB = true; return this; }
  interval(seconds: f64): Registration { if (this.fits("interval", ["timer"])) this.intervalS = seconds; return this; }
  idle(seconds: f64): Registration { if (this.fits("idle", ["timer"])) this.idleS = seconds; return this; }
  sharp(): Registration { if (this.fits("sharp", ["timer"])) this.sharpB = true; return this; }
  /** Kopf's callable initial_delay: the host calls fn once per object before the first run; fn must only look. */
  initialDelayFrom(fn: InitialDelay): Registration { if (this.fits("initialDelayFrom", ["timer", "daemon"])) this.initialDelayFn = fn; return this; }
  initialDelay(seconds: f64): Registration { if (this.fits("initialDelay", ["timer", "daemon"])) this.initialDelayS = seconds; return this; }
  cancellationBackoff(seconds: f64): Registration { if (this.fits("cancellationBackoff", ["daemon"])) this.cancellationBackoffS = seconds; return this; }
  cancellationTimeout(seconds: f64): Registration { if (this.fits("cancellationTimeout", ["daemon"])) this.cancellationTimeoutS = seconds; return this; }
  cancellationPolling(seconds: f64): Registration { if (this.fits("cancellationPolling", ["daemon"])) this.cancellationPollingS = seconds; return this; }
  operations(ops: Array<string>): Registration {
    if (this.fits("operations", WEBHOOK_KINDS)) {
      if (ops.length == 0) registry.problems.push("option operations of handler " + this.id + ": no operations (omit the option for all)");
      this.operationsL = ops;
    }
    return this;
  }
  subresource(s: string): Registration { if (this.fits("subresource", WEBHOOK_KINDS)) this.subresourceS = s; return this; }
  persistent(): Registration { if (this.fits("persistent", WEBHOOK_KINDS)) this.persistentB = true; return this; }
  sideEffects(): Registration { if (this.fits("sideEffects", WEBHOOK_KINDS)) this.sideEffectsB = true; return this; }
  ignoreFailures(): Registration { if (this.fits("ignoreFailures", WEBHOOK_KINDS)) this.ignoreFailuresB = true; return this; }
  /** The versions of the CRD a convert handler converts between (bare
   * names: "v1alpha1", "v1"); the host fails conversions from or to any
   * other without calling the handler. By default, every version. */
  versions(vs: Array<string>): Registration {
    if (this.fits("versions", ["convert"])) {
      if (vs.length == 0) registry.problems.push("option versions of handler " + this.id + ": no versions (omit the option for all)");
      this.versionsL = vs;
    }
    return this;
  }
  /** Filters on a label: Filter.str("x"), PRESENT, ABSENT or
   * Filter.callable(fn) (fn gets the label's value, NULL when absent). */
  label(key: string, f: Filter): Registration { if (this.fits("labels", RESOURCE_KINDS) && this.metaOK(key, f)) this.addMeta("labels", this.labels, key, f); return this; }
  /** Filters on an annotation as label does. */
  annotation(key: string, f: Filter): Registration { if (this.fits("annotations", RESOURCE_KINDS) && this.metaOK(key, f)) this.addMeta("annotations", this.annotations, key, f); return this; }
  private addMeta(where: string, m: Map<string, Filter>, key: string, f: Filter): void {
    m.set(key, f);
    if (f.isCallable) this.callbacks.push(new Callback(where, key, f.callableFn as ValueFn));
  }
  /** Serves every resource in a category (Kopf's category=, e.g. "all"),
   * of the group and version when they are not "": pass "" as the plural. */
  category(name: string): Registration {
    if (this.fits("category", SELECTING_KINDS)) {
      if (this.plural.length > 0 || this.everything) registry.problems.push("option category of handler " + this.id + ": pass \"\" as the plural with a category");
      else this.categoryS = name;
    }
    return this;
  }
  /** Serves the resources fn takes (Kopf's callable selector): pass "" as
   * the plural. The host asks at start and whenever a CRD comes or goes. */
  selectResources(fn: Selector): Registration {
    if (this.fits("selectResources", SELECTING_KINDS)) {
      if (this.plural.length > 0 || this.everything) registry.problems.push("option selectResources of handler " + this.id + ": pass \"\" as the plural with a callable selector");
      else this.selectFn = fn;
    }
    return this;
  }
  /** Watches one field (mandatory for field handlers; the id becomes "id/field"). */
  field(path: string): Registration {
    if (this.fits("field", RESOURCE_KINDS)) {
      this.fieldPath = path;
      if (this.kind != "index") this.id = this.id + "/" + path;
    }
    return this;
  }
  /** Filters on the field's value: Filter.is(v), PRESENT, ABSENT or
   * Filter.callable(fn); for changing handlers the old or the new value
   * may match. */
  value(f: Filter): Registration { if (this.fits("value", RESOURCE_KINDS) && this.valueOK("value", f)) { this.valueF = f; this.addValue("value", f); } return this; }
  /** Filters on the field's old value (update and field handlers). */
  old(f: Filter): Registration { if (this.fits("old", OLD_NEW_KINDS) && this.valueOK("old", f)) { this.oldF = f; this.addValue("old", f); } return this; }
  /** Filters on the field's new value (update and field handlers). */
  new(f: Filter): Registration { if (this.fits("new", OLD_NEW_KINDS) && this.valueOK("new", f)) { this.newF = f; this.addValue("new", f); } return this; }
  private addValue(where: string, f: Filter): void {
    if (f.isCallable) this.callbacks.push(new Callback(where, "", f.callableFn as ValueFn));
  }
  /** A callback filter (Kopf's when=): the host asks the module before calling the handler. */
  when(fn: When): Registration { if (this.fits("when", RESOURCE_KINDS)) this.whenFn = fn; return this; }

  private metaOK(key: string, f: Filter): bool {
    if (!f.present && !f.absent && !f.isCallable && f.value.kind != 3) {
      registry.problems.push("option labels/annotations of handler " + this.id + ": the filter of " + quote(key) + " is not a string; use a string, PRESENT, ABSENT or Filter.callable");
      return false;
    }
    return true;
  }
  private valueOK(name: string, f: Filter): bool {
    if (!f.present && !f.absent && !f.isCallable && f.value.isNull) {
      registry.problems.push("option " + name + " of handler " + this.id + ": null value; use ABSENT for a missing field");
      return false;
    }
    return true;
  }
}

class Registry {
  name: string = "module";
  version: string = "";
  handlers: Array<Registration> = [];
  permissions: Array<Value> = [];
  hosts: Array<string> = [];
  problems: Array<string> = [];
}

const registry = new Registry();

/** Names the module and its version. */
export function module(name: string, version: string): void {
  registry.name = name;
  registry.version = version;
}

/** Declares Kubernetes requests the handlers make (verbs on a resource of a
 * group; "" is the core group). The host refuses undeclared ones with a 403. */
export function permit(group: string, resource: string, verbs: Array<string>): void {
  const p = Value.object().setStr("group", group).setStr("resource", resource);
  const vs = Value.array();
  for (let i = 0; i < verbs.length; i++) vs.push(Value.str(verbs[i]));
  p.set("verbs", vs);
  registry.permissions.push(p);
}

/** Declares outbound HTTP hosts (globs) the module may reach. */
export function allowHosts(hosts: Array<string>): void {
  for (let i = 0; i < hosts.length; i++) registry.hosts.push(hosts[i]);
}

/** As the plural of a resource handler: every resource of the group and
 * version given (or of the whole cluster when both are ""), Kopf's
 * kopf.EVERYTHING. Only preferred versions unless the version is named,
 * never Events; the host follows CRDs that come and go. */
export const EVERYTHING = "kopf.EVERYTHING";

function add(kind: string, group: string, version: string, plural: string, hasResource: bool, id: string, fn: Handler): Registration {
  const r = new Registration(kind, id, fn);
  r.group = group;
  r.version = version;
  if (plural == EVERYTHING) r.everything = true;
  else r.plural = plural;
  r.hasResource = hasResource;
  registry.handlers.push(r);
  return r;
}

export function onCreate(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("create", group, version, plural, true, id, fn); }
export function onUpdate(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("update", group, version, plural, true, id, fn); }
export function onDelete(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("delete", group, version, plural, true, id, fn); }
export function onResume(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("resume", group, version, plural, true, id, fn); }
export function onField(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("field", group, version, plural, true, id, fn); }
export function onEvent(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("event", group, version, plural, true, id, fn); }
export function timer(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("timer", group, version, plural, true, id, fn); }
export function daemon(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("daemon", group, version, plural, true, id, fn); }
export function index(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("index", group, version, plural, true, id, fn); }
export function onValidate(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("validate", group, version, plural, true, id, fn); }
export function onMutate(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("mutate", group, version, plural, true, id, fn); }
/** Beyond Kopf: a conversion webhook. The handler gets an object in one of
 * the versions the CRD serves (ctx.body()) and returns it converted to
 * ctx.desiredAPIVersion; the host sets the apiVersion and keeps the
 * metadata. An error fails the conversion with its message. `version` is
 * any version the CRD serves; .versions() declares those it converts. */
export function onConvert(group: string, version: string, plural: string, id: string, fn: Handler): Registration { return add("convert", group, version, plural, true, id, fn); }
export function onStartup(id: string, fn: Handler): Registration { return add("startup", "", "", "", false, id, fn); }
export function onCleanup(id: string, fn: Handler): Registration { return add("cleanup", "", "", "", false, id, fn); }
export function onProbe(id: string, fn: Handler): Registration { return add("probe", "", "", "", false, id, fn); }

// ---- the manifest ----

/** An ordered JSON object writer (the Go structs' field order). */
class W {
  parts: Array<string> = [];
  first: bool = true;
  constructor() { this.parts.push("{"); }
  key(k: string): W { if (!this.first) this.parts.push(","); this.first = false; this.parts.push(quote(k) + ":"); return this; }
  raw(k: string, json: string): W { this.key(k); this.parts.push(json); return this; }
  str(k: string, v: string): W { return this.raw(k, quote(v)); }
  strOpt(k: string, v: string): W { return v.length > 0 ? this.str(k, v) : this; }
  num(k: string, v: f64): W { return this.raw(k, formatNumber(v)); }
  numOpt(k: string, v: f64): W { return v != 0 ? this.num(k, v) : this; }
  boolOpt(k: string, v: bool): W { return v ? this.raw(k, "true") : this; }
  value(k: string, v: Value): W { return this.raw(k, v.toJSON()); }
  valueOpt(k: string, v: Value): W { return v.isNull ? this : this.value(k, v); }
  strsOpt(k: string, v: Array<string>): W { return v.length > 0 ? this.raw(k, strs(v)) : this; }
  done(): string { this.parts.push("}"); return this.parts.join(""); }
}

function strs(v: Array<string>): string {
  const out = new Array<string>();
  for (let i = 0; i < v.length; i++) out.push(quote(v[i]));
  return "[" + out.join(",") + "]";
}

function filterJSON(f: Filter): string {
  const w = new W();
  if (f.isCallable) w.raw("callback", "true");
  else if (f.present) w.raw("present", "true");
  else if (f.absent) w.raw("absent", "true");
  else w.value("value", f.value);
  return w.done();
}

function filtersJSON(m: Map<string, Filter>): string {
  const w = new W();
  const keys = m.keys();
  keys.sort((a: string, b: string): i32 => a < b ? -1 : a > b ? 1 : 0);
  for (let i = 0; i < keys.length; i++) w.raw(keys[i], filterJSON(m.get(keys[i])));
  return w.done();
}

function handlerJSON(h: Registration): string {
  const w = new W();
  w.str("id", h.id).str("kind", h.kind);
  if (h.hasResource) {
    w.raw("resource", new W().strOpt("group", h.group).strOpt("version", h.version).str("name", h.plural)
      .strOpt("category", h.categoryS).boolOpt("everything", h.everything).boolOpt("callback", h.selectFn !== null).done());
  }
  w.raw("filters", handlerFiltersJSON(h));
  w.raw("options", optionsJSON(h, true));
  return w.done();
}

function handlerFiltersJSON(h: Registration): string {
  const f = new W();
  if (h.labels.size > 0) f.raw("labels", filtersJSON(h.labels));
  if (h.annotations.size > 0) f.raw("annotations", filtersJSON(h.annotations));
  f.strOpt("field", h.fieldPath);
  if (h.valueF !== null) f.raw("value", filterJSON(h.valueF as Filter));
  if (h.oldF !== null) f.raw("old", filterJSON(h.oldF as Filter));
  if (h.newF !== null) f.raw("new", filterJSON(h.newF as Filter));
  f.boolOpt("when", h.whenFn !== null || h.callbacks.length > 0);
  return f.done();
}

function optionsJSON(h: Registration, withParam: bool): string {
  const o = new W();
  o.strOpt("errors", h.errorsMode).numOpt("timeout", h.timeoutS).numOpt("retries", <f64>h.retriesN).numOpt("backoff", h.backoffS)
    .valueOpt("param", withParam ? h.paramV : NULL).boolOpt("optional", h.optionalB).boolOpt("deleted", h.deletedB)
    .numOpt("interval", h.intervalS).numOpt("initialDelay", h.initialDelayS).boolOpt("initialDelayCallback", h.initialDelayFn !== null).numOpt("idle", h.idleS).boolOpt("sharp", h.sharpB)
    .numOpt("cancellationBackoff", h.cancellationBackoffS).numOpt("cancellationTimeout", h.cancellationTimeoutS)
    .numOpt("cancellationPolling", h.cancellationPollingS).strsOpt("operations", h.operationsL).strOpt("subresource", h.subresourceS)
    .boolOpt("persistent", h.persistentB).boolOpt("sideEffects", h.sideEffectsB).boolOpt("ignoreFailures", h.ignoreFailuresB).strsOpt("versions", h.versionsL);
  return o.done();
}

const ACTIVITIES = ["startup", "cleanup", "probe"];

const CHANGING_KINDS = ["create", "update", "delete", "resume", "field"];

/** What is wrong with declaring handler number i under an id declared
 * before it, or "" (abi.Validate's rule). As Kopf lets one function carry
 * several of its decorators, one function may be declared under one id:
 * - as changing handlers (create, update, delete, resume, field) of
 *   several kinds, once per kind: one progress record, one call per cause
 *   (the request's kind picks the entry);
 * - under one changing or event kind for other resources (Kopf's
 *   @kopf.on.update('pods') over @kopf.on.update('services')): the
 *   request names only the id and the kind, so the entries must have the
 *   same filters (the same callables) and options; the param may differ.
 * Other kinds never share an id. */
function sharedID(h: Registration, i: i32): string {
  let first: Registration | null = null;
  let sameKind = false;
  for (let j = 0; j < i; j++) {
    const b = registry.handlers[j];
    if (b.id != h.id) continue;
    if (first === null) first = b;
    if (b.fn.index != h.fn.index) {
      // Release builds keep no function names: say "two functions" then.
      const which = b.fn.name.length > 0 && h.fn.name.length > 0 ? b.fn.name + " and for " + h.fn.name : "two different functions";
      return "is declared twice, for " + which + ": give one of them an id of its own";
    }
    if (b.kind != h.kind) continue;
    const problem = sameKindTwice(h, b);
    if (problem.length > 0) return problem;
    sameKind = true;
  }
  if (first === null || sameKind) return "";
  if (!CHANGING_KINDS.includes(h.kind) || !CHANGING_KINDS.includes((first as Registration).kind)) {
    return "is declared twice (only create, update, delete, resume and field handlers share an id)";
  }
  return "";
}

/** What is wrong with h declared again as b's kind, or "". */
function sameKindTwice(h: Registration, b: Registration): string {
  const twice = "is declared twice as a " + h.kind + " handler: give one of them an id of its own, or join their filters in one registration";
  if (!CHANGING_KINDS.includes(h.kind) && h.kind != "event") return twice;
  if (resourceJSON(h) == resourceJSON(b)) return twice;
  if (handlerFiltersJSON(h) != handlerFiltersJSON(b) || optionsJSON(h, false) != optionsJSON(b, false) || !sameCallables(h, b)) {
    return "is declared twice as a " + h.kind + " handler with other filters or options: one function under several resources of one kind " +
      "must have the same filters and options (param may differ); give one of them an id of its own";
  }
  return "";
}

function resourceJSON(h: Registration): string {
  return new W().str("group", h.group).str("version", h.version).str("name", h.plural).str("category", h.categoryS)
    .boolOpt("everything", h.everything).boolOpt("callback", h.selectFn !== null).done();
}

/** Whether two registrations have the same callable filters and when. */
function sameCallables(h: Registration, b: Registration): bool {
  const hw = h.whenFn, bw = b.whenFn;
  if ((hw === null) != (bw === null)) return false;
  if (hw !== null && bw !== null && (hw as When).index != (bw as When).index) return false;
  if (h.callbacks.length != b.callbacks.length) return false;
  for (let i = 0; i < h.callbacks.length; i++) {
    if (h.callbacks[i].fn.index != b.callbacks[i].fn.index) return false;
  }
  return true;
}

/** Registration mistakes and manifest problems (abi.Validate's). */
export function problems(): Array<string> {
  const p = registry.problems.slice(0);
  if (registry.name.length == 0) p.push("module.name is empty");
  for (let i = 0; i < registry.handlers.length; i++) {
    const h = registry.handlers[i];
    const where = h.id.length > 0 ? "handler " + quote(h.id) : "handler[" + i.toString() + "]";
    if (h.id.length == 0) p.push(where + " has no id");
    else {
      const problem = sharedID(h, i);
      if (problem.length > 0) p.push(where + " " + problem);
    }
    if (!ACTIVITIES.includes(h.kind)) {
      const named = (h.plural.length > 0 ? 1 : 0) + (h.categoryS.length > 0 ? 1 : 0) + (h.everything ? 1 : 0) + (h.selectFn !== null ? 1 : 0);
      if (named == 0) p.push(where + " has no resource");
      else if (named > 1) p.push(where + " must name one of its resource, a category or everything, or select with a callback");
      else if (h.kind == "convert" && h.plural.length == 0) p.push(where + " is a convert handler; it must name its custom resource");
    }
    if (h.initialDelayFn !== null && h.initialDelayS > 0) p.push(where + " sets both initialDelay and initialDelayCallback; keep one");
    if (h.kind == "field" && h.fieldPath.length == 0) p.push(where + " is a field handler without a field");
    if (h.fieldPath.length == 0 && (h.valueF !== null || h.oldF !== null || h.newF !== null)) p.push(where + " filters on value/old/new without a field");
    if (h.valueF !== null && (h.oldF !== null || h.newF !== null)) p.push(where + " combines value with old/new");
    if (h.kind == "convert" && h.group.length == 0) p.push(where + " is a convert handler of a core resource; only custom resources convert");
    for (let j = 0; j < h.versionsL.length; j++) {
      const v = h.versionsL[j];
      if (v.length == 0 || v.includes("/") || v.includes(" ")) p.push(where + " declares the version " + quote(v) + "; versions are bare names such as \"v1\"");
    }
    for (let j = 0; j < h.operationsL.length; j++) {
      const op = h.operationsL[j];
      if (op != "CREATE" && op != "UPDATE" && op != "DELETE" && op != "CONNECT" && op != "*") p.push(where + " has an unknown operation " + quote(op) + " (CREATE, UPDATE, DELETE, CONNECT)");
    }
  }
  return p;
}

/** The manifest JSON, or "" with manifestError set. */
export let manifestError = "";

export function manifestJSON(): string {
  const p = problems();
  if (p.length > 0) {
    manifestError = "module " + quote(registry.name) + " has an invalid manifest: " + p.join("; ") + "; fix the handler registrations and rebuild";
    return "";
  }
  const hs = new Array<string>();
  for (let i = 0; i < registry.handlers.length; i++) hs.push(handlerJSON(registry.handlers[i]));
  const perms = new W();
  if (registry.permissions.length > 0) {
    const ps = new Array<string>();
    for (let i = 0; i < registry.permissions.length; i++) {
      const x = registry.permissions[i];
      ps.push(new W().str("group", x.strAt("group")).str("resource", x.strAt("resource")).value("verbs", x.get("verbs")).done());
    }
    perms.raw("kubernetes", "[" + ps.join(",") + "]");
  }
  perms.strsOpt("hosts", registry.hosts);
  return new W().num("abiVersion", 1).raw("module", new W().str("name", registry.name).strOpt("version", registry.version).done())
    .raw("handlers", "[" + hs.join(",") + "]").raw("permissions", perms.done()).done();
}

// ---- sub-handlers ----

/** A sub-handler's registration (Context.subhandler): Kopf's error
 * options, param, and the filters on labels, annotations and when, as
 * chained methods. */
export class Subhandler {
  problem: string = "";
  paramV: Value = NULL;
  errorsMode: string = "";
  retriesN: i32 = 0;
  timeoutS: f64 = 0;
  backoffS: f64 = 0;
  labels: Map<string, Filter> = new Map<string, Filter>();
  annotations: Map<string, Filter> = new Map<string, Filter>();
  callbacks: Array<Callback> = [];
  whenFn: When | null = null;
  constructor(public id: string, public fn: Handler) {}
  param(v: Value): Subhandler { this.paramV = v; return this; }
  errors(mode: string): Subhandler { this.errorsMode = mode; return this; }
  retries(n: i32): Subhandler { this.retriesN = n; return this; }
  timeout(seconds: f64): Subhandler { this.timeoutS = seconds; return this; }
  backoff(seconds: f64): Subhandler { this.backoffS = seconds; return this; }
  /** Filters on a label: Filter.str("x"), PRESENT, ABSENT or Filter.callable(fn). */
  label(key: string, f: Filter): Subhandler { return this.meta("labels", this.labels, key, f); }
  /** Filters on an annotation as label does. */
  annotation(key: string, f: Filter): Subhandler { return this.meta("annotations", this.annotations, key, f); }
  /** A callback filter (Kopf's when=), evaluated last. */
  when(fn: When): Subhandler { this.whenFn = fn; return this; }
  private meta(where: string, m: Map<string, Filter>, key: string, f: Filter): Subhandler {
    m.set(key, f);
    if (f.isCallable) this.callbacks.push(new Callback(where, key, f.callableFn as ValueFn));
    return this;
  }
  optionsJSON(): string {
    return new W().strOpt("errors", this.errorsMode).numOpt("timeout", this.timeoutS).numOpt("retries", <f64>this.retriesN)
      .numOpt("backoff", this.backoffS).valueOpt("param", this.paramV).done();
  }
}

/** The sub-handlers' state of one call, shared by the called handler's
 * context and those of its sub-handlers of every depth: their progress
 * from the request, and the registrations answered, in order. */
export class Subtree {
  states: Map<string, Value> = new Map<string, Value>();
  ids: Set<string> = new Set<string>();
  outcomes: Array<string> = [];
}

function subOutcomeJSON(id: string, parent: string, options: string, outcome: string, result: string): string {
  const w = new W().str("id", id).str("parent", parent).raw("options", options);
  if (outcome.length > 0) w.raw("outcome", outcome);
  if (result.length > 0) w.raw("result", result);
  return w.done();
}

/** Whether an outcome finishes a sub-handler, as the host's
 * classification with its options would (a temporary error whose delay
 * the guest does not know counts as unfinished). */
function settled(r: Result, retry: i32, runtime: f64, s: Subhandler): bool {
  if (r.status == "success" || r.status == "permanent") return true;
  if (r.status == "error") {
    if (s.errorsMode == ERRORS_IGNORED || s.errorsMode == ERRORS_PERMANENT) return true;
    return (s.retriesN > 0 && retry + 1 >= s.retriesN) || (s.timeoutS > 0 && s.backoffS > 0 && runtime + s.backoffS >= s.timeoutS);
  }
  if (r.status == "temporary") {
    if (s.retriesN > 0 && retry + 1 >= s.retriesN) return true;
    return s.timeoutS > 0 && r.hasDelay && runtime + r.delay >= s.timeoutS;
  }
  return false;
}

// ---- resources ----

/** A resource the cluster serves, as Kopf's kopf.Resource: what a
 * callable selector (Registration.selectResources) sees. */
export class ResourceInfo {
  constructor(public raw: Value) {}
  get group(): string { return this.raw.strAt("group"); }
  get version(): string { return this.raw.strAt("version"); }
  get plural(): string { return this.raw.strAt("plural"); }
  get kind(): string { return this.raw.strAt("kind"); }
  get singular(): string { return this.raw.strAt("singular"); }
  get namespaced(): bool { return this.raw.get("namespaced").bool; }
  /** Whether this is the group's preferred version. */
  get preferred(): bool { return this.raw.get("preferred").bool; }
  get shortNames(): Array<string> { return strings(this.raw.get("shortNames")); }
  get categories(): Array<string> { return strings(this.raw.get("categories")); }
  get subresources(): Array<string> { return strings(this.raw.get("subresources")); }
  get verbs(): Array<string> { return strings(this.raw.get("verbs")); }
}

function strings(v: Value): Array<string> {
  const out = new Array<string>();
  for (let i = 0; i < v.arr.length; i++) out.push(v.arr[i].str);
  return out;
}

// ---- the context ----

/** Log levels. */
export const DEBUG = "debug";
export const INFO = "info";
export const WARNING = "warning";
export const ERROR = "error";

// levelRank orders the log levels: debug 0, info 1, warning 2, error 3;
// other is the rank of any other string. A record's level the host does
// not know is written as info (other 1); a host's level the SDK does not
// know ("" among them) lets every record through (other 0), for the host
// to filter.
function levelRank(level: string, other: i32): i32 {
  if (level == DEBUG) return 0;
  if (level == INFO) return 1;
  if (level == WARNING) return 2;
  if (level == ERROR) return 3;
  return other;
}

/** Whether the host writes a record of `level` at its level `host` (a
 * request's logLevel); Context.log drops the others unsent. */
export function logLevelEnabled(level: string, host: string): bool {
  return levelRank(level, 1) >= levelRank(host, 0);
}
/** Event types. */
export const EVENT_NORMAL = "Normal";
export const EVENT_WARNING = "Warning";
/** The type of Context.exception's Events (Kopf's kopf.exception). */
export const EVENT_ERROR = "Error";

/** A failed host request; code is an HTTP status, origin "host" or "cluster". */
export class ApiError {
  constructor(public code: i32, public reason: string, public message: string, public origin: string, public call: string) {}
  get notFound(): bool { return this.code == 404; }
  get alreadyExists(): bool { return this.code == 409 && this.reason == "AlreadyExists"; }
  get conflict(): bool { return this.code == 409 && this.reason != "AlreadyExists"; }
  get forbidden(): bool { return this.code == 403; }
  toString(): string {
    let status = (this.code.toString() + " " + this.reason).trim();
    if (this.origin.length > 0) status += " from the " + this.origin;
    return "kopf: " + this.call + ": " + this.message + " (" + status + ")";
  }
}

function apiError(call: string, reply: Value | null): ApiError | null {
  if (reply === null) return new ApiError(0, "", "the host function returned no valid reply", "", call);
  const e = reply.get("error");
  if (e.isNull) return null;
  return new ApiError(<i32>e.get("code").num, e.strAt("reason"), e.strAt("message"), e.strAt("origin"), call);
}

/** The patch a handler makes to its object: a JSON merge patch (set,
 * unset, merge) and RFC 6902 operations applied after it. */
export class Patch {
  mergePatch: Value = Value.object();
  ops: Array<string> = [];
  /** Sets the value at a dotted path ("metadata.labels.x"). */
  set(path: string, v: Value): void { this.mergePatch.setPath(path, v); }
  setStr(path: string, s: string): void { this.set(path, Value.str(s)); }
  /** Removes the field at a dotted path (a null in the merge patch). */
  unset(path: string): void { this.set(path, Value.null()); }
  /** Deep-merges an object into the merge patch. */
  merge(fragment: Value): void { mergeInto(this.mergePatch, fragment); }
  add(pointer: string, v: Value): void { this.op("add", pointer, "", v); }
  replace(pointer: string, v: Value): void { this.op("replace", pointer, "", v); }
  remove(pointer: string): void { this.op("remove", pointer, "", null); }
  test(pointer: string, v: Value): void { this.op("test", pointer, "", v); }
  move(from: string, pointer: string): void { this.op("move", pointer, from, null); }
  copy(from: string, pointer: string): void { this.op("copy", pointer, from, null); }
  private op(op: string, path: string, from: string, v: Value | null): void {
    const w = new W().str("op", op).str("path", path).strOpt("from", from);
    if (v !== null) w.value("value", v);
    this.ops.push(w.done());
  }
  get empty(): bool { return this.mergePatch.length == 0 && this.ops.length == 0; }
  toJSON(): string {
    const w = new W();
    if (this.mergePatch.length > 0) w.value("merge", this.mergePatch);
    if (this.ops.length > 0) w.raw("json", "[" + this.ops.join(",") + "]");
    return w.done();
  }
}

function mergeInto(dst: Value, src: Value): void {
  const keys = src.keys();
  for (let i = 0; i < keys.length; i++) {
    const v = src.get(keys[i]);
    if (v.isObject) mergeInto(dst.entryObject(keys[i]), v);
    else dst.set(keys[i], v);
  }
}

/** What a handler gets: Kopf's kwargs from the host's request, the patch,
 * the memo, and the host's services. */
export class Context {
  req: Value;
  patch: Patch = new Patch();
  /** Warnings to return to an admission request's client. */
  warnings: Array<string> = [];
  private memoV: Value | null = null;
  private memoWas: string = "";
  private stopReasonS: string = "";
  /** Whole indexes read from the host in this call, by id. */
  private indexes: Map<string, Value> = new Map<string, Value>();
  // Sub-handlers: those registered and not yet run, whether execute() ran,
  // the call's shared state, the context of the handler the host called,
  // and the sub-handler this context runs (null for the called handler).
  private subs: Array<Subhandler> = [];
  private executed: bool = false;
  subtree: Subtree | null = null;
  private root: Context | null = null;
  private sub: Subhandler | null = null;

  constructor(req: Value) { this.req = req; }

  get handler(): string { return this.req.strAt("handler"); }
  get kind(): string { return this.req.strAt("kind"); }
  /** "create", "update", "delete" or "resume" for changing handlers. */
  get reason(): string { return this.req.strAt("reason"); }
  /** The resolved resource ({group, version, plural, kind, namespaced}). */
  get resource(): Value { return this.req.get("resource"); }
  body(): Value { return this.req.get("body"); }
  /** The object as a typed view (a class extending KubeObject). */
  bodyAs<T extends KubeObject>(): T { return instantiate<T>(this.body()); }
  spec(): Value { return this.body().get("spec"); }
  meta(): Value { return this.body().get("metadata"); }
  status(): Value { return this.body().get("status"); }
  labels(): Value { return this.meta().get("labels"); }
  annotations(): Value { return this.meta().get("annotations"); }
  get name(): string { return this.req.strAt("name"); }
  get namespace(): string { return this.req.strAt("namespace"); }
  get uid(): string { return this.req.strAt("uid"); }
  /** The old state: the diff-base essence, the field's value for field handlers, the old body for webhooks. */
  old(): Value { return this.req.get("old"); }
  /** The new state, as old(). */
  new(): Value { return this.req.get("new"); }
  /** The differences: [{op, field, old, new}]. */
  diff(): Value { return this.req.get("diff"); }
  get retry(): i32 { return <i32>this.req.get("retry").num; }
  /** RFC 3339, as the host sent it. */
  get started(): string { return this.req.strAt("started"); }
  /** When the host stops this call (RFC 3339, as the host sent it): its
   * start plus wasm.callTimeout, or sooner; "" when there is no limit
   * (daemons). */
  get deadline(): string { return this.req.strAt("deadline"); }
  /** Seconds since the first attempt. */
  get runtime(): f64 { return this.req.get("runtime").num; }
  param(): Value { return this.req.get("param"); }
  /** The watch event of an event handler ({type, object}). */
  event(): Value { return this.req.get("event"); }
  /** The admission request of a webhook ({uid, operation, dryRun, userInfo, ...}). */
  admission(): Value { return this.req.get("admission"); }
  get activity(): string { return this.req.strAt("activity"); }
  /** The conversion of a convert handler ({uid, desiredAPIVersion}); null for other kinds. */
  conversion(): Value { return this.req.get("conversion"); }
  /** The "group/version" a convert handler converts to ("" for other kinds). */
  get desiredAPIVersion(): string { return this.conversion().strAt("desiredAPIVersion"); }
  /** An index of the module (by its index handler's id) at the time of the
   * call: an object from key to the list of values; NULL when the module
   * has no such index. The host carries small indexes in every request; a
   * large one (above its execution.indexInline setting) comes as null, and
   * this reads it whole from the host, once per call (an empty object and
   * ctx.lastError when the host fails). indexLookup reads one key at the
   * same cost whatever the index's size. */
  index(id: string): Value {
    const all = this.req.get("indices");
    if (!all.has(id)) return NULL;
    const v = all.get(id);
    if (!v.isNull) return v;
    if (this.indexes.has(id)) return this.indexes.get(id);
    const reply = Value.parse(hostCall("index_lookup", new W().str("index", id).raw("key", "null").raw("all", "true").done()));
    this.lastError = apiError("index " + id, reply);
    let idx = Value.object();
    if (this.lastError !== null) this.error("kopf: the index could not be read from the host", fields().setStr("index", id).setStr("error", (this.lastError as ApiError).toString()));
    else if ((reply as Value).get("index").isObject) idx = (reply as Value).get("index");
    this.indexes.set(id, idx);
    return idx;
  }

  /** The object's memo: changes are kept for the object's next calls. */
  memo(): Value {
    if (this.root !== null) return (this.root as Context).memo();
    if (this.memoV === null) {
      const m = this.req.get("memo");
      const v = m.isObject ? m : Value.object();
      this.memoWas = v.toJSON();
      this.memoV = v;
    }
    return this.memoV as Value;
  }
  changedMemo(): Value | null {
    if (this.memoV === null) return null;
    const m = this.memoV as Value;
    return m.toJSON() == this.memoWas ? null : m;
  }

  /** Writes a record to the host's log (the host adds module, handler,
   * object). A record below the host's level (the request's logLevel) is
   * dropped here, unsent. */
  log(level: string, message: string, fields: Value = NULL): void {
    if (!logLevelEnabled(level, this.req.strAt("logLevel"))) return;
    const w = new W().str("level", level).str("message", message);
    if (this.sub !== null) {
      // The host names the called handler; the field names the sub-handler.
      const f = Value.object();
      const keys = fields.keys();
      for (let i = 0; i < keys.length; i++) f.set(keys[i], fields.get(keys[i]));
      fields = f.setStr("subhandler", this.handler);
    }
    if (fields.isObject && fields.length > 0) w.value("fields", fields);
    hostCall("log", w.done());
  }
  debug(message: string, fields: Value = NULL): void { this.log(DEBUG, message, fields); }
  info(message: string, fields: Value = NULL): void { this.log(INFO, message, fields); }
  warn(message: string, fields: Value = NULL): void { this.log(WARNING, message, fields); }
  error(message: string, fields: Value = NULL): void { this.log(ERROR, message, fields); }

  /** Posts a Kubernetes Event about the object; null on success. */
  postEvent(type: string, reason: string, message: string): ApiError | null {
    const reply = Value.parse(hostCall("post_event", new W().str("type", type).str("reason", reason).str("message", message).done()));
    return apiError("post event " + reason, reply);
  }
  /** Posts a Kubernetes Event about each of objs (Kopf's kopf.event(objs,
   * ...)): any objects, each with apiVersion, kind and metadata.name
   * (metadata.namespace and uid when it has them). An empty list posts
   * nothing, as in Kopf; postEvent posts about the handled object. The
   * first failure, after every object was tried; null on success. */
  postEventAbout(objs: Array<Value>, type: string, reason: string, message: string): ApiError | null {
    let first: ApiError | null = null;
    for (let i = 0; i < objs.length; i++) {
      const about = Value.object();
      const keys = ["apiVersion", "kind", "name", "namespace", "uid"];
      const paths = ["apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.uid"];
      for (let k = 0; k < keys.length; k++) {
        const v = objs[i].strAt(paths[k]);
        if (v.length > 0) about.setStr(keys[k], v);
      }
      const reply = Value.parse(hostCall("post_event", new W().str("type", type).str("reason", reason).str("message", message).value("about", about).done()));
      const err = apiError("post event " + reason, reply);
      if (first === null) first = err;
    }
    return first;
  }

  /** Posts a Normal Event about objs, Kopf's kopf.info. */
  infoAbout(objs: Array<Value>, reason: string, message: string): ApiError | null { return this.postEventAbout(objs, EVENT_NORMAL, reason, message); }
  /** Posts a Warning Event about objs, Kopf's kopf.warn. */
  warnAbout(objs: Array<Value>, reason: string, message: string): ApiError | null { return this.postEventAbout(objs, EVENT_WARNING, reason, message); }
  /** Posts an Error Event about objs, Kopf's kopf.exception (none when
   * objs is empty; [ctx.body()] names the handled object). AssemblyScript
   * has no exceptions: err is the error's text, appended to the message;
   * the reason defaults to "Error". */
  exception(objs: Array<Value>, reason: string, message: string, err: string = ""): ApiError | null {
    if (reason.length == 0) reason = "Error";
    if (err.length > 0) message = (message + " " + err).trim();
    return this.postEventAbout(objs, EVENT_ERROR, reason, message);
  }

  /** The values under key in the index of handler `index` (lastError on failure). */
  indexLookup(index: string, key: Value): Array<Value> {
    const reply = Value.parse(hostCall("index_lookup", new W().str("index", index).value("key", key).done()));
    this.lastError = apiError("index " + index, reply);
    return this.lastError === null ? (reply as Value).get("values").arr : [];
  }
  /** The error of the last client call or index look-up, null if it succeeded. */
  lastError: ApiError | null = null;

  /** Whether the daemon or timer is asked to stop. */
  stopped(): bool { return this.sleepReply(hostCall("is_stopped", "{}")); }
  /** Blocks for seconds or until asked to stop; says whether it is. */
  sleepUntilStopped(seconds: f64): bool { return this.sleepReply(hostCall("sleep_until_stopped", "{\"seconds\":" + formatNumber(seconds) + "}")); }
  private sleepReply(raw: string): bool {
    const v = Value.parse(raw);
    if (v === null) return true;
    this.stopReasonS = v.strAt("reason");
    return v.get("stopped").bool;
  }
  /** Why the daemon is asked to stop ("deleted", "exiting", ...). */
  get stopReason(): string { return this.stopReasonS; }

  /** Adopts child by the object being handled (Kopf's kopf.adopt with owner=None). */
  adopt(child: Value, opts: Hierarchy = DEFAULT_HIERARCHY): void { adopt(child, this.body(), opts); }

  // ---- sub-handlers (Kopf's @kopf.subhandler and kopf.execute()) ----

  /** Registers a sub-handler of the running changing handler (Kopf's
   * @kopf.subhandler): fn runs under the id "<handler id>/<id>" with its
   * own progress, retries and result (status["<handler>/<id>"]). The
   * registration takes the options param, errors, retries, timeout,
   * backoff and the filters label, annotation and when (a sub-handler they
   * filter out is not run and not waited for). Registered sub-handlers run
   * when the handler returns ok, or earlier with execute(). The host calls
   * the handler again in every cycle until all are finished: register the
   * same ones in every call; finished ones are not run again. Sub-handlers
   * share the handler's patch and memo, and may register their own. */
  subhandler(id: string, fn: Handler): Subhandler {
    const s = new Subhandler(this.handler + "/" + id, fn);
    if (id.length == 0) {
      s.problem = "the sub-handler has no id; give it one (AssemblyScript functions have no names at run time)";
    } else if (!CHANGING_KINDS.includes(this.kind)) {
      s.problem = "sub-handlers of " + this.kind + " handlers are not supported (only of changing handlers, as in Kopf)";
    }
    this.subs.push(s);
    return s;
  }

  /** Runs the sub-handlers registered so far (Kopf's kopf.execute()):
   * null once they are all finished, else the outcome to return while some
   * are not (Kopf's HandlerChildrenRetry, not a failure):
   *   const pending = ctx.execute(); if (pending !== null) return pending;
   * Once a handler called it, sub-handlers it registers later run only by
   * another execute(), as Kopf's explicit execute() replaces the implicit
   * one. */
  execute(): Result | null {
    this.executed = true;
    let pending = false;
    const subs = this.subs;
    this.subs = [];
    for (let i = 0; i < subs.length; i++) if (!this.runSub(subs[i])) pending = true;
    return pending ? failed("children", "") : null;
  }

  /** Runs the sub-handlers the handler registered and did not execute
   * itself, once it returned ok; the handler's outcome, or "children". */
  finishSubhandlers(r: Result): Result {
    if (!r.ok || this.subs.length == 0 || this.executed) return r;
    const pending = this.execute();
    return pending !== null ? pending as Result : r;
  }

  private tree(): Subtree {
    if (this.subtree === null) {
      const t = new Subtree();
      const states = this.req.get("subhandlers").arr;
      for (let i = 0; i < states.length; i++) t.states.set(states[i].strAt("id"), states[i]);
      this.subtree = t;
    }
    return this.subtree as Subtree;
  }

  /** Runs one sub-handler if it is due; says whether it is finished (as
   * far as the guest can tell; the host decides). */
  private runSub(s: Subhandler): bool {
    const t = this.tree();
    if (t.ids.has(s.id)) return true; // registered twice: the first registration counts
    const known = t.states.has(s.id);
    const st = known ? t.states.get(s.id) : Value.object();
    const root = this.root !== null ? this.root as Context : this;
    // The sub-handler's request: the parent's, with its own id, progress and param.
    const req = Value.object();
    const keys = this.req.keys();
    for (let i = 0; i < keys.length; i++) req.set(keys[i], this.req.get(keys[i]));
    req.setStr("handler", s.id).set("retry", Value.num(st.get("retry").num)).setNum("runtime", st.get("runtime").num);
    if (st.strAt("started").length > 0) req.setStr("started", st.strAt("started"));
    if (s.paramV.isNull) req.delete("param"); else req.set("param", s.paramV);
    req.delete("subhandlers");
    const child = new Context(req);
    child.patch = root.patch;
    child.root = root;
    child.subtree = t;
    child.sub = s;
    if (s.problem.length == 0 && !(metaMatch(s.labels, child.labels()) && metaMatch(s.annotations, child.annotations()) &&
        filtersMatch("", "", s.callbacks, s.whenFn, child))) {
      return true; // filtered out: not run, not waited for
    }
    t.ids.add(s.id);
    const at = t.outcomes.length;
    const parent = this.handler, options = s.optionsJSON();
    t.outcomes.push(subOutcomeJSON(s.id, parent, options, "", ""));
    if (known && st.get("finished").bool) return true;
    if (known && st.get("sleeping").bool) return false;
    if (s.problem.length > 0) {
      t.outcomes[at] = subOutcomeJSON(s.id, parent, options, outcomeJSON(permanent(s.problem)), "");
      return true;
    }
    const retry = <i32>st.get("retry").num, runtime = st.get("runtime").num;
    if ((s.timeoutS > 0 && runtime >= s.timeoutS) || (s.retriesN > 0 && retry >= s.retriesN)) return true; // used up: the host fails it
    let r = child.finishSubhandlers(s.fn(child));
    encodeError = "";
    let result = r.ok && !r.value.isNull ? r.value.toJSON() : "";
    if (encodeError.length > 0) {
      r = arbitrary("kopf: encode the result of " + s.id + ": " + encodeError);
      result = "";
    }
    t.outcomes[at] = subOutcomeJSON(s.id, parent, options, outcomeJSON(r), result);
    return settled(r, retry, runtime, s);
  }

  /** A Kubernetes client for a resource within the module's permissions. */
  client(group: string, version: string, resource: string): Client { return new Client(this, group, version, resource); }
}

/** Kubernetes requests for one resource through the host. Each returns the
 * object (or list, or null) and leaves the failure in ctx.lastError. */
export class Client {
  ns: string = "";
  sub: string = "";
  manager: string = "";
  constructor(public ctx: Context, public group: string, public version: string, public resource: string) {}
  namespace(ns: string): Client { this.ns = ns; return this; }
  subresource(s: string): Client { this.sub = s; return this; }
  fieldManager(m: string): Client { this.manager = m; return this; }
  get(name: string): Value { return this.request("get", name, null, "", "", "", "", false); }
  /** get as a typed view (NULL inside when it failed: see lastError). */
  getAs<T extends Typed>(name: string): T { return instantiate<T>(this.get(name)); }
  /** list as typed views. */
  listAs<T extends Typed>(labelSelector: string = "", fieldSelector: string = ""): Array<T> {
    const items = this.list(labelSelector, fieldSelector);
    const out = new Array<T>();
    for (let i = 0; i < items.length; i++) out.push(instantiate<T>(items[i]));
    return out;
  }
  list(labelSelector: string = "", fieldSelector: string = ""): Array<Value> {
    return this.request("list", "", null, labelSelector, fieldSelector, "", "", false).get("items").arr;
  }
  create(obj: Value): Value { return this.request("create", "", obj, "", "", "", "", false); }
  update(obj: Value): Value { return this.request("update", obj.strAt("metadata.name"), obj, "", "", "", "", false); }
  /** Patches with patchType "merge", "json" or "strategic". */
  patch(name: string, patchType: string, patch: Value): Value { return this.request("patch", name, patch, "", "", patchType, "", false); }
  /** Server-side apply, forcing ownership as the module's field manager. */
  apply(obj: Value): Value {
    return this.request("apply", obj.strAt("metadata.name"), obj, "", "", "", this.manager.length > 0 ? this.manager : registry.name, true);
  }
  delete(name: string): bool { this.request("delete", name, null, "", "", "", "", false); return this.ctx.lastError === null; }

  private request(verb: string, name: string, body: Value | null, ls: string, fs: string, pt: string, manager: string, force: bool): Value {
    let ns = this.ns;
    if (ns.length == 0 && body !== null && verb != "patch") ns = (body as Value).strAt("metadata.namespace");
    if (manager.length == 0) manager = this.manager;
    let res = this.resource;
    if (this.group.length > 0) res += "." + this.group;
    if (this.sub.length > 0) res += "/" + this.sub;
    let where = ns + "/" + name;
    while (where.startsWith("/")) where = where.slice(1);
    while (where.endsWith("/")) where = where.slice(0, where.length - 1);
    const call = (verb + " " + res + " " + where).trim();
    const w = new W().str("verb", verb).strOpt("group", this.group).str("version", this.version).str("resource", this.resource)
      .strOpt("subresource", this.sub).strOpt("namespace", ns).strOpt("name", name).strOpt("labelSelector", ls).strOpt("fieldSelector", fs);
    if (body !== null) w.value("body", body as Value);
    w.strOpt("patchType", pt).strOpt("fieldManager", manager).boolOpt("force", force);
    const reply = Value.parse(hostCall("kube_request", w.done()));
    this.ctx.lastError = apiError(call, reply);
    return this.ctx.lastError === null ? (reply as Value).get("body") : NULL;
  }
}

// ---- index keys ----

/** Kopf's tuple key, {(namespace, name): value}, for an index handler's
 * result: the compact JSON text of the array of parts. JSON object keys are
 * strings, so a tuple key travels as the text of its array; the host matches
 * a look-up key that is not a string by its JSON text, so
 * ctx.indexLookup(index, Value.array(parts)) finds the values under
 * indexKey(parts), and ctx.index(index) holds them under that string. */
export function indexKey(parts: Array<Value>): string { return Value.array(parts).toJSON(); }

// ---- dispatch and the entry points ----

function outcomeJSON(r: Result): string {
  const o = new W().str("status", r.status).strOpt("message", r.message);
  if (r.hasDelay) o.num("delay", r.delay);
  if (r.code != 0) o.num("code", <f64>r.code);
  return o.done();
}

function responseJSON(r: Result, ctx: Context | null, webhook: bool, matched: i32): string {
  const w = new W().raw("outcome", outcomeJSON(r));
  if (r.ok) w.valueOpt("result", r.value);
  if (ctx !== null) {
    const c = ctx as Context;
    if (!c.patch.empty) w.raw("patch", c.patch.toJSON());
    const memo = c.changedMemo();
    if (memo !== null) w.value("memo", memo as Value);
    if (webhook) {
      const a = new W().raw("allowed", r.ok ? "true" : "false");
      if (!r.ok) a.num("code", <f64>(r.code == 0 ? 500 : r.code)).strOpt("message", r.message);
      a.strsOpt("warnings", c.warnings);
      w.raw("admission", a.done());
    }
  }
  if (matched >= 0) w.raw("matched", matched == 1 ? "true" : "false");
  if (ctx !== null) {
    const t = (ctx as Context).subtree;
    if (t !== null && (t as Subtree).outcomes.length > 0) w.raw("subhandlers", "[" + (t as Subtree).outcomes.join(",") + "]");
  }
  return w.done();
}

/** Whether the callable filters (in declaration order) and when (last)
 * match, as the host asks with call "when". */
function filtersMatch(kind: string, field: string, callbacks: Array<Callback>, when: When | null, ctx: Context): bool {
  for (let i = 0; i < callbacks.length; i++) {
    if (!runCallback(kind, field, callbacks[i], ctx)) return false;
  }
  return when === null || (when as When)(ctx);
}

/** One callable filter, as Kopf calls it: a label's or annotation's value
 * (NULL when absent); a field's value from the new and the old object for
 * changing handlers (either may match), from the body otherwise; the old
 * or the new value for old and new filters. */
function runCallback(kind: string, field: string, cb: Callback, ctx: Context): bool {
  if (cb.where == "labels" || cb.where == "annotations") return cb.fn(ctx.meta().get(cb.where).get(cb.key), ctx);
  if (cb.where == "old") return cb.fn(ctx.old().path(field), ctx);
  if (cb.where == "new") return cb.fn(ctx.new().path(field), ctx);
  if (CHANGING_KINDS.includes(kind) && (ctx.req.has("old") || ctx.req.has("new"))) {
    return cb.fn(ctx.new().path(field), ctx) || cb.fn(ctx.old().path(field), ctx);
  }
  return cb.fn(ctx.body().path(field), ctx);
}

/** Whether label or annotation filters match the values (callables pass
 * here and run with when). */
function metaMatch(filters: Map<string, Filter>, values: Value): bool {
  const keys = filters.keys();
  for (let i = 0; i < keys.length; i++) {
    const f = filters.get(keys[i]);
    if (f.isCallable) continue;
    const found = values.has(keys[i]);
    if (f.absent && found) return false;
    if (f.present && !found) return false;
    if (!f.absent && !f.present && (!found || values.get(keys[i]).str != f.value.str || values.get(keys[i]).kind != 3)) return false;
  }
  return true;
}

/** The handle export's work: request JSON in, response JSON out; "" with
 * handleError set when the request is not JSON. */
export let handleError = "";

export function handleJSON(request: string): string {
  const req = Value.parse(request);
  if (req === null || !req.isObject) {
    handleError = "kopf: the request is not a JSON object: " + parseError;
    return "";
  }
  const id = req.strAt("handler");
  // By id and, of one function declared under several kinds, by kind
  // (the first entry when none has the request's kind).
  const kind = req.strAt("kind");
  let h: Registration | null = null;
  for (let i = 0; i < registry.handlers.length; i++) {
    const r = registry.handlers[i];
    if (r.id != id) continue;
    if (r.kind == kind) { h = r; break; }
    if (h === null) h = r;
  }
  if (h === null) {
    return responseJSON(arbitrary("module " + quote(registry.name) + " has no handler " + quote(id) + "; rebuild or reload the module"), null, false, -1);
  }
  const reg = h as Registration;
  const ctx = new Context(req);
  if (req.strAt("call") == "when") {
    return responseJSON(ok(), null, false, filtersMatch(reg.kind, reg.fieldPath, reg.callbacks, reg.whenFn, ctx) ? 1 : 0);
  }
  if (req.strAt("call") == "select") {
    // Kopf's callable selector: one boolean per resource is the result.
    const sel = reg.selectFn;
    if (sel === null) return responseJSON(arbitrary("handler " + id + " has no callable selector"), null, false, -1);
    const picked = Value.array();
    const resources = ctx.body().arr;
    for (let i = 0; i < resources.length; i++) picked.push(Value.bool((sel as Selector)(new ResourceInfo(resources[i]))));
    return responseJSON(ok(picked), null, false, -1);
  }
  if (req.strAt("call") == "initialDelay") {
    // Kopf's callable initial_delay: the seconds are the result.
    const d = reg.initialDelayFn;
    if (d === null) return responseJSON(arbitrary("handler " + id + " has no callable initial delay"), null, false, -1);
    return responseJSON(ok(Value.num((d as InitialDelay)(ctx))), null, false, -1);
  }
  const fn = reg.fn;
  const r = ctx.finishSubhandlers(fn(ctx));
  encodeError = "";
  let out = responseJSON(r, ctx, reg.kind == "validate" || reg.kind == "mutate", -1);
  if (encodeError.length > 0) {
    // a NaN or an infinity in the result, patch or memo: as Go's json.Marshal, an arbitrary error
    out = responseJSON(arbitrary("kopf: encode the response of " + id + ": " + encodeError), null, false, -1);
  }
  return out;
}

export function kopf_manifest(): i32 {
  const m = manifestJSON();
  if (m.length == 0) { setError(manifestError); return 1; }
  output(m);
  return 0;
}

export function kopf_handle(): i32 {
  const out = handleJSON(input());
  if (out.length == 0) { setError(handleError); return 1; }
  output(out);
  return 0;
}
