//! The context a handler gets: Kopf's kwargs, the patch, and the host.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::abi::{self, Admission, Conversion, DiffItem, Event, ObjWriter, Request, ResourceRef};
use crate::errors::ApiError;
use crate::host::Host;
use crate::json::{write_string, Map, Value, NULL};
use crate::patch::Patch;

/// Event types for [`Context::post_event`].
pub const EVENT_NORMAL: &str = "Normal";
pub const EVENT_WARNING: &str = "Warning";
/// The type of [`Context::exception`]'s Events.
pub const EVENT_ERROR: &str = "Error";

/// Log levels of the host's structured log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Warning,
    Error,
}

impl Level {
    /// Whether the host writes records of this level at its level `host`
    /// (a request's `logLevel`): every level for "" and for a level this
    /// SDK does not know, which the host then filters.
    fn at_least(self, host: &str) -> bool {
        let min = match host {
            "info" => Level::Info,
            "warning" => Level::Warning,
            "error" => Level::Error,
            _ => Level::Debug,
        };
        self as u8 >= min as u8
    }

    fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }
}

/// What a handler gets: Kopf's kwargs decoded from the host's request, a
/// [`Patch`] to fill, the memo, and the host's services (log, Events, the
/// Kubernetes client, indices, daemon stops). Valid during its call only.
pub struct Context<'h> {
    pub(crate) req: Request<'h>,
    pub(crate) module: &'h str,
    pub(crate) host: RefCell<&'h mut dyn Host>,
    pub(crate) patch: Patch,
    pub(crate) memo: Option<Map>,
    pub(crate) memo_was: String,
    pub(crate) stop_reason: RefCell<String>,
    /// Sub-handlers registered and not run yet, whether the handler ran
    /// them itself (`execute`), what every one registered in the call came
    /// to, and the id of the sub-handler running ("" for the handler).
    pub(crate) subs: Vec<crate::subhandlers::Sub>,
    pub(crate) executed: bool,
    pub(crate) sub_outcomes: Vec<crate::subhandlers::SubOutcome>,
    pub(crate) sub_id: String,
    /// Runs the registered sub-handlers: set by the first registration, so
    /// that a module without sub-handlers links none of their machinery.
    pub(crate) run_subs: Option<crate::subhandlers::RunSubs>,
    /// The handler's field, for its callable value filters.
    pub(crate) field: String,
}

impl<'h> Context<'h> {
    pub(crate) fn make(req: Request<'h>, module: &'h str, host: &'h mut dyn Host) -> Context<'h> {
        Context { req, module, host: RefCell::new(host), patch: Patch::default(), memo: None, memo_was: String::new(), stop_reason: RefCell::new(String::new()),
            subs: Vec::new(), executed: false, sub_outcomes: Vec::new(), sub_id: String::new(), run_subs: None, field: String::new() }
    }

    /// The id of the handler being called.
    pub fn handler(&self) -> &str {
        &self.req.handler
    }
    /// The handler's kind ("create", "timer", ...).
    pub fn kind(&self) -> &str {
        &self.req.kind
    }
    /// The cause of a changing handler's call: "create", "update", "delete", "resume".
    pub fn reason(&self) -> &str {
        &self.req.reason
    }
    /// The resolved resource of the object.
    pub fn resource(&self) -> Option<&ResourceRef> {
        self.req.resource()
    }
    /// The whole object.
    pub fn body(&self) -> &Value {
        self.req.body()
    }
    /// The object's spec (null when it has none; indexing null gives null).
    pub fn spec(&self) -> &Value {
        &self.req.body()["spec"]
    }
    /// The object's metadata.
    pub fn meta(&self) -> &Value {
        &self.req.body()["metadata"]
    }
    /// The object's status.
    pub fn status(&self) -> &Value {
        &self.req.body()["status"]
    }
    /// The object's labels.
    pub fn labels(&self) -> BTreeMap<String, String> {
        string_map(&self.meta()["labels"])
    }
    /// The object's annotations.
    pub fn annotations(&self) -> BTreeMap<String, String> {
        string_map(&self.meta()["annotations"])
    }
    pub fn name(&self) -> &str {
        &self.req.name
    }
    /// The namespace ("" for cluster-scoped objects).
    pub fn namespace(&self) -> &str {
        &self.req.namespace
    }
    pub fn uid(&self) -> &str {
        &self.req.uid
    }
    /// The old state: the diff-base essence for whole-object handlers, the
    /// field's value for field handlers, the old body for webhooks.
    pub fn old(&self) -> &Value {
        self.req.old()
    }
    /// The new state, as [`Context::old`].
    pub fn new(&self) -> &Value {
        self.req.new()
    }
    /// The handler's field (a dotted path; "" for none).
    pub(crate) fn filter_field(&self) -> String {
        self.field.clone()
    }
    /// Whether the call is about a change (old or new are set), where a
    /// value filter matches the old or the new value.
    pub(crate) fn is_changing_call(&self) -> bool {
        crate::abi::Kind::parse(self.kind()).map_or(false, crate::abi::Kind::is_changing) && (!self.old().is_null() || !self.new().is_null())
    }
    /// The differences between old and new.
    pub fn diff(&self) -> &[DiffItem] {
        self.req.diff()
    }
    /// 0 on the first attempt, then 1, 2, ...
    pub fn retry(&self) -> i64 {
        self.req.retry
    }
    /// When the first attempt began (RFC 3339, as the host sent it).
    pub fn started(&self) -> &str {
        &self.req.started
    }

    /// When the host stops this call (RFC 3339; empty when only the host's
    /// stop ends it, as for daemons): the call's start plus
    /// wasm.callTimeout, or an admission review's timeout when sooner.
    pub fn deadline(&self) -> &str {
        &self.req.deadline
    }
    /// The time since the first attempt began.
    pub fn runtime(&self) -> Duration {
        Duration::from_secs_f64(self.req.runtime.max(0.0))
    }
    /// The handler's `param` option (null when unset).
    pub fn param(&self) -> &Value {
        self.req.param()
    }
    /// The object's memo: changes are kept (in the host's memory) for the
    /// object's next calls.
    pub fn memo(&mut self) -> &mut Map {
        if self.memo.is_none() {
            let m = match self.req.memo() {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            self.memo_was = crate::json::map_json(&m).unwrap_or_default();
            self.memo = Some(m);
        }
        self.memo.as_mut().unwrap()
    }
    /// The change to the object that the host applies after the call.
    pub fn patch(&mut self) -> &mut Patch {
        &mut self.patch
    }
    /// The watch event of an event handler.
    pub fn event(&self) -> Option<&Event> {
        self.req.event()
    }
    /// What a convert handler converts to (None for other kinds): return
    /// the body converted to `desired_api_version`; the host sets the
    /// apiVersion and keeps the metadata but labels and annotations.
    pub fn conversion(&self) -> Option<&Conversion> {
        self.req.conversion()
    }
    /// The admission request of a webhook.
    pub fn admission(&self) -> Option<&Admission> {
        self.req.admission()
    }
    /// The admission request, to add warnings.
    pub fn admission_mut(&mut self) -> Option<&mut Admission> {
        self.req.admission_mut()
    }
    /// The kind of an activity (startup, cleanup, probe).
    pub fn activity(&self) -> &str {
        &self.req.activity
    }
    /// An index's values at the time of the call, as the request carries
    /// it: an object from key to a list of values (null when the module has
    /// no such index, and when the index is too large for the host to carry
    /// in every request: use [`Context::index_all`] or
    /// [`Context::index_lookup`]).
    pub fn index(&self, id: &str) -> &Value {
        self.req.indices().get(id).unwrap_or(&NULL)
    }

    /// The whole index `id`: the request's copy, or, when the host carries
    /// the index as null because it is large, the index read from the host
    /// in one call (call it once per handler call).
    pub fn index_all(&self, id: &str) -> Result<Value, ApiError> {
        let carried = self.index(id);
        if !carried.is_null() || self.req.indices().get(id).is_none() {
            return Ok(carried.clone());
        }
        let call = format!("index {}", id);
        let mut out = String::new();
        let mut w = ObjWriter::new(&mut out);
        w.str("index", id);
        w.value("key", &Value::Null).map_err(|e| ApiError::local(&call, e.to_string()))?;
        w.value("all", &Value::Bool(true)).map_err(|e| ApiError::local(&call, e.to_string()))?;
        w.end();
        let reply = self.host_call(abi::HOST_INDEX_LOOKUP, &out).map_err(|e| ApiError::local(&call, e))?;
        check(&call, &reply)?;
        Ok(reply["index"].clone())
    }

    // ---- the host ----

    fn host_call(&self, func: &str, request: &str) -> Result<Value, String> {
        let reply = self.host.borrow_mut().call(func, request.as_bytes()).ok_or_else(|| format!("{}: the host function returned no reply", func))?;
        Value::parse_bytes(&reply).map_err(|e| format!("decode the {} reply: {}", func, e))
    }

    /// Writes a record to the host's log; the host adds the module, the
    /// handler and the object. `fields` is an object (`obj!{...}`) or `()`.
    /// A record below the host's level (the request's `logLevel`) is
    /// dropped here, unsent.
    pub fn log(&self, level: Level, message: &str, fields: impl Into<Value>) {
        if !level.at_least(&self.req.log_level) {
            return;
        }
        let fields = fields.into();
        let mut out = String::with_capacity(64 + message.len());
        let mut w = ObjWriter::new(&mut out);
        w.str("level", level.as_str());
        w.str("message", message);
        let mut fields = fields;
        if !self.sub_id.is_empty() {
            if !matches!(fields, Value::Object(_) | Value::Null) {
                fields = crate::obj! {"fields" => fields};
            }
            if fields.is_null() {
                fields = Value::object();
            }
            fields.as_object_mut().unwrap().insert("subhandler".into(), Value::from(self.sub_id.as_str()));
        }
        let empty = fields.as_object().map_or(true, |m| m.is_empty());
        if !empty {
            if !matches!(fields, Value::Object(_)) {
                fields = crate::obj! {"fields" => fields};
            }
            if w.value("fields", &fields).is_err() {
                let k = w.key("fields");
                k.push_str("{\"fields\":");
                write_string(k, &fields.to_string());
                k.push('}');
            }
        }
        w.end();
        self.host.borrow_mut().call(abi::HOST_LOG, out.as_bytes());
    }
    pub fn debug(&self, message: &str, fields: impl Into<Value>) {
        self.log(Level::Debug, message, fields)
    }
    pub fn info(&self, message: &str, fields: impl Into<Value>) {
        self.log(Level::Info, message, fields)
    }
    pub fn warn(&self, message: &str, fields: impl Into<Value>) {
        self.log(Level::Warning, message, fields)
    }
    pub fn error(&self, message: &str, fields: impl Into<Value>) {
        self.log(Level::Error, message, fields)
    }

    /// Posts a Kubernetes Event about the object (Kopf's kopf.event).
    pub fn post_event(&self, event_type: &str, reason: &str, message: &str) -> Result<(), ApiError> {
        let call = format!("post event {}", reason);
        let mut out = String::new();
        let mut w = ObjWriter::new(&mut out);
        w.str("type", event_type);
        w.str("reason", reason);
        w.str("message", message);
        w.end();
        let reply = self.host_call(abi::HOST_POST_EVENT, &out).map_err(|e| ApiError::local(&call, e))?;
        check(&call, &reply)
    }

    /// Posts a Kubernetes Event about each of `objs` (Kopf's
    /// kopf.event(objs, ...)): any objects, each with apiVersion, kind and
    /// metadata.name (metadata.namespace and uid when it has them). No
    /// objects post nothing, as in Kopf; [`Context::post_event`] posts
    /// about the handled object. The first failure is returned after every
    /// object was tried.
    pub fn post_event_about(&self, objs: &[Value], event_type: &str, reason: &str, message: &str) -> Result<(), ApiError> {
        let call = format!("post event {}", reason);
        let mut first = Ok(());
        for obj in objs {
            let mut about = Value::object();
            for (key, path) in [("apiVersion", "apiVersion"), ("kind", "kind"), ("name", "metadata.name"), ("namespace", "metadata.namespace"), ("uid", "metadata.uid")] {
                let v = obj.str_at(path);
                if !v.is_empty() {
                    about.set_path(key, v);
                }
            }
            let mut out = String::new();
            let mut w = ObjWriter::new(&mut out);
            w.str("type", event_type);
            w.str("reason", reason);
            w.str("message", message);
            let written = w.value("about", &about).map_err(|e| ApiError::local(&call, e.to_string()));
            w.end();
            let result = written
                .and_then(|_| self.host_call(abi::HOST_POST_EVENT, &out).map_err(|e| ApiError::local(&call, e)))
                .and_then(|reply| check(&call, &reply));
            if first.is_ok() {
                first = result;
            }
        }
        first
    }

    /// Posts a Normal Event about each of `objs`, Kopf's kopf.info.
    pub fn info_about(&self, objs: &[Value], reason: &str, message: &str) -> Result<(), ApiError> {
        self.post_event_about(objs, EVENT_NORMAL, reason, message)
    }
    /// Posts a Warning Event about each of `objs`, Kopf's kopf.warn.
    pub fn warn_about(&self, objs: &[Value], reason: &str, message: &str) -> Result<(), ApiError> {
        self.post_event_about(objs, EVENT_WARNING, reason, message)
    }
    /// Posts an Error Event about each of `objs` (`&[ctx.body().clone()]`
    /// for the object being handled), Kopf's kopf.exception: the reason is
    /// the error's type name when `reason` is "", and the message is
    /// `message` followed by the error.
    pub fn exception<E: std::fmt::Display + ?Sized>(&self, objs: &[Value], reason: &str, message: &str, err: &E) -> Result<(), ApiError> {
        let reason = if reason.is_empty() { type_name_of::<E>() } else { reason.to_string() };
        let message = format!("{} {}", message, err).trim().to_string();
        self.post_event_about(objs, EVENT_ERROR, &reason, &message)
    }

    /// The values stored under `key` in the index of handler `index`.
    pub fn index_lookup(&self, index: &str, key: impl Into<Value>) -> Result<Vec<Value>, ApiError> {
        let call = format!("index {}", index);
        let mut out = String::new();
        let mut w = ObjWriter::new(&mut out);
        w.str("index", index);
        w.value("key", &key.into()).map_err(|e| ApiError::local(&call, e.to_string()))?;
        w.end();
        let reply = self.host_call(abi::HOST_INDEX_LOOKUP, &out).map_err(|e| ApiError::local(&call, e))?;
        check(&call, &reply)?;
        Ok(reply["values"].as_array().cloned().unwrap_or_default())
    }

    /// Whether the daemon or timer is asked to stop. A host that cannot
    /// answer counts as stopping, so that a daemon loop ends.
    pub fn stopped(&self) -> bool {
        self.sleep_reply(abi::HOST_IS_STOPPED, "{}".to_string())
    }

    /// Blocks for `d` or until the daemon or timer is asked to stop, and
    /// says whether it is (Kopf's stopped.wait(d)).
    pub fn sleep_until_stopped(&self, d: Duration) -> bool {
        let mut out = String::from("{\"seconds\":");
        let _ = crate::json::write_number(&mut out, d.as_secs_f64());
        out.push('}');
        self.sleep_reply(abi::HOST_SLEEP_UNTIL_STOPPED, out)
    }

    fn sleep_reply(&self, func: &str, request: String) -> bool {
        match self.host_call(func, &request) {
            Ok(v) => {
                *self.stop_reason.borrow_mut() = v["reason"].as_str().unwrap_or("").to_string();
                v["stopped"].as_bool().unwrap_or(false)
            }
            Err(_) => true,
        }
    }

    /// Why the daemon is asked to stop ("deleted", "filters-mismatch",
    /// "exiting", ...), after `stopped` or `sleep_until_stopped` said so.
    pub fn stop_reason(&self) -> String {
        self.stop_reason.borrow().clone()
    }

    /// Adopts `child` by the object being handled (Kopf's kopf.adopt).
    pub fn adopt(&self, child: &mut Value) {
        crate::hierarchy::adopt(child, self.body())
    }
    /// Adopts `child` by the object being handled, with options.
    pub fn adopt_with(&self, child: &mut Value, opts: &crate::hierarchy::Hierarchy) {
        crate::hierarchy::adopt_with(child, self.body(), opts)
    }

    /// A Kubernetes client for a resource: a group ("" for core), a
    /// version and a plural, within the module's declared permissions.
    pub fn client(&self, group: &str, version: &str, resource: &str) -> Client<'_, 'h> {
        Client { ctx: self, group: group.into(), version: version.into(), resource: resource.into(), subresource: String::new(), namespace: String::new(), manager: String::new() }
    }
}

/// A type's name without its path and generic arguments, as Kopf names
/// an exception by its class: "ApiError" for kopf::ApiError.
fn type_name_of<E: ?Sized>() -> String {
    let full = std::any::type_name::<E>();
    let bare = full.split('<').next().unwrap_or(full);
    let name = bare.rsplit("::").next().unwrap_or(bare).trim_start_matches('&');
    if name.is_empty() || name == "str" || name == "String" || name.starts_with("dyn ") {
        "Error".to_string()
    } else {
        name.to_string()
    }
}

fn check(call: &str, reply: &Value) -> Result<(), ApiError> {
    match abi::host_error(reply) {
        Some((code, reason, message, origin)) => Err(ApiError { code, reason, message, origin, call: call.to_string() }),
        None => Ok(()),
    }
}

fn string_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object().map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect()).unwrap_or_default()
}

/// Patch types of [`Client::patch`].
pub const MERGE_PATCH: &str = "merge";
pub const JSON_PATCH: &str = "json";
pub const STRATEGIC_PATCH: &str = "strategic";

/// Kubernetes API requests for one resource through the host. Methods
/// return an [`ApiError`] for refused requests (`is_not_found()`,
/// `is_forbidden()`, ...; `origin` says whether the host or the cluster
/// refused). Modifiers return changed copies.
#[derive(Clone)]
pub struct Client<'c, 'h> {
    ctx: &'c Context<'h>,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    namespace: String,
    manager: String,
}

#[derive(Default)]
struct KubeRequest<'a> {
    verb: &'a str,
    name: String,
    label_selector: &'a str,
    field_selector: &'a str,
    patch_type: &'a str,
    manager: String,
    force: bool,
}

impl<'c, 'h> Client<'c, 'h> {
    /// The client for one namespace.
    pub fn namespace(mut self, ns: &str) -> Self {
        self.namespace = ns.into();
        self
    }
    /// The client for a subresource ("status", "scale").
    pub fn subresource(mut self, s: &str) -> Self {
        self.subresource = s.into();
        self
    }
    /// The field manager of writes (apply uses the module's name by default).
    pub fn field_manager(mut self, name: &str) -> Self {
        self.manager = name.into();
        self
    }
    /// Reads an object.
    pub fn get(&self, name: &str) -> Result<Value, ApiError> {
        self.request(KubeRequest { verb: "get", name: name.into(), ..Default::default() }, None)
    }
    /// Lists the objects of the client's namespace (all when none).
    pub fn list(&self, label_selector: &str, field_selector: &str) -> Result<Vec<Value>, ApiError> {
        let list = self.request(KubeRequest { verb: "list", label_selector, field_selector, ..Default::default() }, None)?;
        Ok(list["items"].as_array().cloned().unwrap_or_default())
    }
    /// Creates an object (in the client's namespace or the object's).
    pub fn create(&self, obj: &Value) -> Result<Value, ApiError> {
        self.request(KubeRequest { verb: "create", ..Default::default() }, Some(obj))
    }
    /// Replaces an object (its resourceVersion guards conflicts).
    pub fn update(&self, obj: &Value) -> Result<Value, ApiError> {
        self.request(KubeRequest { verb: "update", name: obj.str_at("metadata.name").into(), ..Default::default() }, Some(obj))
    }
    /// Patches an object with a patch of a type ([`MERGE_PATCH`], ...).
    pub fn patch(&self, name: &str, patch_type: &str, patch: &Value) -> Result<Value, ApiError> {
        self.request(KubeRequest { verb: "patch", name: name.into(), patch_type, ..Default::default() }, Some(patch))
    }
    /// Server-side apply, forcing ownership as the module's field manager
    /// unless told otherwise.
    pub fn apply(&self, obj: &Value) -> Result<Value, ApiError> {
        let manager = if self.manager.is_empty() { self.ctx.module.to_string() } else { self.manager.clone() };
        self.request(KubeRequest { verb: "apply", name: obj.str_at("metadata.name").into(), manager, force: true, ..Default::default() }, Some(obj))
    }
    /// Deletes an object.
    pub fn delete(&self, name: &str) -> Result<(), ApiError> {
        self.request(KubeRequest { verb: "delete", name: name.into(), ..Default::default() }, None).map(|_| ())
    }

    fn request(&self, r: KubeRequest, body: Option<&Value>) -> Result<Value, ApiError> {
        let mut namespace = self.namespace.clone();
        if namespace.is_empty() && r.verb != "patch" {
            if let Some(b) = body {
                namespace = b.str_at("metadata.namespace").to_string();
            }
        }
        let manager = if r.manager.is_empty() { self.manager.clone() } else { r.manager.clone() };
        let call = self.describe(r.verb, &namespace, &r.name);
        let mut out = String::with_capacity(128);
        let mut w = ObjWriter::new(&mut out);
        w.str("verb", r.verb);
        w.str_opt("group", &self.group);
        w.str("version", &self.version);
        w.str("resource", &self.resource);
        w.str_opt("subresource", &self.subresource);
        w.str_opt("namespace", &namespace);
        w.str_opt("name", &r.name);
        w.str_opt("labelSelector", r.label_selector);
        w.str_opt("fieldSelector", r.field_selector);
        if let Some(b) = body {
            w.value("body", b).map_err(|e| ApiError::local(&call, format!("encode the body: {}", e)))?;
        }
        w.str_opt("patchType", r.patch_type);
        w.str_opt("fieldManager", &manager);
        w.bool_opt("force", r.force);
        w.end();
        let reply = self.ctx.host_call(abi::HOST_KUBE_REQUEST, &out).map_err(|e| ApiError::local(&call, e))?;
        check(&call, &reply)?;
        Ok(reply["body"].clone())
    }

    /// Names a request for errors: "get pods default/x".
    fn describe(&self, verb: &str, namespace: &str, name: &str) -> String {
        let mut res = self.resource.clone();
        if !self.group.is_empty() {
            res = format!("{}.{}", res, self.group);
        }
        if !self.subresource.is_empty() {
            res = format!("{}/{}", res, self.subresource);
        }
        let where_ = format!("{}/{}", namespace, name);
        format!("{} {} {}", verb, res, where_.trim_matches('/')).trim().to_string()
    }
}

/// Kopf's tuple key, `{(namespace, name): value}`, for an index handler's
/// result: the compact JSON text of the array of `parts`. JSON object keys
/// are strings, so a tuple key travels as the text of its array; the host
/// matches a look-up key that is not a string by its JSON text, so
/// `ctx.index_lookup(index, Value::Array(parts))` finds the values under
/// `index_key(parts)`, and `ctx.index(index)` holds them under that string.
pub fn index_key(parts: &[Value]) -> String {
    Value::Array(parts.to_vec()).to_string()
}
