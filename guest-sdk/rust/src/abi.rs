//! The ABI v1 names and documents (the Go `abi` module is the contract;
//! these mirror it field for field, in its JSON field order).

use crate::json::{raw_str, scan_object, write_number, write_string, write_value, EncodeError, Map, Value};

/// The ABI's major version.
pub const VERSION: i64 = 1;
/// The import module of the host functions.
pub const HOST_NAMESPACE: &str = "kopf:host/v1";
/// Guest exports.
pub const EXPORT_MANIFEST: &str = "kopf_manifest";
pub const EXPORT_HANDLE: &str = "kopf_handle";
/// Host functions.
pub const HOST_LOG: &str = "log";
pub const HOST_POST_EVENT: &str = "post_event";
pub const HOST_KUBE_REQUEST: &str = "kube_request";
pub const HOST_INDEX_LOOKUP: &str = "index_lookup";
pub const HOST_SLEEP_UNTIL_STOPPED: &str = "sleep_until_stopped";
pub const HOST_IS_STOPPED: &str = "is_stopped";

/// Handler kinds, named after Kopf's decorators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Create,
    Update,
    Delete,
    Resume,
    Field,
    Event,
    Timer,
    Daemon,
    Index,
    Validate,
    Mutate,
    Startup,
    Cleanup,
    Probe,
    /// Beyond Kopf: converts an object of a custom resource between the
    /// versions its CRD serves (a conversion webhook).
    Convert,
}

impl Kind {
    pub const ALL: [Kind; 15] = [
        Kind::Create, Kind::Update, Kind::Delete, Kind::Resume, Kind::Field, Kind::Event, Kind::Timer,
        Kind::Daemon, Kind::Index, Kind::Validate, Kind::Mutate, Kind::Startup, Kind::Cleanup, Kind::Probe,
        Kind::Convert,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Create => "create",
            Kind::Update => "update",
            Kind::Delete => "delete",
            Kind::Resume => "resume",
            Kind::Field => "field",
            Kind::Event => "event",
            Kind::Timer => "timer",
            Kind::Daemon => "daemon",
            Kind::Index => "index",
            Kind::Validate => "validate",
            Kind::Mutate => "mutate",
            Kind::Startup => "startup",
            Kind::Cleanup => "cleanup",
            Kind::Probe => "probe",
            Kind::Convert => "convert",
        }
    }
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.as_str() == s)
    }
    /// startup, cleanup, probe: module-level activities.
    pub fn is_activity(self) -> bool {
        matches!(self, Kind::Startup | Kind::Cleanup | Kind::Probe)
    }
    /// create, update, delete, resume, field.
    pub fn is_changing(self) -> bool {
        matches!(self, Kind::Create | Kind::Update | Kind::Delete | Kind::Resume | Kind::Field)
    }
    /// validate, mutate.
    pub fn is_webhook(self) -> bool {
        matches!(self, Kind::Validate | Kind::Mutate)
    }
}

/// The resolved resource of the object being handled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRef {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub kind: String,
    pub namespaced: bool,
}

/// A resource the cluster serves, as Kopf's kopf.Resource describes it:
/// what a callable resource selector (`select_resources`) sees.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceInfo {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub kind: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub subresources: Vec<String>,
    pub namespaced: bool,
    /// Whether `version` is the group's preferred version.
    pub preferred: bool,
    pub verbs: Vec<String>,
}

impl ResourceInfo {
    pub(crate) fn decode(v: &Value) -> ResourceInfo {
        let strs = |k: &str| v[k].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default();
        ResourceInfo {
            group: s(v, "group"),
            version: s(v, "version"),
            plural: s(v, "plural"),
            kind: s(v, "kind"),
            singular: s(v, "singular"),
            short_names: strs("shortNames"),
            categories: strs("categories"),
            subresources: strs("subresources"),
            namespaced: v["namespaced"].as_bool().unwrap_or(false),
            preferred: v["preferred"].as_bool().unwrap_or(false),
            verbs: strs("verbs"),
        }
    }
}

/// The progress of one sub-handler as the host knows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct SubhandlerState {
    pub id: String,
    pub retry: i64,
    pub started: String,
    pub runtime: f64,
    pub finished: bool,
    pub sleeping: bool,
}

/// One difference between old and new.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffItem {
    /// "add", "change" or "remove".
    pub op: String,
    pub field: Vec<String>,
    /// Null when absent.
    pub old: Value,
    pub new: Value,
}

/// The admission request of a webhook.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Admission {
    pub uid: String,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: String,
    pub subresource: String,
    pub dry_run: bool,
    pub user_info: Value,
    pub headers: Value,
    /// Warnings to return to the client: push to them.
    pub warnings: Vec<String>,
}

/// What a convert handler converts to: the ConversionReview's uid and the
/// "group/version" the converted object must have.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conversion {
    pub uid: String,
    pub desired_api_version: String,
}

/// The watch event of an event handler. `kind` is "" for objects of the
/// initial listing, else ADDED, MODIFIED or DELETED.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub kind: String,
    pub object: Value,
}

/// A value computed on first use and then kept (std's OnceCell is newer
/// than the Rust this SDK supports). Never Sync: the cell is written once,
/// through a shared reference, only while it is empty.
pub(crate) struct Once<T> {
    v: std::cell::UnsafeCell<Option<T>>,
}

impl<T> Default for Once<T> {
    fn default() -> Self {
        Once { v: std::cell::UnsafeCell::new(None) }
    }
}

impl<T> Once<T> {
    pub fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
        // SAFETY: the value is only set while the cell is empty and never
        // replaced or dropped through a shared reference, so a reference
        // handed out stays valid as long as &self; the cell is not Sync.
        unsafe {
            if (*self.v.get()).is_none() {
                let x = f();
                if (*self.v.get()).is_none() {
                    *self.v.get() = Some(x);
                }
            }
            (*self.v.get()).as_ref().unwrap()
        }
    }
    /// Replaces the value, and returns the one it had.
    pub fn replace(&mut self, v: Option<T>) -> Option<T> {
        std::mem::replace(self.v.get_mut(), v)
    }
    pub fn get_mut_or_init(&mut self, f: impl FnOnce() -> T) -> &mut T {
        let v = self.v.get_mut();
        if v.is_none() {
            *v = Some(f());
        }
        v.as_mut().unwrap()
    }
}

/// The request of the handle export. The small members are decoded at
/// once; the others (the objects, the diff, the admission request, ...)
/// are only found, and decoded from the input's bytes when the handler
/// first asks for them, so that a handler pays for what it reads.
#[derive(Default)]
pub(crate) struct Request<'a> {
    input: &'a [u8],
    pub call: String,
    pub handler: String,
    pub kind: String,
    pub reason: String,
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub retry: i64,
    pub started: String,
    pub deadline: String,
    pub runtime: f64,
    pub activity: String,
    /// The host's lowest log level ("" for every level).
    pub log_level: String,
    raw: [Option<std::ops::Range<usize>>; LAZY],
    resource: Once<Option<ResourceRef>>,
    body: Once<Value>,
    old: Once<Value>,
    new: Once<Value>,
    diff: Once<Vec<DiffItem>>,
    param: Once<Value>,
    indices: Once<Map>,
    event: Once<Option<Event>>,
    admission: Once<Option<Admission>>,
    conversion: Once<Option<Conversion>>,
    subhandlers: Once<Vec<SubhandlerState>>,
}

// The members decoded on use: their places in Request::raw.
const RESOURCE: usize = 0;
const BODY: usize = 1;
const OLD: usize = 2;
const NEW: usize = 3;
const DIFF: usize = 4;
const PARAM: usize = 5;
const MEMO: usize = 6;
const INDICES: usize = 7;
const EVENT: usize = 8;
const ADMISSION: usize = 9;
const CONVERSION: usize = 10;
const SUBHANDLERS: usize = 11;
const LAZY: usize = 12;

fn s(v: &Value, k: &str) -> String {
    v[k].as_str().unwrap_or("").to_string()
}

impl<'a> Request<'a> {
    pub fn decode(input: &'a [u8]) -> Result<Request<'a>, String> {
        let mut r = Request { input, ..Default::default() };
        let is_object = scan_object(input, |k, at| {
            let raw = &input[at.clone()];
            let lazy = match k {
                "call" => return r.call = raw_str(raw),
                "handler" => return r.handler = raw_str(raw),
                "kind" => return r.kind = raw_str(raw),
                "reason" => return r.reason = raw_str(raw),
                "name" => return r.name = raw_str(raw),
                "namespace" => return r.namespace = raw_str(raw),
                "uid" => return r.uid = raw_str(raw),
                "started" => return r.started = raw_str(raw),
                "deadline" => return r.deadline = raw_str(raw),
                "activity" => return r.activity = raw_str(raw),
                "logLevel" => return r.log_level = raw_str(raw),
                "retry" => return r.retry = Value::parse_bytes(raw).ok().and_then(|v| v.as_i64()).unwrap_or(0),
                "runtime" => return r.runtime = Value::parse_bytes(raw).ok().and_then(|v| v.as_f64()).unwrap_or(0.0),
                "resource" => RESOURCE,
                "body" => BODY,
                "old" => OLD,
                "new" => NEW,
                "diff" => DIFF,
                "param" => PARAM,
                "memo" => MEMO,
                "indices" => INDICES,
                "event" => EVENT,
                "admission" => ADMISSION,
                "conversion" => CONVERSION,
                "subhandlers" => SUBHANDLERS,
                _ => return,
            };
            r.raw[lazy] = Some(at);
        })
        .map_err(|e| format!("kopf: the request is not JSON: {}", e))?;
        if !is_object {
            return Err("kopf: the request is not a JSON object".to_string());
        }
        Ok(r)
    }

    /// The member's value (null when absent); the input was checked whole.
    fn value(&self, member: usize) -> Value {
        match &self.raw[member] {
            Some(at) => Value::parse_bytes(&self.input[at.clone()]).unwrap_or(Value::Null),
            None => Value::Null,
        }
    }

    pub fn resource(&self) -> Option<&ResourceRef> {
        self.resource
            .get_or_init(|| match self.value(RESOURCE) {
                r @ Value::Object(_) => Some(ResourceRef {
                    group: s(&r, "group"),
                    version: s(&r, "version"),
                    plural: s(&r, "plural"),
                    kind: s(&r, "kind"),
                    namespaced: r["namespaced"].as_bool().unwrap_or(false),
                }),
                _ => None,
            })
            .as_ref()
    }
    pub fn body(&self) -> &Value {
        self.body.get_or_init(|| self.value(BODY))
    }
    pub fn old(&self) -> &Value {
        self.old.get_or_init(|| self.value(OLD))
    }
    pub fn new(&self) -> &Value {
        self.new.get_or_init(|| self.value(NEW))
    }
    pub fn param(&self) -> &Value {
        self.param.get_or_init(|| self.value(PARAM))
    }
    /// Replaces the param (a sub-handler's own), and returns the one before.
    pub fn swap_param(&mut self, v: Value) -> Value {
        self.param();
        self.param.replace(Some(v)).unwrap_or(Value::Null)
    }
    /// The progress of the sub-handlers the host sent.
    pub fn subhandlers(&self) -> &[SubhandlerState] {
        self.subhandlers.get_or_init(|| match self.value(SUBHANDLERS) {
            Value::Array(items) => items
                .iter()
                .map(|v| SubhandlerState {
                    id: s(v, "id"),
                    retry: v["retry"].as_i64().unwrap_or(0),
                    started: s(v, "started"),
                    runtime: v["runtime"].as_f64().unwrap_or(0.0),
                    finished: v["finished"].as_bool().unwrap_or(false),
                    sleeping: v["sleeping"].as_bool().unwrap_or(false),
                })
                .collect(),
            _ => Vec::new(),
        })
    }

    /// The memo as the host sent it (decoded anew on each call).
    pub fn memo(&self) -> Value {
        self.value(MEMO)
    }
    pub fn indices(&self) -> &Map {
        self.indices.get_or_init(|| match self.value(INDICES) {
            Value::Object(m) => m,
            _ => Map::new(),
        })
    }
    pub fn diff(&self) -> &[DiffItem] {
        self.diff.get_or_init(|| match self.value(DIFF) {
            Value::Array(items) => items
                .into_iter()
                .map(|mut d| DiffItem {
                    op: s(&d, "op"),
                    field: d["field"].as_array().map(|a| a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect()).unwrap_or_default(),
                    old: d.as_object_mut().and_then(|m| m.remove("old")).unwrap_or(Value::Null),
                    new: d.as_object_mut().and_then(|m| m.remove("new")).unwrap_or(Value::Null),
                })
                .collect(),
            _ => Vec::new(),
        })
    }
    pub fn event(&self) -> Option<&Event> {
        self.event
            .get_or_init(|| match self.value(EVENT) {
                Value::Object(mut e) => Some(Event {
                    kind: e.get("type").and_then(Value::as_str).unwrap_or("").to_string(),
                    object: e.remove("object").unwrap_or(Value::Null),
                }),
                _ => None,
            })
            .as_ref()
    }
    fn make_admission(&self) -> Option<Admission> {
        match self.value(ADMISSION) {
            mut a @ Value::Object(_) => {
                let m = a.as_object_mut().unwrap();
                let user_info = m.remove("userInfo").unwrap_or(Value::Null);
                let headers = m.remove("headers").unwrap_or(Value::Null);
                Some(Admission {
                    uid: s(&a, "uid"),
                    operation: s(&a, "operation"),
                    subresource: s(&a, "subresource"),
                    dry_run: a["dryRun"].as_bool().unwrap_or(false),
                    user_info,
                    headers,
                    warnings: Vec::new(),
                })
            }
            _ => None,
        }
    }
    pub fn conversion(&self) -> Option<&Conversion> {
        self.conversion
            .get_or_init(|| match self.value(CONVERSION) {
                c @ Value::Object(_) => Some(Conversion { uid: s(&c, "uid"), desired_api_version: s(&c, "desiredAPIVersion") }),
                _ => None,
            })
            .as_ref()
    }
    pub fn admission(&self) -> Option<&Admission> {
        self.admission.get_or_init(|| self.make_admission()).as_ref()
    }
    pub fn admission_mut(&mut self) -> Option<&mut Admission> {
        self.admission(); // decoded, if it was not yet
        self.admission.get_mut_or_init(|| None).as_mut()
    }
}

/// A JSON object writer that keeps the order fields are written in (the
/// Go structs' order) and leaves out empty optional ones.
pub(crate) struct ObjWriter<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> ObjWriter<'a> {
    pub fn new(out: &'a mut String) -> ObjWriter<'a> {
        out.push('{');
        ObjWriter { out, first: true }
    }
    pub fn key(&mut self, k: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        write_string(self.out, k);
        self.out.push(':');
        self.out
    }
    pub fn str(&mut self, k: &str, v: &str) {
        write_string(self.key(k), v);
    }
    pub fn str_opt(&mut self, k: &str, v: &str) {
        if !v.is_empty() {
            self.str(k, v);
        }
    }
    pub fn num(&mut self, k: &str, v: f64) -> Result<(), EncodeError> {
        write_number(self.key(k), v)
    }
    pub fn num_opt(&mut self, k: &str, v: f64) -> Result<(), EncodeError> {
        if v != 0.0 {
            self.num(k, v)?;
        }
        Ok(())
    }
    pub fn bool(&mut self, k: &str, v: bool) {
        self.key(k).push_str(if v { "true" } else { "false" });
    }
    pub fn bool_opt(&mut self, k: &str, v: bool) {
        if v {
            self.bool(k, v);
        }
    }
    pub fn value(&mut self, k: &str, v: &Value) -> Result<(), EncodeError> {
        write_value(self.key(k), v)
    }
    /// A raw JSON member, left out when null (a Go RawMessage with omitempty
    /// that the SDK leaves nil).
    pub fn value_opt(&mut self, k: &str, v: &Value) -> Result<(), EncodeError> {
        if !v.is_null() {
            self.value(k, v)?;
        }
        Ok(())
    }
    pub fn strs_opt(&mut self, k: &str, v: &[String]) {
        if !v.is_empty() {
            self.strs(k, v);
        }
    }
    pub fn strs(&mut self, k: &str, v: &[String]) {
        let out = self.key(k);
        out.push('[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_string(out, x);
        }
        out.push(']');
    }
    pub fn end(self) {
        self.out.push('}');
    }
}

/// A host error in a reply.
pub(crate) fn host_error(v: &Value) -> Option<(u16, String, String, String)> {
    let e = v.get("error")?;
    if e.is_null() {
        return None;
    }
    Some((e["code"].as_f64().unwrap_or(0.0) as u16, s(e, "reason"), s(e, "message"), s(e, "origin")))
}

/// The JSON of a host error reply (as the Go host writes it).
pub fn write_host_error(out: &mut String, code: u16, reason: &str, message: &str, origin: &str) {
    let mut w = ObjWriter::new(out);
    let _ = w.num("code", code as f64);
    w.str_opt("reason", reason);
    w.str("message", message);
    w.str_opt("origin", origin);
    w.end();
}
