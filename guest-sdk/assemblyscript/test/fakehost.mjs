// A fake kopf-wasm host for the AssemblyScript SDK's tests, in Node: it
// serves Extism's kernel (extism:host/env) and the ABI's host functions
// (kopf:host/v1) to a module, records every host call with its exact bytes,
// refuses Kubernetes requests the manifest does not permit (the real
// host's 403), serves permitted ones from an in-memory object store, and
// applies the handlers' filters as the host does (run refuses a call the
// host would not make; whyNot says why, in the host's words). The filters
// follow the table the host and every SDK share, abi/testdata/filters.json.
// It also serves the module's indexes (indices, carried in requests up to
// indexInline bytes, else as null and read whole with index_lookup's all),
// outbound HTTP to the manifest's hosts (answered by this.http), and
// sub-handlers' cycles (runCycles plays the host's calls of a parent).

const enc = new TextEncoder();
const dec = new TextDecoder();

export class Host {
  constructor(wasm) {
    this.blocks = new Map(); // offset -> Uint8Array
    this.next = 1;
    this.input = new Uint8Array();
    this.output = null;
    this.error = null;
    this.calls = [];
    this.objects = new Map();
    this.sleeps = [];
    this.stopAfter = 0;
    this.stopReason = "";
    this.serial = 0;
    this.force = false; // run calls handlers the host would not call
    this.indices = {}; // index id -> {key: [values]}, as the host keeps them
    this.indexInline = Infinity; // larger indexes go as null in requests, as execution.indexInline
    this.http = null; // (request {url, method, headers}, body string|null) -> {status, headers, body}
    this.httpStatus = 0;
    this.httpHeaders = null;
    const k = this;
    const block = (off) => {
      const b = k.blocks.get(Number(off));
      if (!b) throw new Error(`kernel: no block at ${off}`);
      return b;
    };
    const hostFn = (name) => (off) => {
      const request = dec.decode(block(off));
      const reply = k.answer(name, request);
      k.calls.push({ func: name, request, reply });
      return reply === null ? 0n : BigInt(k.write(enc.encode(reply)));
    };
    const imports = {
      "extism:host/env": {
        input_length: () => BigInt(k.input.length),
        alloc: (n) => BigInt(k.write(new Uint8Array(Number(n)))),
        free: (off) => { k.blocks.delete(Number(off)); },
        length: (off) => BigInt(block(off).length),
        load_u8: (off) => k.at(off, 1)[0],
        load_u64: (off) => new DataView(k.at(off, 8).buffer, k.at(off, 8).byteOffset, 8).getBigUint64(0, true),
        store_u8: (off, v) => { k.at(off, 1)[0] = v; },
        store_u64: (off, v) => { const b = k.at(off, 8); new DataView(b.buffer, b.byteOffset, 8).setBigUint64(0, v, true); },
        error_set: (off) => { k.error = dec.decode(block(off)); },
        http_request: (reqOff, bodyOff) => {
          const request = JSON.parse(dec.decode(block(reqOff)));
          const body = bodyOff ? dec.decode(block(bodyOff)) : null;
          k.calls.push({ func: "http_request", request: JSON.stringify(request), body });
          const res = k.httpRequest(request, body);
          k.httpStatus = res.status;
          k.httpHeaders = res.headers || {};
          return BigInt(k.write(enc.encode(res.body || "")));
        },
        http_status_code: () => k.httpStatus,
        http_headers: () => (k.httpHeaders === null ? 0n : BigInt(k.write(enc.encode(JSON.stringify(k.httpHeaders))))),
      },
      "kopf:host/v1": {
        input_read: (ptr, n) => { const c = Math.min(n, k.input.length); k.mem().set(k.input.subarray(0, c), ptr); return c; },
        output_write: (ptr, n) => { k.output = dec.decode(k.mem().slice(ptr, ptr + n)); },
        log: hostFn("log"),
        post_event: hostFn("post_event"),
        kube_request: hostFn("kube_request"),
        index_lookup: hostFn("index_lookup"),
        sleep_until_stopped: hostFn("sleep_until_stopped"),
        is_stopped: hostFn("is_stopped"),
      },
    };
    this.instance = new WebAssembly.Instance(new WebAssembly.Module(wasm), imports);
    if (this.instance.exports._initialize) this.instance.exports._initialize();
    this.manifestRaw = this.invoke("kopf_manifest", "");
    this.manifest = JSON.parse(this.manifestRaw);
  }

  mem() { return new Uint8Array(this.instance.exports.memory.buffer); }

  // Blocks live at offsets 1, 2, ...: an offset addresses the start of a
  // block plus a position within it, as Extism's kernel does.
  write(bytes) {
    const off = this.next;
    this.next += bytes.length + 1;
    this.blocks.set(off, bytes);
    return off;
  }
  at(off, n) {
    off = Number(off);
    for (const [start, b] of this.blocks) {
      if (off >= start && off + n <= start + b.length) return b.subarray(off - start, off - start + n);
    }
    throw new Error(`kernel: offset ${off} is in no block`);
  }

  /** Calls an export with input; returns its output, throws on failure. */
  invoke(name, input) {
    this.input = enc.encode(input);
    this.output = null;
    this.error = null;
    let rc;
    try {
      rc = this.instance.exports[name]();
    } catch (e) {
      throw new Error(`${name} trapped: ${e.message}; error: ${this.error}`);
    }
    if (rc !== 0 && rc !== undefined) throw new Error(`${name} returned ${rc}: ${this.error}`);
    return this.output;
  }

  spec(id) {
    const h = this.manifest.handlers.find((h) => h.id === id);
    if (!h) throw new Error(`the module has no handler ${id}`);
    return h;
  }

  /** The request the host would send to handler id (a subset of
   * kopftest's); filter: a callback filter's request, whose old and new
   * are the whole essences (not narrowed to the field). */
  request(id, obj, old, filter = false) {
    const spec = this.spec(id);
    const req = { handler: id, kind: spec.kind, retry: 0, started: "2026-01-01T00:00:00Z" };
    if (spec.options.param !== undefined) req.param = spec.options.param;
    if (Object.keys(this.indices).length) {
      req.indices = {};
      for (const [name, index] of Object.entries(this.indices)) req.indices[name] = JSON.stringify(index).length > this.indexInline ? null : index;
    }
    if (["startup", "cleanup", "probe"].includes(spec.kind)) { req.activity = spec.kind; return req; }
    obj = obj || old;
    const meta = obj.metadata || {};
    if (meta.name) req.name = meta.name;
    if (meta.namespace) req.namespace = meta.namespace;
    if (meta.uid) req.uid = meta.uid;
    req.body = obj;
    if (["create", "update", "delete", "resume", "field"].includes(spec.kind)) {
      req.reason = spec.kind === "field" ? (old ? "update" : "create") : spec.kind;
      let before = old ? essence(old, spec.filters.field) : undefined, after = essence(obj, spec.filters.field);
      if (spec.filters.field && !filter) {
        before = fieldOf(before, spec.filters.field);
        after = fieldOf(after, spec.filters.field);
      }
      if (before !== undefined) req.old = before;
      if (after !== undefined) req.new = after;
      const d = diff([], before, after);
      if (d.length) req.diff = d;
    } else if (spec.kind === "event") {
      req.event = { type: old ? "MODIFIED" : "ADDED", object: obj };
    } else if (spec.kind === "validate" || spec.kind === "mutate") {
      if (old) req.old = old;
      req.new = obj;
      req.admission = { uid: "kopftest-" + meta.name, operation: old ? "UPDATE" : "CREATE", userInfo: { username: "kopftest" } };
    }
    return req;
  }

  /** Calls convert handler id as the host does for one object of a
   * ConversionReview: obj as the body, converted to desired ("group/version"). */
  convert(id, obj, desired) {
    return this.call({ ...this.request(id, obj), conversion: { uid: "kopftest-conversion", desiredAPIVersion: desired } });
  }

  /** Calls the handle export; returns {raw, response}. */
  call(req) {
    const raw = this.invoke("kopf_handle", typeof req === "string" ? req : JSON.stringify(req));
    return { raw, response: JSON.parse(raw) };
  }
  /** Calls handler id about obj (old: its previous state) as the host
   * would; throws when the host would not call it, unless this.force. */
  run(id, obj, old) {
    if (!this.force) {
      const why = this.whyNot(id, obj, old);
      if (why) throw new Error(`the host would not call handler ${JSON.stringify(id)} for this object: ${why} (set force to call it anyway; whyNot tells without calling)`);
    }
    return this.call(this.request(id, obj, old));
  }
  /** Asks the module's callable filters and when, as the host does. */
  matches(id, obj, old) {
    return this.call({ ...this.request(id, obj, old, true), call: "when" }).response.matched === true;
  }
  /** Asks handler id's callable selector about resources (abi.ResourceInfo
   * objects), as the host does: one boolean per resource. */
  select(id, resources) {
    return this.call({ handler: id, kind: this.spec(id).kind, retry: 0, call: "select", body: resources }).response.result;
  }
  /** Calls handler id cycle after cycle, as the host does while it has
   * unfinished sub-handlers (outcome "children"), until it has none or max
   * cycles passed; every cycle's response. Delays are not waited for. */
  runCycles(id, obj, old, max = 10) {
    let req = this.request(id, obj, old);
    const out = [];
    while (out.length < max) {
      const res = this.call(req).response;
      out.push(res);
      if (res.outcome.status !== "children") break;
      req = this.continue(req, res);
    }
    return out;
  }
  /** The request of the next cycle after res answered req, as the host
   * builds it (kopftest's Continue): the sub-handlers' progress carried
   * over, attempts counted, final outcomes finished. */
  continue(req, res) {
    const states = new Map((req.subhandlers || []).map((st) => [st.id, { ...st }]));
    for (const s of res.subhandlers || []) {
      const st = states.get(s.id) || { id: s.id, retry: 0, started: "2026-01-01T00:00:01Z" };
      const o = s.options || {};
      if (s.outcome && !st.finished) {
        st.finished = finalOutcome(s.outcome, o, st.retry);
        st.retry++;
      } else if (!s.outcome && !st.finished && o.retries > 0 && st.retry >= o.retries) st.finished = true;
      st.sleeping = false;
      states.set(s.id, st);
    }
    return { ...req, subhandlers: [...states.values()], retry: req.retry + 1 };
  }
  /** Why the host would not call handler id for obj ("" when it would):
   * the declarative filters (declaredWhyNot), then the module's callable
   * filters and when. */
  whyNot(id, obj, old) {
    const spec = this.spec(id);
    const why = declaredWhyNot(spec, obj, old);
    if (why || !(spec.filters && spec.filters.when)) return why;
    return this.matches(id, obj, old) ? "" : callbackRefusal(spec.filters);
  }

  answer(fn, request) {
    const req = JSON.parse(request);
    switch (fn) {
      case "log": return null;
      case "post_event": return "{}";
      case "kube_request": return this.kube(req);
      case "index_lookup": return this.indexLookup(req);
      case "sleep_until_stopped": this.sleeps.push(req.seconds); return this.stopped();
      case "is_stopped": return this.stopped();
    }
    return null;
  }
  stopped() {
    return this.sleeps.length > this.stopAfter ? JSON.stringify({ stopped: true, reason: this.stopReason }) : `{"stopped":false}`;
  }

  kube(req) {
    const verb = req.verb === "apply" ? "patch" : req.verb;
    const resource = req.subresource ? `${req.resource}/${req.subresource}` : req.resource;
    const group = req.group || "";
    const perms = (this.manifest.permissions && this.manifest.permissions.kubernetes) || [];
    const ok = perms.some((p) => (p.group === group || p.group === "*") && (p.resource === resource || p.resource === "*") &&
      (p.verbs.includes(verb) || p.verbs.includes("*")));
    if (!ok) {
      let name = req.resource + (group ? "." + group : "") + (req.subresource ? "/" + req.subresource : "");
      const message = `module ${JSON.stringify(this.manifest.module.name)} did not declare permission to ${verb} ${name}; add it to the module's permissions`;
      return JSON.stringify({ error: { code: 403, reason: "Forbidden", message, origin: "host" } });
    }
    const key = [group, req.resource, req.namespace || "", req.name || (req.body && req.body.metadata && req.body.metadata.name) || ""].join("/");
    const notFound = () => JSON.stringify({ error: { code: 404, reason: "NotFound", message: `${req.resource} "${req.name}" not found`, origin: "cluster" } });
    switch (req.verb) {
      case "get": return this.objects.has(key) ? JSON.stringify({ body: this.objects.get(key) }) : notFound();
      case "list": {
        const prefix = [group, req.resource, ""].join("/");
        const items = [...this.objects.entries()].filter(([k, o]) => k.startsWith(prefix) && (!req.namespace || o.metadata.namespace === req.namespace)).map(([, o]) => o);
        return JSON.stringify({ body: { apiVersion: "v1", kind: "List", items } });
      }
      case "create": {
        const body = structuredClone(req.body);
        body.metadata = body.metadata || {};
        if (!body.metadata.name && body.metadata.generateName) body.metadata.name = body.metadata.generateName + String(this.serial + 1).padStart(5, "0");
        if (req.namespace) body.metadata.namespace = req.namespace;
        const k = [group, req.resource, body.metadata.namespace || "", body.metadata.name].join("/");
        if (this.objects.has(k)) return JSON.stringify({ error: { code: 409, reason: "AlreadyExists", message: `${req.resource} "${body.metadata.name}" already exists`, origin: "cluster" } });
        body.metadata.uid = body.metadata.uid || `kopftest-uid-${++this.serial}`;
        this.objects.set(k, body);
        return JSON.stringify({ body });
      }
      case "update": case "patch": case "apply": {
        if (!this.objects.has(key) && req.verb !== "apply") return notFound();
        const merged = req.verb === "update" ? req.body : mergePatch(this.objects.get(key) || {}, req.body);
        this.objects.set(key, merged);
        return JSON.stringify({ body: merged });
      }
      case "delete": {
        if (!this.objects.has(key)) return notFound();
        const o = this.objects.get(key);
        this.objects.delete(key);
        return JSON.stringify({ body: o });
      }
    }
    return JSON.stringify({ error: { code: 405, reason: "MethodNotAllowed", message: "unknown verb " + req.verb, origin: "cluster" } });
  }

  indexLookup(req) {
    const index = this.indices[req.index];
    if (!index) return JSON.stringify({ values: [], error: { code: 404, reason: "NotFound", message: `the module has no index ${JSON.stringify(req.index)}`, origin: "host" } });
    if (req.all) return JSON.stringify({ values: [], index });
    const key = req.key === null ? "null" : typeof req.key === "string" ? req.key : JSON.stringify(req.key);
    return JSON.stringify({ values: index[key] || [] });
  }

  // Extism's http_request as the host serves it: a host the manifest does
  // not declare fails the call.
  httpRequest(request, body) {
    const host = new URL(request.url).hostname;
    const hosts = (this.manifest.permissions && this.manifest.permissions.hosts) || [];
    if (!hosts.some((g) => g === host || globMatch(g, host))) {
      throw new Error(`http_request: the request to ${request.url} is not allowed: declare its host with kopf.AllowHosts`);
    }
    if (!this.http) throw new Error(`http_request: the fake host has no http answer for ${request.url}: set host.http`);
    return this.http(request, body);
  }

  requests(fn) { return this.calls.filter((c) => c.func === fn).map((c) => JSON.parse(c.request)); }
  logs() { return this.requests("log"); }
  events() { return this.requests("post_event"); }
  kubeRequests() { return this.requests("kube_request"); }
}

// The diff-base essence as the host builds it: no status, apiVersion or
// kind; of metadata only labels and annotations (without kubectl's
// last-applied configuration and operators' annotations), none empty; plus
// the handler's field when it has one (a field in status is essential to
// its handler).
export function essence(obj, field) {
  if (!obj) return undefined;
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!["status", "apiVersion", "kind", "metadata"].includes(k)) out[k] = v;
  }
  const meta = obj.metadata || {}, kept = {};
  for (const key of ["labels", "annotations"]) {
    const content = meta[key] || {};
    const copied = Object.fromEntries(Object.entries(content).filter(([k]) => key !== "annotations" || essentialAnnotation(k, content)));
    if (Object.keys(copied).length) kept[key] = copied;
  }
  if (Object.keys(kept).length) out.metadata = kept;
  if (field) {
    const [v, found] = lookup(obj, field);
    if (found) {
      const keys = field.split(".");
      let target = out;
      for (const key of keys.slice(0, -1)) target = target[key] = { ...(isObject(target[key]) ? target[key] : {}) };
      target[keys[keys.length - 1]] = v;
    }
  }
  return out;
}

// Whether an annotation is in the essence, as the host decides: not
// kubectl's last-applied configuration, nor under an operator's prefix
// (kopf.zalando.org, its subdomains, or a prefix marked "kopf-managed").
function essentialAnnotation(key, annotations) {
  if (key === "kubectl.kubernetes.io/last-applied-configuration") return false;
  const slash = key.indexOf("/");
  if (slash < 0) return true;
  const prefix = key.slice(0, slash);
  return !(`${prefix}/kopf-managed` in annotations) && prefix !== "kopf.zalando.org" && !prefix.endsWith(".kopf.zalando.org");
}

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

// Go's path.Match on host names: * and ? within the name.
function globMatch(glob, s) {
  const re = new RegExp("^" + glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]") + "$");
  return re.test(s);
}

// Whether a sub-handler's outcome finishes it, as the host classifies it.
function finalOutcome(o, opts, retry) {
  if (o.status === "success" || o.status === "permanent") return true;
  if (o.status === "error" && (opts.errors === "ignored" || opts.errors === "permanent")) return true;
  if (o.status === "children") return false;
  return opts.retries > 0 && retry + 1 >= opts.retries;
}

// [value, found] at a dotted path.
function lookup(v, path) {
  for (const k of path.split(".")) {
    if (!isObject(v) || !(k in v)) return [undefined, false];
    v = v[k];
  }
  return [v, true];
}

// Deep equality of JSON values (objects by key, whatever their order).
function same(a, b) {
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => k in b && same(a[k], b[k]));
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return a === b;
}

const CHANGING = ["create", "update", "delete", "resume", "field"];

/** Why the host would not call the handler of spec (its manifest entry)
 * for obj (old: its previous state) by its declarative filters alone ("" when
 * they match): labels and annotations on the object, the field's value (for
 * changing handlers on the old or the new essence), for update and field
 * handlers that the field (or, without one, the essence) changed, and the
 * old and new filters. Callable filters and when are the module's. */
export function declaredWhyNot(spec, obj, old) {
  if (["startup", "cleanup", "probe", "convert"].includes(spec.kind)) return "";
  const body = obj || old || {};
  const f = spec.filters || {};
  for (const what of ["labels", "annotations"]) {
    const why = metaMismatch(what, f[what], (body.metadata || {})[what]);
    if (why) return why;
  }
  const field = f.field, changing = CHANGING.includes(spec.kind);
  const before = old ? essence(old, field) : undefined, after = essence(body, field);
  if (field) {
    const values = changing ? [lookup(after, field), lookup(before, field)] : [lookup(body, field)];
    if (!values.some(([v, found]) => f.value === undefined ? found : checkValue(f.value, v, found))) {
      if (f.value === undefined) return `its field ${field} is absent`;
      return `its field ${field} does not match the value filter ${describe(f.value)}`;
    }
  }
  if (!changing) return "";
  if (!field) {
    if (spec.kind === "update" && before !== undefined && same(before, after)) return "nothing essential changed between the old and the new object";
    return "";
  }
  const [ov, of] = lookup(before, field), [nv, nf] = lookup(after, field);
  if ((spec.kind === "update" || spec.kind === "field") && of === nf && same(ov, nv)) return `its field ${field} did not change`;
  if (f.old && !checkValue(f.old, ov, of)) return `the old value of ${field} does not match the old filter ${describe(f.old)}`;
  if (f.new && !checkValue(f.new, nv, nf)) return `the new value of ${field} does not match the new filter ${describe(f.new)}`;
  return "";
}

// The first label or annotation filter (by key) the content does not match.
function metaMismatch(what, filters, content) {
  content = content || {};
  const text = (v) => JSON.stringify(typeof v === "string" ? v : v === null ? "<nil>" : JSON.stringify(v));
  for (const key of Object.keys(filters || {}).sort()) {
    const f = filters[key], found = key in content, v = content[key];
    if (f.callback) continue;
    if (f.absent && found) return `its ${what} filter wants ${key} absent, the object has ${text(v)}`;
    if (f.present && !found) return `its ${what} filter wants ${key} present, the object has none`;
    if (f.value !== undefined && !found) return `its ${what} filter wants ${key}=${JSON.stringify(f.value)}, the object has none`;
    if (f.value !== undefined && v !== f.value) return `its ${what} filter wants ${key}=${JSON.stringify(f.value)}, the object has ${key}=${text(v)}`;
  }
  return "";
}

function checkValue(f, v, found) {
  if (f.callback) return true;
  if (f.present) return found;
  if (f.absent) return !found;
  return found && same(f.value, v);
}

function describe(f) {
  if (f.present) return "present";
  if (f.absent) return "absent";
  if (f.callback) return "(a callback)";
  return JSON.stringify(f.value);
}

/** Which of a handler's module-side filters refused, in the host's words
 * (the abi module's Filters.CallbackRefusal). */
export function callbackRefusal(filters) {
  const callables = [];
  for (const what of ["labels", "annotations"]) {
    for (const k of Object.keys(filters[what] || {}).sort()) if (filters[what][k].callback) callables.push(`${what} filter on ${k}`);
  }
  for (const what of ["value", "old", "new"]) if (filters[what] && filters[what].callback) callables.push(`${what} filter on ${filters.field}`);
  if (!callables.length) return "its when filter returned false";
  if (callables.length === 1) return `its callable ${callables[0]} (or its when filter, if it has one) returned false`;
  return `one of its callable filters (${callables.join(", ")}) or its when filter, if it has one, returned false`;
}

function fieldOf(v, path) {
  for (const k of path.split(".")) {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
    v = v[k];
  }
  return v;
}

function diff(path, old, neu) {
  if (JSON.stringify(old) === JSON.stringify(neu)) return [];
  const isObj = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
  if (old === undefined || old === null) return [{ op: "add", field: path, new: neu }];
  if (neu === undefined || neu === null) return [{ op: "remove", field: path, old }];
  if (!isObj(old) || !isObj(neu)) return [{ op: "change", field: path, old, new: neu }];
  const keys = [...new Set([...Object.keys(old), ...Object.keys(neu)])].sort();
  return keys.flatMap((k) => diff([...path, k], old[k], neu[k]));
}

function mergePatch(target, patch) {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out = target !== null && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The test kit's host under its former name (every SDK's kit calls it Host). */
export const FakeHost = Host;
