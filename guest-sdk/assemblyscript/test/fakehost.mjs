// A fake kopf-wasm host for the AssemblyScript SDK's tests, in Node: it
// serves Extism's kernel (extism:host/env) and the ABI's host functions
// (kopf:host/v1) to a module, records every host call with its exact bytes,
// refuses Kubernetes requests the manifest does not permit (the real
// host's 403), and serves permitted ones from an in-memory object store.

const enc = new TextEncoder();
const dec = new TextDecoder();

export class FakeHost {
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

  /** The request the host would send to handler id (a subset of kopftest's). */
  request(id, obj, old) {
    const spec = this.spec(id);
    const req = { handler: id, kind: spec.kind, retry: 0, started: "2026-01-01T00:00:00Z" };
    if (spec.options.param !== undefined) req.param = spec.options.param;
    if (["startup", "cleanup", "probe"].includes(spec.kind)) { req.activity = spec.kind; return req; }
    obj = obj || old;
    const meta = obj.metadata || {};
    if (meta.name) req.name = meta.name;
    if (meta.namespace) req.namespace = meta.namespace;
    if (meta.uid) req.uid = meta.uid;
    req.body = obj;
    if (["create", "update", "delete", "resume", "field"].includes(spec.kind)) {
      req.reason = spec.kind === "field" ? (old ? "update" : "create") : spec.kind;
      let before = old ? essence(old) : undefined, after = essence(obj);
      if (spec.filters.field) {
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
  run(id, obj, old) { return this.call(this.request(id, obj, old)); }

  answer(fn, request) {
    const req = JSON.parse(request);
    switch (fn) {
      case "log": return null;
      case "post_event": return "{}";
      case "kube_request": return this.kube(req);
      case "index_lookup": return JSON.stringify({ values: [] });
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

  requests(fn) { return this.calls.filter((c) => c.func === fn).map((c) => JSON.parse(c.request)); }
  logs() { return this.requests("log"); }
  events() { return this.requests("post_event"); }
  kubeRequests() { return this.requests("kube_request"); }
}

function essence(obj) {
  if (!obj) return undefined;
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    if (["status", "apiVersion", "kind"].includes(k)) continue;
    if (k === "metadata") {
      const kept = {};
      for (const key of ["labels", "annotations"]) if (v[key] !== undefined) kept[key] = v[key];
      if (Object.keys(kept).length) out[k] = kept;
    } else out[k] = v;
  }
  return out;
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
