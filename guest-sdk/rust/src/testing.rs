//! Offline tests of a module's handlers, natively with `cargo test`: the
//! same JSON bytes as the wasm entry points, with a fake host that records
//! logs, Events and API requests, refuses requests the manifest does not
//! permit (the real host's 403), and serves permitted ones from an
//! in-memory object store (or a function of the test's).
//!
//! ```ignore
//! #[test]
//! fn create() {
//!     let h = kopf::testing::Host::new(kopf::module!(register));
//!     let res = h.run("create_fn", &obj, None);
//!     assert_eq!(res.outcome, Ok(obj!{"message" => "hello world"}));
//!     assert_eq!(h.logs().len(), 1);
//! }
//! ```

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::abi::{self, write_host_error, Kind, ObjWriter};
use crate::errors::Error;
use crate::json::{Map, Value};
use crate::registry::Module;
use crate::host::Host as HostFunctions;
use crate::http::{HttpRequest, HttpResponse};
use crate::obj;

/// One call of a host function: its name and the exact bytes.
#[derive(Clone, Debug)]
pub struct HostCall {
    pub func: String,
    pub request: String,
    pub reply: Option<String>,
}

type KubeFn = Box<dyn FnMut(&Value) -> String>;
type HttpFn = Box<dyn FnMut(&HttpRequest) -> HttpResponse>;

#[derive(Default)]
struct State {
    calls: Vec<HostCall>,
    sleeps: Vec<f64>,
    stop_after: usize,
    stop_reason: String,
    objects: BTreeMap<String, Value>,
    serial: u64,
    indices: BTreeMap<String, BTreeMap<String, Vec<Value>>>,
    memos: BTreeMap<String, Value>,
    kube: Option<KubeFn>,
    http: Option<HttpFn>,
    force: bool,
}

/// The fake host and the module under test: the test kit's host, named
/// `Host` in every SDK (Go's `kopftest.Host`, Python's `kopf.testing.Host`,
/// AssemblyScript's `Host` in test/fakehost.mjs).
pub struct Host {
    module: Module,
    manifest: Value,
    state: Rc<RefCell<State>>,
}

/// A handler call's response. Name it `testing::Result`, as `io::Result`:
/// a glob import of this module would hide the standard `Result`.
#[derive(Clone, Debug)]
pub struct Result {
    /// The exact bytes the module wrote.
    pub raw: String,
    /// The response decoded.
    pub response: Value,
    /// The result on success, else the error the outcome describes.
    pub outcome: std::result::Result<Value, Error>,
}

impl Result {
    /// The merge patch (null when none).
    pub fn merge(&self) -> &Value {
        &self.response["patch"]["merge"]
    }
    /// The JSON patch operations (null when none).
    pub fn json_patch(&self) -> &Value {
        &self.response["patch"]["json"]
    }
    /// The sub-handlers the call registered, by full id ("parent/child").
    pub fn children(&self) -> BTreeMap<String, Child> {
        let mut out = BTreeMap::new();
        for s in self.response["subhandlers"].as_array().cloned().unwrap_or_default() {
            let o = &s["outcome"];
            let outcome = match o.str_at("status") {
                "" => None,
                "success" => Some(Ok(s["result"].clone())),
                "temporary" => Some(Err(Error::Temporary { message: o.str_at("message").into(), delay: o["delay"].as_f64().map(std::time::Duration::from_secs_f64) })),
                "permanent" => Some(Err(Error::permanent(o.str_at("message")))),
                "children" => Some(Err(Error::ChildrenRetry)),
                _ => Some(Err(Error::arbitrary(o.str_at("message")))),
            };
            out.insert(s.str_at("id").to_string(), Child { parent: s.str_at("parent").into(), outcome, options: s["options"].clone() });
        }
        out
    }
    /// Whether the handler has unfinished sub-handlers: the host calls it
    /// again (Kopf's HandlerChildrenRetry).
    pub fn pending(&self) -> bool {
        self.response["outcome"].str_at("status") == "children"
    }
    /// Whether a webhook allowed the request.
    pub fn allowed(&self) -> bool {
        self.response["admission"]["allowed"].as_bool().unwrap_or(false)
    }
}

/// One sub-handler that a call registered ([`Result::children`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    /// The full id of the handler that registered it.
    pub parent: String,
    /// Its result or error when the module ran it in this call; None when
    /// it did not (finished, sleeping, filtered, or used up).
    pub outcome: Option<std::result::Result<Value, Error>>,
    /// Its error options and param, as the response carries them.
    pub options: Value,
}

struct FakeHost {
    state: Rc<RefCell<State>>,
    module: String,
    permissions: Value,
    hosts: Vec<String>,
}

impl Host {
    /// A fake host for `module` (from `kopf::module!(register)`); panics on
    /// registration mistakes, as the host refuses such a module.
    pub fn new(module: Module) -> Host {
        let raw = match module.manifest_json() {
            Ok(raw) => raw,
            Err(e) => panic!("{}", e),
        };
        let manifest = Value::parse(&raw).expect("the manifest is JSON");
        Host { module, manifest, state: Rc::new(RefCell::new(State::default())) }
    }

    /// The manifest as the module exports it.
    pub fn manifest_json(&self) -> String {
        self.module.manifest_json().unwrap()
    }
    /// The manifest decoded.
    pub fn manifest(&self) -> &Value {
        &self.manifest
    }
    /// The spec of handler `id`; panics when there is none.
    pub fn spec(&self, id: &str) -> &Value {
        let hs = self.manifest["handlers"].as_array().unwrap();
        hs.iter().find(|h| h["id"].as_str() == Some(id)).unwrap_or_else(|| panic!("the module has no handler {:?}", id))
    }

    /// Makes daemons stop after `n` sleeps, with `reason`.
    pub fn stop_after(&self, n: usize, reason: &str) {
        let mut s = self.state.borrow_mut();
        s.stop_after = n;
        s.stop_reason = reason.to_string();
    }

    /// Serves Kubernetes requests with `f` (request in, reply JSON out)
    /// instead of the object store; permissions are still checked.
    pub fn kube(&self, f: impl FnMut(&Value) -> String + 'static) {
        self.state.borrow_mut().kube = Some(Box::new(f));
    }

    /// Serves the module's outbound HTTP requests with `f`. A request to a
    /// host the manifest does not allow panics, as the real host fails the
    /// call; without `f`, a request gets an error.
    pub fn http(&self, f: impl FnMut(&HttpRequest) -> HttpResponse + 'static) {
        self.state.borrow_mut().http = Some(Box::new(f));
    }

    /// Adds canned objects to the store.
    pub fn add(&self, group: &str, resource: &str, obj: &Value) {
        self.state.borrow_mut().put(group, resource, obj.clone());
    }
    /// An object in the store.
    pub fn object(&self, group: &str, resource: &str, namespace: &str, name: &str) -> Option<Value> {
        self.state.borrow().objects.get(&key(group, resource, namespace, name)).cloned()
    }
    /// Adds values under a key of an index: a string, null, or anything
    /// else (a tuple as an array, a number) kept under its JSON text as the
    /// host keys it, so `kopf::index_key(&[..])` and the array are one key.
    pub fn set_index(&self, index: &str, key: impl Into<Value>, values: Vec<Value>) {
        let k = host_key(&key.into());
        let mut s = self.state.borrow_mut();
        s.indices.entry(index.into()).or_default().entry(k).or_default().extend(values);
    }

    /// The request the host would send to handler `id` for `obj` (and the
    /// `old` object for updates, field handlers and webhooks), to edit
    /// before [`Host::call`].
    pub fn request(&self, id: &str, obj: Option<&Value>, old: Option<&Value>) -> Value {
        self.request_for(id, obj, old, false)
    }

    /// The request of a handler's call, or of its callback filters' when
    /// `filter` (old and new are then the whole object's essences, not
    /// narrowed to the handler's field, as the host sends them).
    fn request_for(&self, id: &str, obj: Option<&Value>, old: Option<&Value>, filter: bool) -> Value {
        let spec = self.spec(id).clone();
        let kind = Kind::parse(spec["kind"].as_str().unwrap_or("")).unwrap();
        let mut req = obj! {"handler" => id, "kind" => kind.as_str(), "retry" => 0, "started" => "2026-01-01T00:00:00Z"};
        let m = req.as_object_mut().unwrap();
        if !spec["options"]["param"].is_null() {
            m.insert("param".into(), spec["options"]["param"].clone());
        }
        let indices = self.index_json();
        if !indices.is_empty() {
            m.insert("indices".into(), Value::Object(indices));
        }
        if kind.is_activity() {
            m.insert("activity".into(), kind.as_str().into());
            return req;
        }
        let obj = obj.or(old).cloned().unwrap_or_else(Value::object);
        for (k, path) in [("name", "metadata.name"), ("namespace", "metadata.namespace"), ("uid", "metadata.uid")] {
            if !obj.str_at(path).is_empty() {
                m.insert(k.into(), obj.str_at(path).into());
            }
        }
        m.insert("body".into(), obj.clone());
        let sel = &spec["resource"];
        let api_version = obj.str_at("apiVersion");
        let (group, version) = match api_version.rfind('/') {
            Some(i) => (&api_version[..i], &api_version[i + 1..]),
            None if !api_version.is_empty() => ("", api_version),
            None => (sel.str_at("group"), sel.str_at("version")),
        };
        m.insert("resource".into(), obj! {"group" => group, "version" => version, "plural" => sel.str_at("name"),
            "kind" => obj.str_at("kind"), "namespaced" => !obj["metadata"]["namespace"].is_null()});
        let memo_key = format!("{}/{}", obj.str_at("metadata.namespace"), obj.str_at("metadata.name"));
        if let Some(memo) = self.state.borrow().memos.get(&memo_key) {
            m.insert("memo".into(), memo.clone());
        }
        if kind.is_changing() {
            let reason = match kind {
                Kind::Create => "create",
                Kind::Update => "update",
                Kind::Delete => "delete",
                Kind::Resume => "resume",
                _ if old.is_none() => "create",
                _ => "update",
            };
            m.insert("reason".into(), reason.into());
            let field = spec["filters"].str_at("field");
            let mut before = old.map(|o| essence(o, field)).unwrap_or(Value::Null);
            let mut after = essence(&obj, field);
            if !field.is_empty() && !filter {
                before = before.path(field).cloned().unwrap_or(Value::Null);
                after = after.path(field).cloned().unwrap_or(Value::Null);
            }
            let mut d = Vec::new();
            diff(&mut Vec::new(), &before, &after, &mut d);
            if !before.is_null() {
                m.insert("old".into(), before);
            }
            if !after.is_null() {
                m.insert("new".into(), after);
            }
            if !d.is_empty() {
                m.insert("diff".into(), Value::Array(d));
            }
        } else if kind == Kind::Event {
            m.insert("event".into(), obj! {"type" => if old.is_some() { "MODIFIED" } else { "ADDED" }, "object" => obj.clone()});
        } else if kind.is_webhook() {
            let op = if let Some(old) = old {
                m.insert("old".into(), old.clone());
                "UPDATE"
            } else {
                "CREATE"
            };
            m.insert("new".into(), obj.clone());
            let mut d = Vec::new();
            diff(&mut Vec::new(), old.unwrap_or(&Value::Null), &obj, &mut d);
            if !d.is_empty() {
                m.insert("diff".into(), Value::Array(d));
            }
            m.insert("admission".into(), obj! {"uid" => format!("kopftest-{}", obj.str_at("metadata.name")), "operation" => op,
                "userInfo" => obj!{"username" => "kopftest"}});
        }
        req
    }

    fn index_json(&self) -> Map {
        let s = self.state.borrow();
        let mut out = Map::new();
        for (id, idx) in &s.indices {
            let mut o = Map::new();
            for (k, vs) in idx {
                let key = match Value::parse(k) {
                    Ok(Value::String(s)) => s,
                    _ => k.clone(),
                };
                o.insert(key, Value::Array(vs.clone()));
            }
            out.insert(id.clone(), Value::Object(o));
        }
        out
    }

    /// Calls the module's handle entry point with a request, as the host
    /// does, and keeps the memo it returns for the object's next calls.
    pub fn call(&self, request: &Value) -> Result {
        let mut host = FakeHost {
            state: self.state.clone(),
            module: self.module.name.clone(),
            permissions: self.manifest["permissions"]["kubernetes"].clone(),
            hosts: self.manifest["permissions"]["hosts"].as_array().map(|a| a.iter().filter_map(|h| h.as_str().map(String::from)).collect()).unwrap_or_default(),
        };
        let raw = self.module.handle_json(request.to_string().as_bytes(), &mut host).unwrap_or_else(|e| panic!("the module failed: {}", e));
        let response = Value::parse(&raw).unwrap_or_else(|e| panic!("the response is not JSON: {}: {}", e, raw));
        if let Some(memo) = response.get("memo") {
            let k = format!("{}/{}", request.str_at("namespace"), request.str_at("name"));
            self.state.borrow_mut().memos.insert(k, memo.clone());
        }
        let o = &response["outcome"];
        let message = o.str_at("message").to_string();
        let outcome = match o.str_at("status") {
            "success" => Ok(response["result"].clone()),
            "temporary" => Err(match o["delay"].as_f64() {
                Some(d) => Error::temporary_after(message, std::time::Duration::from_secs_f64(d)),
                None => Error::temporary(message),
            }),
            "permanent" => match o["code"].as_f64() {
                Some(c) => Err(Error::admission(message, c as u16)),
                None => Err(Error::permanent(message)),
            },
            "children" => Err(Error::ChildrenRetry),
            _ => Err(Error::arbitrary(message)),
        };
        Result { raw, response, outcome }
    }

    /// Runs handler `id` on `obj` (with `old` for updates, field handlers
    /// and webhooks). Panics when the host would not call the handler for
    /// this object (see [`Host::why_not`]), unless [`Host::force`].
    pub fn run(&self, id: &str, obj: &Value, old: Option<&Value>) -> Result {
        if !self.state.borrow().force {
            let why = self.why_not(id, obj, old);
            if !why.is_empty() {
                panic!("the host would not call handler {:?} for this object: {} (call force(true) to call it anyway; why_not tells without calling)", id, why);
            }
        }
        self.call(&self.request(id, Some(obj), old))
    }

    /// The request of the next processing cycle after `res` answered
    /// `req`, as the host builds it: the sub-handlers' progress carried over
    /// (attempts counted; successes, permanent failures and errors their
    /// options make final, finished), the parent's retry counted. Delays
    /// are not waited for: every unfinished sub-handler is due.
    pub fn next_cycle(&self, req: &Value, res: &Result) -> Value {
        let mut states: Vec<Value> = req["subhandlers"].as_array().cloned().unwrap_or_default();
        for s in res.response["subhandlers"].as_array().cloned().unwrap_or_default() {
            let id = s.str_at("id").to_string();
            let i = match states.iter().position(|st| st.str_at("id") == id) {
                Some(i) => i,
                None => {
                    states.push(obj! {"id" => id.as_str(), "retry" => 0, "started" => req.str_at("started")});
                    states.len() - 1
                }
            };
            let st = states[i].as_object_mut().unwrap();
            let finished = st.get("finished").and_then(Value::as_bool).unwrap_or(false);
            let retry = st.get("retry").and_then(Value::as_i64).unwrap_or(0);
            let retries = s["options"]["retries"].as_i64().unwrap_or(0);
            if !s["outcome"].is_null() && !finished {
                let o = &s["outcome"];
                let done = match o.str_at("status") {
                    "success" | "permanent" => true,
                    "error" if matches!(s["options"].str_at("errors"), "ignored" | "permanent") => true,
                    "children" => false,
                    _ => retries > 0 && retry + 1 >= retries,
                };
                if done {
                    st.insert("finished".into(), true.into());
                }
                st.insert("retry".into(), (retry + 1).into());
            } else if s["outcome"].is_null() && !finished && retries > 0 && retry >= retries {
                st.insert("finished".into(), true.into()); // used up: the host fails it
            }
            st.remove("sleeping");
        }
        let mut next = req.clone();
        let m = next.as_object_mut().unwrap();
        m.insert("subhandlers".into(), Value::Array(states));
        let retry = req["retry"].as_i64().unwrap_or(0);
        m.insert("retry".into(), (retry + 1).into());
        next
    }

    /// Runs handler `id` on `obj` (`old` as for [`Host::run`]) cycle
    /// after cycle, as the host does while it has unfinished sub-handlers,
    /// until it has none or `max` cycles passed, and returns every cycle's
    /// response.
    pub fn run_cycles(&self, id: &str, obj: &Value, old: Option<&Value>, max: usize) -> Vec<Result> {
        let mut req = self.request(id, Some(obj), old);
        let mut out: Vec<Result> = Vec::new();
        while out.len() < max {
            let res = self.call(&req);
            let pending = res.pending();
            if pending {
                req = self.next_cycle(&req, &res);
            }
            out.push(res);
            if !pending {
                break;
            }
        }
        out
    }

    /// Makes [`Host::run`] call handlers that the host would not call
    /// for the object (by default it panics).
    pub fn force(&self, on: bool) {
        self.state.borrow_mut().force = on;
    }

    /// Why the host would not call handler `id` for `obj` (`old` is the
    /// previous state, as for [`Host::run`]), or "" when it would: the
    /// declarative filters as the host applies them ([`declared_why_not`]),
    /// then the module's callable filters and `when`, asked as the host
    /// asks them.
    pub fn why_not(&self, id: &str, obj: &Value, old: Option<&Value>) -> String {
        let spec = self.spec(id).clone();
        let why = declared_why_not(&spec, Some(obj), old);
        if !why.is_empty() || spec["filters"]["when"].as_bool() != Some(true) {
            return why;
        }
        if self.matches(id, obj, old) {
            return String::new();
        }
        callback_refusal(&spec["filters"])
    }

    /// Calls convert handler `id` as the host does for one object of a
    /// ConversionReview: `obj` as the body, converted to
    /// `desired_api_version` ("group/version"). The result is what the
    /// handler returned (the host then sets its apiVersion and metadata).
    pub fn convert(&self, id: &str, obj: &Value, desired_api_version: &str) -> Result {
        let mut req = self.request(id, Some(obj), None);
        req.as_object_mut().unwrap().insert("conversion".into(), obj! {"uid" => "kopftest-conversion", "desiredAPIVersion" => desired_api_version});
        self.call(&req)
    }

    /// Asks a handler's `when` filter about `obj`.
    pub fn matches(&self, id: &str, obj: &Value, old: Option<&Value>) -> bool {
        let mut req = self.request_for(id, Some(obj), old, true);
        req.as_object_mut().unwrap().insert("call".into(), "when".into());
        self.call(&req).response["matched"].as_bool().unwrap_or(false)
    }

    /// Every host call so far.
    pub fn calls(&self) -> Vec<HostCall> {
        self.state.borrow().calls.clone()
    }
    fn requests(&self, func: &str) -> Vec<Value> {
        self.calls().iter().filter(|c| c.func == func).filter_map(|c| Value::parse(&c.request).ok()).collect()
    }
    /// The log records ({"level","message","fields"}).
    pub fn logs(&self) -> Vec<Value> {
        self.requests(abi::HOST_LOG)
    }
    /// The Events posted ({"type","reason","message"}).
    pub fn events(&self) -> Vec<Value> {
        self.requests(abi::HOST_POST_EVENT)
    }
    /// The Kubernetes requests made, refused ones included.
    pub fn kube_requests(&self) -> Vec<Value> {
        self.requests(abi::HOST_KUBE_REQUEST)
    }
    /// The seconds of each sleep_until_stopped.
    pub fn sleeps(&self) -> Vec<f64> {
        self.state.borrow().sleeps.clone()
    }
}

impl HostFunctions for FakeHost {
    fn call(&mut self, func: &str, request: &[u8]) -> Option<Vec<u8>> {
        let req = String::from_utf8_lossy(request).into_owned();
        let reply = self.answer(func, &req);
        self.state.borrow_mut().calls.push(HostCall { func: func.into(), request: req, reply: reply.clone() });
        reply.map(String::into_bytes)
    }

    fn http(&mut self, req: &HttpRequest) -> std::result::Result<HttpResponse, String> {
        let host = url_host(&req.url);
        if !self.hosts.iter().any(|p| glob(p, &host)) {
            panic!("http_request: the request to {} is not allowed: declare its host with allow_hosts (the host fails the call)", req.url);
        }
        let reply = match self.state.borrow_mut().http.as_mut() {
            Some(f) => Ok(f(req)),
            None => Err("the test serves no outbound HTTP: call Host::http".to_string()),
        };
        let shown = match &reply {
            Ok(r) => Some(format!("{{\"status\":{}}}", r.status)),
            Err(_) => None,
        };
        self.state.borrow_mut().calls.push(HostCall { func: "http_request".into(), request: req.to_json(), reply: shown });
        reply
    }
}

/// The host name of a URL ("" when it has none).
fn url_host(url: &str) -> String {
    let rest = url.split("://").nth(1).unwrap_or("");
    let authority = rest.split(|c| c == '/' || c == '?' || c == '#').next().unwrap_or("");
    let hostport = authority.rsplit('@').next().unwrap_or("");
    if let Some(v6) = hostport.strip_prefix('[') {
        return v6.split(']').next().unwrap_or("").to_string();
    }
    hostport.split(':').next().unwrap_or("").to_string()
}

/// Go's path.Match for host names: `*` is any run of characters, `?` one.
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    fn at(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|i| at(&p[1..], &n[i..])),
            Some('?') => !n.is_empty() && at(&p[1..], &n[1..]),
            Some(c) => n.first() == Some(c) && at(&p[1..], &n[1..]),
        }
    }
    at(&p, &n)
}

impl FakeHost {
    fn answer(&mut self, func: &str, request: &str) -> Option<String> {
        let req = Value::parse(request);
        match func {
            abi::HOST_LOG => None,
            abi::HOST_POST_EVENT => Some("{}".into()),
            abi::HOST_KUBE_REQUEST => Some(match req {
                Ok(r) => self.kube(&r),
                Err(e) => error_reply(400, "BadRequest", &e.to_string()),
            }),
            abi::HOST_INDEX_LOOKUP => Some(match req {
                Ok(r) => self.lookup(&r),
                Err(e) => error_reply(400, "BadRequest", &e.to_string()),
            }),
            abi::HOST_SLEEP_UNTIL_STOPPED => {
                let secs = req.ok().and_then(|r| r["seconds"].as_f64()).unwrap_or(0.0);
                self.state.borrow_mut().sleeps.push(secs);
                Some(self.stopped())
            }
            abi::HOST_IS_STOPPED => Some(self.stopped()),
            _ => None,
        }
    }

    fn stopped(&self) -> String {
        let s = self.state.borrow();
        if s.sleeps.len() > s.stop_after {
            let mut out = String::new();
            let mut w = ObjWriter::new(&mut out);
            w.bool("stopped", true);
            w.str_opt("reason", &s.stop_reason);
            w.end();
            out
        } else {
            "{\"stopped\":false}".into()
        }
    }

    fn kube(&mut self, req: &Value) -> String {
        let verb = match req.str_at("verb") {
            "apply" => "patch",
            v => v,
        };
        let mut resource = req.str_at("resource").to_string();
        if !req.str_at("subresource").is_empty() {
            resource = format!("{}/{}", resource, req.str_at("subresource"));
        }
        let group = req.str_at("group");
        let allowed = self.permissions.as_array().map_or(false, |ps| {
            ps.iter().any(|p| {
                (p.str_at("group") == group || p.str_at("group") == "*")
                    && (p.str_at("resource") == resource || p.str_at("resource") == "*")
                    && p["verbs"].as_array().map_or(false, |vs| vs.iter().any(|v| v.as_str() == Some(verb) || v.as_str() == Some("*")))
            })
        });
        if !allowed {
            let mut name = req.str_at("resource").to_string();
            if !group.is_empty() {
                name = format!("{}.{}", name, group);
            }
            if !req.str_at("subresource").is_empty() {
                name = format!("{}/{}", name, req.str_at("subresource"));
            }
            let msg = format!("module {:?} did not declare permission to {} {}; add it to the module's permissions", self.module, verb, name);
            return error_reply(403, "Forbidden", &msg);
        }
        let mut s = self.state.borrow_mut();
        if let Some(f) = s.kube.as_mut() {
            return f(req);
        }
        s.serve(req)
    }

    fn lookup(&self, req: &Value) -> String {
        let s = self.state.borrow();
        let index = req.str_at("index");
        match s.indices.get(index) {
            None => {
                let mut out = String::from("{\"values\":[],\"error\":");
                write_host_error(&mut out, 404, "NotFound", &format!("module {:?} has no index {:?}", self.module, index), "host");
                out.push('}');
                out
            }
            Some(idx) if req["all"].as_bool() == Some(true) => {
                // The whole index, as a request carries one.
                let mut o = Map::new();
                for (k, vs) in idx {
                    let key = match Value::parse(k) {
                        Ok(Value::String(s)) => s,
                        _ => k.clone(),
                    };
                    o.insert(key, Value::Array(vs.clone()));
                }
                obj! {"values" => Value::Array(Vec::new()), "index" => Value::Object(o)}.to_string()
            }
            Some(idx) => {
                let values = idx.get(&host_key(&req["key"])).cloned().unwrap_or_default();
                obj! {"values" => values}.to_string()
            }
        }
    }
}

/// An index key as the host keys it (JSON text): a string or null as it
/// is, anything else by the string of its JSON text.
fn host_key(key: &Value) -> String {
    match key {
        Value::String(_) | Value::Null => key.to_string(),
        other => Value::from(other.to_string()).to_string(),
    }
}

/// A refusal by the host.
fn error_reply(code: u16, reason: &str, message: &str) -> String {
    let origin = "host";
    let mut out = String::from("{\"error\":");
    write_host_error(&mut out, code, reason, message, origin);
    out.push('}');
    out
}

fn cluster_error(code: u16, reason: &str, message: &str) -> String {
    let mut out = String::from("{\"error\":");
    write_host_error(&mut out, code, reason, message, "cluster");
    out.push('}');
    out
}

fn key(group: &str, resource: &str, namespace: &str, name: &str) -> String {
    format!("{}/{}/{}/{}", group, resource, namespace, name)
}

impl State {
    fn put(&mut self, group: &str, resource: &str, mut obj: Value) {
        self.serial += 1;
        let serial = self.serial;
        let meta = obj.entry_object("metadata");
        meta.insert("resourceVersion".into(), serial.to_string().into());
        meta.entry("uid".into()).or_insert_with(|| format!("kopftest-uid-{}", serial).into());
        let k = key(group, resource, obj.str_at("metadata.namespace"), obj.str_at("metadata.name"));
        self.objects.insert(k, obj);
    }

    fn serve(&mut self, req: &Value) -> String {
        let (group, resource, ns, name) = (req.str_at("group"), req.str_at("resource"), req.str_at("namespace"), req.str_at("name"));
        let k = key(group, resource, ns, name);
        let not_found = || cluster_error(404, "NotFound", &format!("{} {:?} not found", resource, name));
        let reply = |v: &Value| obj! {"body" => v.clone()}.to_string();
        let place = |mut body: Value| {
            if !ns.is_empty() {
                body.entry_object("metadata").insert("namespace".into(), ns.into());
            }
            body
        };
        let body = req["body"].clone();
        match req.str_at("verb") {
            "get" => match self.objects.get(&k) {
                Some(o) => reply(o),
                None => not_found(),
            },
            "list" => {
                let prefix = format!("{}/{}/", group, resource);
                let sel = req.str_at("labelSelector");
                let items: Vec<Value> = self
                    .objects
                    .iter()
                    .filter(|(kk, o)| kk.starts_with(&prefix) && (ns.is_empty() || o.str_at("metadata.namespace") == ns) && selects(sel, &o["metadata"]["labels"]))
                    .map(|(_, o)| o.clone())
                    .collect();
                reply(&obj! {"apiVersion" => "v1", "kind" => "List", "items" => items})
            }
            "create" => {
                let mut body = place(body);
                if body["metadata"]["name"].is_null() && !body["metadata"]["generateName"].is_null() {
                    let n = format!("{}{:05}", body.str_at("metadata.generateName"), self.serial + 1);
                    body.entry_object("metadata").insert("name".into(), n.into());
                }
                let name = body.str_at("metadata.name").to_string();
                let k = key(group, resource, body.str_at("metadata.namespace"), &name);
                if self.objects.contains_key(&k) {
                    return cluster_error(409, "AlreadyExists", &format!("{} {:?} already exists", resource, name));
                }
                self.put(group, resource, body);
                reply(&self.objects[&k])
            }
            "update" => {
                let current = match self.objects.get(&k) {
                    Some(c) => c.clone(),
                    None => return not_found(),
                };
                let rv = &body["metadata"]["resourceVersion"];
                if !rv.is_null() && rv != &current["metadata"]["resourceVersion"] {
                    return cluster_error(409, "Conflict", &format!("the object {} has been modified; apply your changes to the latest version", name));
                }
                self.put(group, resource, place(body));
                reply(&self.objects[&k])
            }
            verb @ ("patch" | "apply") => {
                let current = self.objects.get(&k).cloned();
                if current.is_none() && verb == "patch" {
                    return not_found();
                }
                if req.str_at("patchType") == "json" {
                    return cluster_error(415, "UnsupportedMediaType", "the test host's object store applies merge patches only; serve JSON patches with Host::kube");
                }
                let merged = merge_patch(current.unwrap_or_else(Value::object), &body);
                self.put(group, resource, place(merged));
                reply(&self.objects[&k])
            }
            "delete" => match self.objects.remove(&k) {
                Some(o) => reply(&o),
                None => not_found(),
            },
            v => cluster_error(405, "MethodNotAllowed", &format!("unknown verb {}", v)),
        }
    }
}

fn selects(selector: &str, labels: &Value) -> bool {
    selector.split(',').map(str::trim).filter(|t| !t.is_empty()).all(|term| {
        if let Some((k, v)) = term.split_once("!=") {
            labels[k.trim()].as_str() != Some(v.trim())
        } else if let Some((k, v)) = term.split_once('=') {
            labels[k.trim().trim_end_matches('=')].as_str() == Some(v.trim().trim_start_matches('='))
        } else if let Some(k) = term.strip_prefix('!') {
            labels[k.trim()].is_null()
        } else {
            !labels[term].is_null()
        }
    })
}

/// RFC 7396.
pub fn merge_patch(target: Value, patch: &Value) -> Value {
    let p = match patch {
        Value::Object(p) => p,
        _ => return patch.clone(),
    };
    let mut t = match target {
        Value::Object(t) => t,
        _ => Map::new(),
    };
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            let cur = t.remove(k).unwrap_or(Value::Null);
            t.insert(k.clone(), merge_patch(cur, v));
        }
    }
    Value::Object(t)
}

/// The diff-base essence as the host builds it: the object without
/// status, apiVersion and kind, and of its metadata only the labels and
/// annotations (without kubectl's last-applied configuration and the
/// annotations of operators, see [`essential_annotation`]), none of them
/// empty; plus the handler's `field` when it has one ("" for none): a
/// field in status is essential to its handler.
pub fn essence(obj: &Value, field: &str) -> Value {
    let mut out = Map::new();
    if let Some(m) = obj.as_object() {
        for (k, v) in m {
            if !matches!(k.as_str(), "status" | "apiVersion" | "kind" | "metadata") {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    let mut kept = Map::new();
    for key in ["labels", "annotations"] {
        if let Some(content) = obj["metadata"][key].as_object() {
            let copied: Map = content.iter().filter(|(k, _)| key != "annotations" || essential_annotation(k, content)).map(|(k, v)| (k.clone(), v.clone())).collect();
            if !copied.is_empty() {
                kept.insert(key.into(), Value::Object(copied));
            }
        }
    }
    if !kept.is_empty() {
        out.insert("metadata".into(), Value::Object(kept));
    }
    let mut out = Value::Object(out);
    if !field.is_empty() {
        if let Some(v) = obj.path(field) {
            out.set_path(field, v.clone());
        }
    }
    out
}

/// Whether an annotation is part of the essence, as the host decides: not
/// kubectl's last-applied configuration, nor under an operator's prefix
/// (Kopf's kopf.zalando.org, its subdomains, or a prefix whose annotations
/// include its "kopf-managed" marker).
pub fn essential_annotation(key: &str, annotations: &Map) -> bool {
    if key == "kubectl.kubernetes.io/last-applied-configuration" {
        return false;
    }
    match key.split_once('/') {
        None => true,
        Some((prefix, _)) => {
            !annotations.contains_key(&format!("{}/kopf-managed", prefix)) && prefix != "kopf.zalando.org" && !prefix.ends_with(".kopf.zalando.org")
        }
    }
}

/// Kopf's diff of two values, as the ABI's diff items.
pub fn diff(path: &mut Vec<String>, old: &Value, new: &Value, out: &mut Vec<Value>) {
    if old == new {
        return;
    }
    let field = Value::Array(path.iter().map(|s| Value::from(s.as_str())).collect());
    match (old, new) {
        (Value::Null, _) => out.push(obj! {"op" => "add", "field" => field, "new" => new.clone()}),
        (_, Value::Null) => out.push(obj! {"op" => "remove", "field" => field, "old" => old.clone()}),
        (Value::Object(o), Value::Object(n)) => {
            let keys: std::collections::BTreeSet<&String> = o.keys().chain(n.keys()).collect();
            for k in keys {
                path.push(k.clone());
                diff(path, o.get(k.as_str()).unwrap_or(&Value::Null), n.get(k.as_str()).unwrap_or(&Value::Null), out);
                path.pop();
            }
        }
        _ => out.push(obj! {"op" => "change", "field" => field, "old" => old.clone(), "new" => new.clone()}),
    }
}

/// Why the host would not call the handler of `spec` (its manifest entry)
/// for `obj` (`old`: its previous state), by its declarative filters alone
/// ("" when they match): labels and annotations on the object, the field's
/// value (for changing handlers on the old or the new essence), for update
/// and field handlers that the field (or, without one, the essence)
/// changed, and the old and new filters. Callable filters and `when` are
/// the module's to answer ([`Host::why_not`] asks). The shared table
/// abi/testdata/filters.json checks it against the host.
pub fn declared_why_not(spec: &Value, obj: Option<&Value>, old: Option<&Value>) -> String {
    let kind = match Kind::parse(spec.str_at("kind")) {
        Some(k) => k,
        None => return String::new(),
    };
    if kind.is_activity() || kind == Kind::Convert {
        return String::new();
    }
    let body = obj.or(old).unwrap_or(&Value::Null);
    let f = &spec["filters"];
    for what in ["labels", "annotations"] {
        let why = meta_mismatch(what, &f[what], &body["metadata"][what]);
        if !why.is_empty() {
            return why;
        }
    }
    let field = f.str_at("field");
    let changing = kind.is_changing();
    let before = old.map(|o| essence(o, field));
    let after = essence(body, field);
    let at = |v: Option<&Value>| -> Option<Value> { v.and_then(|v| v.path(field)).cloned() };
    if !field.is_empty() {
        let values = if changing { vec![at(Some(&after)), at(before.as_ref())] } else { vec![at(Some(body))] };
        let value = &f["value"];
        if !values.iter().any(|v| if value.is_null() { v.is_some() } else { check_value(value, v.as_ref()) }) {
            if value.is_null() {
                return format!("its field {} is absent", field);
            }
            return format!("its field {} does not match the value filter {}", field, describe(value));
        }
    }
    if !changing {
        return String::new();
    }
    if field.is_empty() {
        if kind == Kind::Update && before.as_ref() == Some(&after) {
            return "nothing essential changed between the old and the new object".into();
        }
        return String::new();
    }
    let (ov, nv) = (at(before.as_ref()), at(Some(&after)));
    if matches!(kind, Kind::Update | Kind::Field) && ov == nv {
        return format!("its field {} did not change", field);
    }
    if !f["old"].is_null() && !check_value(&f["old"], ov.as_ref()) {
        return format!("the old value of {} does not match the old filter {}", field, describe(&f["old"]));
    }
    if !f["new"].is_null() && !check_value(&f["new"], nv.as_ref()) {
        return format!("the new value of {} does not match the new filter {}", field, describe(&f["new"]));
    }
    String::new()
}

/// The first label or annotation filter (by key) that `content` does not
/// match, in the host's words ("" when all match).
fn meta_mismatch(what: &str, filters: &Value, content: &Value) -> String {
    let filters = match filters.as_object() {
        Some(m) => m,
        None => return String::new(),
    };
    for (key, f) in filters {
        let v = content.get(key);
        let text = |v: &Value| quote(&v.as_str().map(str::to_string).unwrap_or_else(|| if v.is_null() { "<nil>".into() } else { v.to_string() }));
        if f["callback"].as_bool() == Some(true) {
            continue;
        }
        if f["absent"].as_bool() == Some(true) {
            if let Some(v) = v {
                return format!("its {} filter wants {} absent, the object has {}", what, key, text(v));
            }
        } else if f["present"].as_bool() == Some(true) {
            if v.is_none() {
                return format!("its {} filter wants {} present, the object has none", what, key);
            }
        } else if let Some(want) = f["value"].as_str() {
            match v {
                None => return format!("its {} filter wants {}={}, the object has none", what, key, quote(want)),
                Some(v) if v.as_str() != Some(want) => {
                    return format!("its {} filter wants {}={}, the object has {}={}", what, key, quote(want), key, text(v));
                }
                _ => {}
            }
        }
    }
    String::new()
}

/// One value (None: the field is absent) against a value filter; a
/// callback is the module's to decide.
fn check_value(f: &Value, v: Option<&Value>) -> bool {
    if f["callback"].as_bool() == Some(true) {
        return true;
    }
    if f["present"].as_bool() == Some(true) {
        return v.is_some();
    }
    if f["absent"].as_bool() == Some(true) {
        return v.is_none();
    }
    v == Some(&f["value"])
}

fn describe(f: &Value) -> String {
    for word in ["present", "absent"] {
        if f[word].as_bool() == Some(true) {
            return word.into();
        }
    }
    if f["callback"].as_bool() == Some(true) {
        return "(a callback)".into();
    }
    f["value"].to_string()
}

/// A string quoted as the host quotes it (Go's %q).
fn quote(s: &str) -> String {
    format!("{:?}", s)
}

/// Which of a handler's module-side filters refused, in the host's words
/// (the abi module's Filters.CallbackRefusal): the module answers for its
/// `when` and every callable filter at once, so this names the callables
/// the manifest's `filters` declare.
pub fn callback_refusal(filters: &Value) -> String {
    let mut callables = Vec::new();
    for what in ["labels", "annotations"] {
        if let Some(m) = filters[what].as_object() {
            for (k, f) in m {
                if f["callback"].as_bool() == Some(true) {
                    callables.push(format!("{} filter on {}", what, k));
                }
            }
        }
    }
    for what in ["value", "old", "new"] {
        if filters[what]["callback"].as_bool() == Some(true) {
            callables.push(format!("{} filter on {}", what, filters.str_at("field")));
        }
    }
    match callables.len() {
        0 => "its when filter returned false".into(),
        1 => format!("its callable {} (or its when filter, if it has one) returned false", callables[0]),
        _ => format!("one of its callable filters ({}) or its when filter, if it has one, returned false", callables.join(", ")),
    }
}

/// The test kit's host under its former name.
#[deprecated(note = "renamed to testing::Host, the name every SDK's test kit uses")]
pub type Harness = Host;

/// A call's response under its former name.
#[deprecated(note = "renamed to testing::Result, the name every SDK's test kit uses")]
pub type Res = Result;
