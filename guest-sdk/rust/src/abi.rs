//! The ABI v1 names and documents (the Go `abi` module is the contract;
//! these mirror it field for field, in its JSON field order).

use crate::json::{write_number, write_string, write_value, EncodeError, Map, Value};

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
}

impl Kind {
    pub const ALL: [Kind; 14] = [
        Kind::Create, Kind::Update, Kind::Delete, Kind::Resume, Kind::Field, Kind::Event, Kind::Timer,
        Kind::Daemon, Kind::Index, Kind::Validate, Kind::Mutate, Kind::Startup, Kind::Cleanup, Kind::Probe,
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

/// The watch event of an event handler. `kind` is "" for objects of the
/// initial listing, else ADDED, MODIFIED or DELETED.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub kind: String,
    pub object: Value,
}

/// The request of the handle export, decoded.
#[derive(Clone, Debug, Default)]
pub(crate) struct Request {
    pub call: String,
    pub handler: String,
    pub kind: String,
    pub reason: String,
    pub resource: Option<ResourceRef>,
    pub body: Value,
    pub name: String,
    pub namespace: String,
    pub uid: String,
    pub old: Value,
    pub new: Value,
    pub diff: Vec<DiffItem>,
    pub retry: i64,
    pub started: String,
    pub runtime: f64,
    pub param: Value,
    pub memo: Value,
    pub indices: Map,
    pub event: Option<Event>,
    pub admission: Option<Admission>,
    pub activity: String,
}

fn s(v: &Value, k: &str) -> String {
    v[k].as_str().unwrap_or("").to_string()
}

impl Request {
    pub fn decode(input: &[u8]) -> Result<Request, String> {
        let mut v = Value::parse_bytes(input).map_err(|e| format!("kopf: the request is not JSON: {}", e))?;
        if !matches!(v, Value::Object(_)) {
            return Err("kopf: the request is not a JSON object".to_string());
        }
        let m = v.as_object_mut().unwrap();
        let mut take = |k: &str| m.remove(k).unwrap_or(Value::Null);
        let body = take("body");
        let old = take("old");
        let new = take("new");
        let param = take("param");
        let memo = take("memo");
        let indices = match take("indices") {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let event = match take("event") {
            Value::Object(mut e) => Some(Event {
                kind: e.get("type").and_then(Value::as_str).unwrap_or("").to_string(),
                object: e.remove("object").unwrap_or(Value::Null),
            }),
            _ => None,
        };
        let admission = match take("admission") {
            a @ Value::Object(_) => Some(Admission {
                uid: s(&a, "uid"),
                operation: s(&a, "operation"),
                subresource: s(&a, "subresource"),
                dry_run: a["dryRun"].as_bool().unwrap_or(false),
                user_info: a["userInfo"].clone(),
                headers: a["headers"].clone(),
                warnings: Vec::new(),
            }),
            _ => None,
        };
        let diff = match take("diff") {
            Value::Array(items) => items
                .into_iter()
                .map(|d| DiffItem {
                    op: s(&d, "op"),
                    field: d["field"].as_array().map(|a| a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect()).unwrap_or_default(),
                    old: d["old"].clone(),
                    new: d["new"].clone(),
                })
                .collect(),
            _ => Vec::new(),
        };
        let resource = match &v["resource"] {
            r @ Value::Object(_) => Some(ResourceRef {
                group: s(r, "group"),
                version: s(r, "version"),
                plural: s(r, "plural"),
                kind: s(r, "kind"),
                namespaced: r["namespaced"].as_bool().unwrap_or(false),
            }),
            _ => None,
        };
        Ok(Request {
            call: s(&v, "call"),
            handler: s(&v, "handler"),
            kind: s(&v, "kind"),
            reason: s(&v, "reason"),
            resource,
            body,
            name: s(&v, "name"),
            namespace: s(&v, "namespace"),
            uid: s(&v, "uid"),
            old,
            new,
            diff,
            retry: v["retry"].as_i64().unwrap_or(0),
            started: s(&v, "started"),
            runtime: v["runtime"].as_f64().unwrap_or(0.0),
            param,
            memo,
            indices,
            event,
            admission,
            activity: s(&v, "activity"),
        })
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
