//! Registration: the module, its handlers with Kopf's options, its
//! permissions, and the manifest they make.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::abi::{Kind, ObjWriter, ResourceInfo, ResourceRef, VERSION};
use crate::context::Context;
use crate::json::{EncodeError, Value};

/// A handler's result: a value stored under `status.<handler id>` (an
/// object is merged into it, anything else replaces it, null writes
/// nothing), or the [`Error`](crate::Error) that decides the outcome.
pub type Result<T = Value> = std::result::Result<T, crate::Error>;

pub(crate) type HandlerFn = Box<dyn Fn(&mut Context) -> Result>;
pub(crate) type WhenFn = Box<dyn Fn(&Context) -> bool>;
pub(crate) type DelayFn = Box<dyn Fn(&Context) -> Duration>;
/// A callable resource selector's answer to the host's "select" call: the
/// candidates (the request's body) in, one boolean each out.
pub(crate) type SelectFn = Box<dyn Fn(&Value) -> Value>;

/// As the plural of a resource handler, selects every resource of the
/// group and version given (of the whole cluster when both are ""),
/// Kopf's kopf.EVERYTHING: only preferred versions unless the version is
/// named, never Events; the host follows CRDs that appear and go.
pub const EVERYTHING: &str = "kopf.EVERYTHING";

/// A filter on a label, an annotation or a field's value: a value that
/// must be equal, [`PRESENT`] or [`ABSENT`] (Kopf's kopf.PRESENT/ABSENT).
#[derive(Clone, Debug, PartialEq)]
pub enum Filter {
    Is(Value),
    Present,
    Absent,
}

/// Matches any value (an empty string included).
pub const PRESENT: Filter = Filter::Present;
/// Matches a missing key or field.
pub const ABSENT: Filter = Filter::Absent;

impl<T: Into<Value>> From<T> for Filter {
    fn from(v: T) -> Filter {
        Filter::Is(v.into())
    }
}

/// What an arbitrary error of a handler means (Kopf's errors=).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorsMode {
    Ignored,
    Temporary,
    Permanent,
}

impl ErrorsMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ErrorsMode::Ignored => "ignored",
            ErrorsMode::Temporary => "temporary",
            ErrorsMode::Permanent => "permanent",
        }
    }
}

/// A filter as the manifest declares it: the author's [`Filter`], or a
/// callable one that the module evaluates when the host asks ("when").
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Declared {
    Is(Filter),
    Callback,
}

/// A resource selector beyond one named resource.
#[derive(Clone, Default, PartialEq)]
pub(crate) struct Many {
    pub category: String,
    pub callback: bool,
}

#[derive(Clone, Default, PartialEq)]
pub(crate) struct Spec {
    pub id: String,
    pub resource: Option<(String, String, String)>,
    pub many: Many,
    pub labels: BTreeMap<String, Declared>,
    pub annotations: BTreeMap<String, Declared>,
    pub field: String,
    pub value: Option<Declared>,
    pub old: Option<Declared>,
    pub new: Option<Declared>,
    pub when: bool,
    pub errors: Option<ErrorsMode>,
    pub timeout: f64,
    pub retries: i64,
    pub backoff: f64,
    pub param: Value,
    pub optional: bool,
    pub deleted: bool,
    pub interval: f64,
    pub initial_delay: f64,
    pub initial_delay_callback: bool,
    pub idle: f64,
    pub sharp: bool,
    pub cancellation_backoff: f64,
    pub cancellation_timeout: f64,
    pub cancellation_polling: f64,
    pub operations: Vec<String>,
    pub subresource: String,
    pub persistent: bool,
    pub side_effects: bool,
    pub ignore_failures: bool,
    pub versions: Vec<String>,
}

pub(crate) struct Handler {
    pub spec: Spec,
    pub kind: Kind,
    pub func: HandlerFn,
    pub when: Option<WhenFn>,
    /// Callable label, annotation and value filters, in declaration order;
    /// they run before `when`.
    pub callbacks: Vec<WhenFn>,
    pub selects: Option<SelectFn>,
    pub initial_delay: Option<DelayFn>,
    /// The type of the author's function (each fn item and closure has
    /// its own) and its name: one id may name one function only.
    pub fn_type: std::any::TypeId,
    pub fn_name: &'static str,
}

/// A module: its name, its handlers in registration order, and what it
/// may do. The `export!` macro builds one with the crate's name and
/// version and passes it to the author's registration function.
pub struct Module {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) handlers: Vec<Handler>,
    pub(crate) permissions: Vec<(String, String, Vec<String>)>,
    pub(crate) hosts: Vec<String>,
    pub(crate) problems: Vec<String>,
}

impl Module {
    /// A module named `name` at `version`.
    pub fn new(name: &str, version: &str) -> Module {
        Module { name: name.into(), version: version.into(), handlers: Vec::new(), permissions: Vec::new(), hosts: Vec::new(), problems: Vec::new() }
    }

    /// Declares the module: its name and version (by default the crate's).
    /// Every SDK spells it `module` (Go's `kopf.Module`, AssemblyScript's
    /// and Python's `kopf.module`).
    pub fn module(&mut self, name: &str, version: &str) -> &mut Module {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// The former spelling of [`Module::module`].
    #[deprecated(note = "use m.module(name, version), the spelling every SDK uses")]
    pub fn name(&mut self, name: &str, version: &str) -> &mut Module {
        self.module(name, version)
    }

    /// Declares that handlers make Kubernetes requests with `verbs` ("get",
    /// "list", "watch", "create", "update", "patch", "delete", "*") on a
    /// resource (a plural, "pods/status", or "*") of a group ("" for core).
    /// The host refuses undeclared requests with a 403. Apply is a "patch".
    pub fn permit(&mut self, group: &str, resource: &str, verbs: &[&str]) -> &mut Module {
        self.permissions.push((group.into(), resource.into(), verbs.iter().map(|v| v.to_string()).collect()));
        self
    }

    /// Declares outbound HTTP hosts (globs) the module may reach.
    pub fn allow_hosts(&mut self, hosts: &[&str]) -> &mut Module {
        self.hosts.extend(hosts.iter().map(|h| h.to_string()));
        self
    }

    fn add<F>(&mut self, kind: Kind, resource: Option<(&str, &str, &str)>, id: &str, f: F) -> Registration<'_>
    where
        F: Fn(&mut Context) -> Result + 'static,
    {
        let spec = Spec { id: id.into(), resource: resource.map(|(g, v, p)| (g.into(), v.into(), p.into())), ..Spec::default() };
        let (fn_type, fn_name) = (std::any::TypeId::of::<F>(), std::any::type_name::<F>());
        self.handlers.push(Handler { spec, kind, func: Box::new(f), when: None, callbacks: Vec::new(), selects: None, initial_delay: None, fn_type, fn_name });
        let index = self.handlers.len() - 1;
        Registration { module: self, index }
    }
}

macro_rules! resource_kind {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        ///
        /// The resource is a group ("" for core), a version ("" for the
        /// preferred one) and a plural (or kind, singular, short name); `id`
        /// is the handler's id (Kopf uses the function's name).
        pub fn $name<F>(&mut self, group: &str, version: &str, plural: &str, id: &str, f: F) -> Registration<'_>
        where
            F: Fn(&mut Context) -> Result + 'static,
        {
            self.add($kind, Some((group, version, plural)), id, f)
        }
    };
}

macro_rules! activity_kind {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        pub fn $name<F>(&mut self, id: &str, f: F) -> Registration<'_>
        where
            F: Fn(&mut Context) -> Result + 'static,
        {
            self.add($kind, None, id, f)
        }
    };
}

impl Module {
    resource_kind!(/// @kopf.on.create
        on_create, Kind::Create);
    resource_kind!(/// @kopf.on.update: essential changes.
        on_update, Kind::Update);
    resource_kind!(/// @kopf.on.delete: the host keeps a finalizer unless `optional()`.
        on_delete, Kind::Delete);
    resource_kind!(/// @kopf.on.resume: objects found when the operator starts.
        on_resume, Kind::Resume);
    resource_kind!(/// @kopf.on.field: changes of one field; `field()` is mandatory and the id becomes "id/field".
        on_field, Kind::Field);
    resource_kind!(/// @kopf.on.event: every watch event; errors are ignored.
        on_event, Kind::Event);
    resource_kind!(/// @kopf.timer: runs periodically per object (`interval`, `idle`, `sharp`, `initial_delay`).
        timer, Kind::Timer);
    resource_kind!(/// @kopf.daemon: a long-running handler per object; it should return when `ctx.stopped()` says so.
        daemon, Kind::Daemon);
    resource_kind!(/// @kopf.index: the result is indexed under the handler's id (an object adds each key).
        index, Kind::Index);
    resource_kind!(/// @kopf.on.validate: an error denies the admission request.
        on_validate, Kind::Validate);
    resource_kind!(/// @kopf.on.mutate: the patch is the mutation.
        on_mutate, Kind::Mutate);
    resource_kind!(/// Beyond Kopf: a conversion webhook. The handler gets an object in
        /// one of the versions the CRD serves (`ctx.body()`) and returns it
        /// converted to `ctx.conversion().desired_api_version`; the host
        /// sets the apiVersion and keeps the metadata. An error fails the
        /// conversion with its message. `versions()` declares the versions
        /// it converts between. `version` is any version the CRD serves.
        on_convert, Kind::Convert);
    activity_kind!(/// @kopf.on.startup: runs before the operator starts watching.
        on_startup, Kind::Startup);
    activity_kind!(/// @kopf.on.cleanup: runs when the operator exits.
        on_cleanup, Kind::Cleanup);
    activity_kind!(/// @kopf.on.probe: a liveness probe, reported under its id.
        on_probe, Kind::Probe);
}

const RESOURCE_KINDS: &[Kind] = &[Kind::Create, Kind::Update, Kind::Delete, Kind::Resume, Kind::Field, Kind::Event, Kind::Timer, Kind::Daemon, Kind::Index, Kind::Validate, Kind::Mutate];
const ERROR_KINDS: &[Kind] = &[Kind::Create, Kind::Update, Kind::Delete, Kind::Resume, Kind::Field, Kind::Timer, Kind::Daemon, Kind::Index, Kind::Startup, Kind::Cleanup, Kind::Probe];
const OLD_NEW_KINDS: &[Kind] = &[Kind::Update, Kind::Field];
const WEBHOOK_KINDS: &[Kind] = &[Kind::Validate, Kind::Mutate];
/// The kinds that may serve several resources (webhooks must name theirs).
const SELECTOR_KINDS: &[Kind] = &[Kind::Create, Kind::Update, Kind::Delete, Kind::Resume, Kind::Field, Kind::Event, Kind::Timer, Kind::Daemon, Kind::Index];

/// Options of one handler, as Kopf's decorator arguments. An option that
/// does not fit the handler's kind (say `interval` on a create handler) is
/// a registration mistake: the manifest export then fails with the list of
/// problems, and the host refuses the module.
pub struct Registration<'a> {
    module: &'a mut Module,
    index: usize,
}

impl<'a> Registration<'a> {
    fn with(self, name: &str, kinds: Option<&[Kind]>, apply: impl FnOnce(&mut Spec) -> std::result::Result<(), String>) -> Self {
        let h = &mut self.module.handlers[self.index];
        if let Some(kinds) = kinds {
            if !kinds.contains(&h.kind) {
                let p = format!("option {} does not apply to {} handlers (handler {})", name, h.kind.as_str(), h.spec.id);
                self.module.problems.push(p);
                return self;
            }
        }
        if let Err(e) = apply(&mut h.spec) {
            let p = format!("option {} of handler {}: {}", name, h.spec.id, e);
            self.module.problems.push(p);
        }
        self
    }

    /// Passed back to the handler as `ctx.param()`.
    pub fn param(self, v: impl Into<Value>) -> Self {
        let v = v.into();
        self.with("param", None, |s| {
            s.param = v;
            Ok(())
        })
    }
    /// What an arbitrary error means (temporary by default).
    pub fn errors(self, mode: ErrorsMode) -> Self {
        self.with("errors", Some(ERROR_KINDS), |s| {
            s.errors = Some(mode);
            Ok(())
        })
    }
    /// Limits the attempts.
    pub fn retries(self, n: u32) -> Self {
        self.with("retries", Some(ERROR_KINDS), |s| {
            s.retries = n as i64;
            Ok(())
        })
    }
    /// Limits the time since the first attempt.
    pub fn timeout(self, d: Duration) -> Self {
        self.with("timeout", Some(ERROR_KINDS), |s| {
            s.timeout = d.as_secs_f64();
            Ok(())
        })
    }
    /// The delay before retrying after an arbitrary error.
    pub fn backoff(self, d: Duration) -> Self {
        self.with("backoff", Some(ERROR_KINDS), |s| {
            s.backoff = d.as_secs_f64();
            Ok(())
        })
    }
    /// A delete handler that runs without a finalizer.
    pub fn optional(self) -> Self {
        self.with("optional", Some(&[Kind::Delete]), |s| {
            s.optional = true;
            Ok(())
        })
    }
    /// A resume handler that runs on objects marked for deletion too.
    pub fn deleted(self) -> Self {
        self.with("deleted", Some(&[Kind::Resume]), |s| {
            s.deleted = true;
            Ok(())
        })
    }
    /// The period of a timer.
    pub fn interval(self, d: Duration) -> Self {
        self.with("interval", Some(&[Kind::Timer]), |s| {
            s.interval = d.as_secs_f64();
            Ok(())
        })
    }
    /// Runs a timer only after the object has not changed for `d`.
    pub fn idle(self, d: Duration) -> Self {
        self.with("idle", Some(&[Kind::Timer]), |s| {
            s.idle = d.as_secs_f64();
            Ok(())
        })
    }
    /// Keeps a timer on its interval's grid.
    pub fn sharp(self) -> Self {
        self.with("sharp", Some(&[Kind::Timer]), |s| {
            s.sharp = true;
            Ok(())
        })
    }
    /// Computes the delay of a timer's or daemon's first run from the
    /// object (Kopf's callable initial_delay): the host calls `f` once per
    /// object before the first run. `f` must only look.
    pub fn initial_delay_fn<F>(self, f: F) -> Self
    where
        F: Fn(&Context) -> Duration + 'static,
    {
        let idx = self.index;
        let r = self.with("initial_delay_fn", Some(&[Kind::Timer, Kind::Daemon]), |s| {
            s.initial_delay_callback = true;
            Ok(())
        });
        if r.module.handlers[idx].spec.initial_delay_callback {
            r.module.handlers[idx].initial_delay = Some(Box::new(f));
        }
        r
    }
    /// Delays the first run of a timer or daemon.
    pub fn initial_delay(self, d: Duration) -> Self {
        self.with("initial_delay", Some(&[Kind::Timer, Kind::Daemon]), |s| {
            s.initial_delay = d.as_secs_f64();
            Ok(())
        })
    }
    /// How long a stopped daemon may finish gracefully.
    pub fn cancellation_backoff(self, d: Duration) -> Self {
        self.with("cancellation_backoff", Some(&[Kind::Daemon]), |s| {
            s.cancellation_backoff = d.as_secs_f64();
            Ok(())
        })
    }
    /// How long to wait for a cancelled daemon before abandoning it.
    pub fn cancellation_timeout(self, d: Duration) -> Self {
        self.with("cancellation_timeout", Some(&[Kind::Daemon]), |s| {
            s.cancellation_timeout = d.as_secs_f64();
            Ok(())
        })
    }
    /// How often a daemon that will not exit is checked.
    pub fn cancellation_polling(self, d: Duration) -> Self {
        self.with("cancellation_polling", Some(&[Kind::Daemon]), |s| {
            s.cancellation_polling = d.as_secs_f64();
            Ok(())
        })
    }
    /// Limits a webhook to CREATE, UPDATE, DELETE or CONNECT.
    pub fn operations(self, ops: &[&str]) -> Self {
        let ops: Vec<String> = ops.iter().map(|o| o.to_string()).collect();
        self.with("operations", Some(WEBHOOK_KINDS), |s| {
            if ops.is_empty() {
                return Err("no operations (omit the option for all)".into());
            }
            s.operations = ops;
            Ok(())
        })
    }
    /// Limits a webhook to a subresource ("*" for all).
    pub fn subresource(self, sub: &str) -> Self {
        let sub = sub.to_string();
        self.with("subresource", Some(WEBHOOK_KINDS), |s| {
            s.subresource = sub;
            Ok(())
        })
    }
    /// Keeps the webhook configured when the operator exits.
    pub fn persistent(self) -> Self {
        self.with("persistent", Some(WEBHOOK_KINDS), |s| {
            s.persistent = true;
            Ok(())
        })
    }
    /// Declares that the webhook has side effects.
    pub fn side_effects(self) -> Self {
        self.with("side_effects", Some(WEBHOOK_KINDS), |s| {
            s.side_effects = true;
            Ok(())
        })
    }
    /// Makes the API server admit when the webhook fails.
    pub fn ignore_failures(self) -> Self {
        self.with("ignore_failures", Some(WEBHOOK_KINDS), |s| {
            s.ignore_failures = true;
            Ok(())
        })
    }
    /// The versions of the CRD a convert handler converts between (bare
    /// names: "v1alpha1", "v1"); the host fails conversions from or to
    /// any other without calling the handler. By default, every version.
    pub fn versions(self, versions: &[&str]) -> Self {
        let versions: Vec<String> = versions.iter().map(|v| v.to_string()).collect();
        self.with("versions", Some(&[Kind::Convert]), |s| {
            if versions.is_empty() {
                return Err("no versions (omit the option for all)".into());
            }
            s.versions = versions;
            Ok(())
        })
    }
    /// Filters on a label: a string value, [`PRESENT`] or [`ABSENT`].
    pub fn label(self, key: &str, f: impl Into<Filter>) -> Self {
        let (key, f) = (key.to_string(), f.into());
        self.with("labels", Some(RESOURCE_KINDS), |s| {
            check_meta(&key, &f)?;
            s.labels.insert(key, Declared::Is(f));
            Ok(())
        })
    }
    /// Filters on an annotation as [`Registration::label`] does.
    pub fn annotation(self, key: &str, f: impl Into<Filter>) -> Self {
        let (key, f) = (key.to_string(), f.into());
        self.with("annotations", Some(RESOURCE_KINDS), |s| {
            check_meta(&key, &f)?;
            s.annotations.insert(key, Declared::Is(f));
            Ok(())
        })
    }
    /// Watches one field (a dotted path); mandatory for field handlers,
    /// whose id gets "/<field>" appended.
    pub fn field(self, path: &str) -> Self {
        let path = path.to_string();
        self.with("field", Some(RESOURCE_KINDS), |s| {
            s.field = path;
            Ok(())
        })
    }
    /// Filters on the field's value (old or new for changing handlers).
    pub fn value(self, f: impl Into<Filter>) -> Self {
        let f = f.into();
        self.with("value", Some(RESOURCE_KINDS), |s| {
            s.value = Some(Declared::Is(check_value(f)?));
            Ok(())
        })
    }
    /// Filters on the field's old value (update and field handlers).
    pub fn old(self, f: impl Into<Filter>) -> Self {
        let f = f.into();
        self.with("old", Some(OLD_NEW_KINDS), |s| {
            s.old = Some(Declared::Is(check_value(f)?));
            Ok(())
        })
    }
    /// Filters on the field's new value (update and field handlers).
    pub fn new(self, f: impl Into<Filter>) -> Self {
        let f = f.into();
        self.with("new", Some(OLD_NEW_KINDS), |s| {
            s.new = Some(Declared::Is(check_value(f)?));
            Ok(())
        })
    }
    /// A callable label filter (Kopf's `labels={key: fn}`): `f` gets the
    /// label's value (null when absent) and the context, and says whether
    /// it matches. The host asks the module after every declared filter
    /// matched; callables run in declaration order, before `when`. `f` must
    /// only look.
    pub fn label_fn<F>(self, key: &str, f: F) -> Self
    where
        F: Fn(&Value, &Context) -> bool + 'static,
    {
        let key = key.to_string();
        let k = key.clone();
        self.callback("labels", move |s| {
            s.labels.insert(k, Declared::Callback);
            Ok(())
        }, move |ctx: &Context| {
            f(&ctx.meta()["labels"][key.as_str()], ctx)
        })
    }
    /// A callable annotation filter, as [`Registration::label_fn`].
    pub fn annotation_fn<F>(self, key: &str, f: F) -> Self
    where
        F: Fn(&Value, &Context) -> bool + 'static,
    {
        let key = key.to_string();
        let k = key.clone();
        self.callback("annotations", move |s| {
            s.annotations.insert(k, Declared::Callback);
            Ok(())
        }, move |ctx: &Context| {
            f(&ctx.meta()["annotations"][key.as_str()], ctx)
        })
    }
    /// A callable filter on the field's value (Kopf's `value=fn`): for
    /// changing handlers it matches when the new or the old value does,
    /// else `f` gets the body's value (null when absent).
    pub fn value_fn<F>(self, f: F) -> Self
    where
        F: Fn(&Value, &Context) -> bool + 'static,
    {
        self.callback("value", |s| set_callable(&mut s.value), move |ctx: &Context| {
            let field = ctx.filter_field();
            if ctx.is_changing_call() {
                f(field_of(ctx.new(), &field), ctx) || f(field_of(ctx.old(), &field), ctx)
            } else {
                f(field_of(ctx.body(), &field), ctx)
            }
        })
    }
    /// A callable filter on the field's old value (update and field handlers).
    pub fn old_fn<F>(self, f: F) -> Self
    where
        F: Fn(&Value, &Context) -> bool + 'static,
    {
        self.callback_of("old", OLD_NEW_KINDS, |s| set_callable(&mut s.old), move |ctx: &Context| f(field_of(ctx.old(), &ctx.filter_field()), ctx))
    }
    /// A callable filter on the field's new value (update and field handlers).
    pub fn new_fn<F>(self, f: F) -> Self
    where
        F: Fn(&Value, &Context) -> bool + 'static,
    {
        self.callback_of("new", OLD_NEW_KINDS, |s| set_callable(&mut s.new), move |ctx: &Context| f(field_of(ctx.new(), &ctx.filter_field()), ctx))
    }

    fn callback(self, name: &str, declare: impl FnOnce(&mut Spec) -> std::result::Result<(), String>, f: impl Fn(&Context) -> bool + 'static) -> Self {
        self.callback_of(name, RESOURCE_KINDS, declare, f)
    }

    fn callback_of(self, name: &str, kinds: &[Kind], declare: impl FnOnce(&mut Spec) -> std::result::Result<(), String>, f: impl Fn(&Context) -> bool + 'static) -> Self {
        let idx = self.index;
        let before = self.module.problems.len();
        let r = self.with(name, Some(kinds), declare);
        if r.module.problems.len() == before {
            let h = &mut r.module.handlers[idx];
            h.callbacks.push(Box::new(f));
            h.spec.when = true;
        }
        r
    }

    /// Serves every resource in a category (Kopf's category=, e.g. "all")
    /// of the group and version given when they are not "": register the
    /// handler with "" as the plural. Only preferred versions unless the
    /// version is named, never Events; the host follows CRDs that appear
    /// and go. Webhook handlers must name their resource.
    pub fn category(self, name: &str) -> Self {
        let name = name.to_string();
        self.with("category", Some(SELECTOR_KINDS), |s| {
            check_many(s)?;
            s.many.category = name;
            Ok(())
        })
    }

    /// Serves the resources `f` takes, Kopf's callable resource selector:
    /// register the handler with "" as the plural (and a group or version
    /// to narrow the candidates). The host asks the module at start and
    /// whenever the cluster's resources change about every resource that
    /// can be listed and watched, every version (`preferred` says which is
    /// the group's preferred one), never Events. `f` must only look.
    pub fn select_resources<F>(self, f: F) -> Self
    where
        F: Fn(&ResourceInfo) -> bool + 'static,
    {
        let idx = self.index;
        let before = self.module.problems.len();
        let r = self.with("select_resources", Some(SELECTOR_KINDS), |s| {
            check_many(s)?;
            s.many.callback = true;
            Ok(())
        });
        if r.module.problems.len() == before {
            // The candidates decode here, so that only modules with a
            // selector link the decoding.
            r.module.handlers[idx].selects = Some(Box::new(move |body: &Value| {
                Value::Array(body.as_array().map(|a| a.iter().map(|v| Value::Bool(f(&ResourceInfo::decode(v)))).collect()).unwrap_or_default())
            }));
        }
        r
    }

    /// A callback filter (Kopf's when=): before calling the handler the
    /// host asks the module whether `f` matches. `f` must only look; it
    /// runs last, after every other filter, callable ones included.
    pub fn when<F>(self, f: F) -> Self
    where
        F: Fn(&Context) -> bool + 'static,
    {
        let idx = self.index;
        let r = self.with("when", Some(RESOURCE_KINDS), |s| {
            s.when = true;
            Ok(())
        });
        if r.module.handlers[idx].spec.when {
            r.module.handlers[idx].when = Some(Box::new(f));
        }
        r
    }
}

fn check_meta(key: &str, f: &Filter) -> std::result::Result<(), String> {
    match f {
        Filter::Is(Value::String(_)) | Filter::Present | Filter::Absent => Ok(()),
        Filter::Is(v) => Err(format!("the filter of {:?} is {}; use a string, PRESENT or ABSENT", key, v)),
    }
}

fn set_callable(slot: &mut Option<Declared>) -> std::result::Result<(), String> {
    *slot = Some(Declared::Callback);
    Ok(())
}

/// The value at a dotted path of a document (null when absent).
fn field_of<'v>(doc: &'v Value, path: &str) -> &'v Value {
    doc.path(path).unwrap_or(&crate::json::NULL)
}

fn check_many(s: &Spec) -> std::result::Result<(), String> {
    match &s.resource {
        Some((_, _, name)) if name.is_empty() && s.many.category.is_empty() && !s.many.callback => Ok(()),
        _ => Err("register the handler with \"\" as the plural (and no other category or selector)".into()),
    }
}

fn check_value(f: Filter) -> std::result::Result<Filter, String> {
    if f == Filter::Is(Value::Null) {
        return Err("null value; use ABSENT for a missing field".into());
    }
    Ok(f)
}

/// What is wrong with declaring `h` under an id already declared for
/// `before` (abi.Validate's rule): one function may be declared as changing
/// handlers (create, update, delete, resume, field) of several kinds under
/// one id, as Kopf lets one function carry several of its decorators; the
/// entries share one progress record and the host runs one of them per
/// cause. One function may also serve several resources under one changing
/// or event kind (Kopf's stacked decorators of one kind), with the same
/// filters and options (only the param may differ). Other kinds never
/// share an id.
fn shared_id(h: &Handler, before: &[&Handler]) -> Option<String> {
    let first = before.first()?;
    if first.fn_type != h.fn_type && (h.kind.is_changing() || h.kind == Kind::Event) && (first.kind.is_changing() || first.kind == Kind::Event) {
        return Some(format!("is declared twice, for {} and for {}: give one of them an id of its own", first.fn_name, h.fn_name));
    }
    let mut same_kind = false;
    for b in before.iter().filter(|b| b.kind == h.kind) {
        if let Some(problem) = same_kind_twice(h, b) {
            return Some(problem);
        }
        same_kind = true;
    }
    if !same_kind && (!h.kind.is_changing() || !first.kind.is_changing()) {
        return Some("is declared twice (only create, update, delete, resume and field handlers share an id)".into());
    }
    None
}

/// What is wrong with `h` declared again as `b`'s kind (abi.Validate's
/// sameKindTwice).
fn same_kind_twice(h: &Handler, b: &Handler) -> Option<String> {
    let twice = format!("is declared twice as a {} handler: give one of them an id of its own, or join their filters in one registration", h.kind.as_str());
    if !h.kind.is_changing() && h.kind != Kind::Event {
        return Some(twice);
    }
    let (hs, bs) = (&h.spec, &b.spec);
    if hs.resource == bs.resource && hs.many == bs.many {
        return Some(twice); // the same resource
    }
    // The filters and options, but the param (and the id, the same).
    let bare = |s: &Spec| Spec { id: String::new(), resource: None, many: Many::default(), param: Value::Null, ..s.clone() };
    if bare(hs) != bare(bs) {
        return Some(format!(
            "is declared twice as a {} handler with other filters or options: one function under several resources of one kind must have the same filters and options (param may differ); give one of them an id of its own",
            h.kind.as_str()
        ));
    }
    None
}

fn write_filter(w: &mut ObjWriter, key: &str, f: &Declared) -> std::result::Result<(), EncodeError> {
    let mut fw = ObjWriter::new(w.key(key));
    match f {
        Declared::Is(Filter::Is(v)) => fw.value("value", v)?,
        Declared::Is(Filter::Present) => fw.bool("present", true),
        Declared::Is(Filter::Absent) => fw.bool("absent", true),
        Declared::Callback => fw.bool("callback", true),
    }
    fw.end();
    Ok(())
}

fn write_filters(w: &mut ObjWriter, key: &str, m: &BTreeMap<String, Declared>) -> std::result::Result<(), EncodeError> {
    if m.is_empty() {
        return Ok(());
    }
    let mut mw = ObjWriter::new(w.key(key));
    for (k, f) in m {
        write_filter(&mut mw, k, f)?;
    }
    mw.end();
    Ok(())
}

impl Module {
    /// The final id of each handler (field handlers get "/<field>").
    pub(crate) fn finish(&mut self) {
        for h in &mut self.handlers {
            if !h.spec.field.is_empty() && h.kind != Kind::Index && !h.spec.id.ends_with(&format!("/{}", h.spec.field)) {
                h.spec.id = format!("{}/{}", h.spec.id, h.spec.field);
            }
        }
    }

    /// The handler a request names: by id and, of one function declared
    /// under several kinds, by kind (the first entry when none has it), and
    /// of one declared for several resources of a kind, by the request's
    /// resource (its plural and group; the kind's first entry otherwise).
    pub(crate) fn handler<'r>(&self, id: &str, kind: &str, resource: impl FnOnce() -> Option<&'r ResourceRef>) -> Option<&Handler> {
        let same: Vec<&Handler> = self.handlers.iter().filter(|h| h.spec.id == id).collect();
        let of_kind: Vec<&Handler> = same.iter().copied().filter(|h| h.kind.as_str() == kind).collect();
        // The resource is decoded only when several entries may serve it.
        let by_resource = if of_kind.len() < 2 { None } else { resource() }.and_then(|r| {
            of_kind.iter().copied().find(|h| {
                matches!(&h.spec.resource, Some((g, _, n)) if *g == r.group && (*n == r.plural || n.eq_ignore_ascii_case(&r.kind)))
            })
        });
        by_resource.or_else(|| of_kind.first().copied()).or_else(|| same.first().copied())
    }

    /// Every registration mistake and manifest problem (abi.Validate's).
    pub fn problems(&self) -> Vec<String> {
        let mut p = self.problems.clone();
        if self.name.is_empty() {
            p.push("module.name is empty".into());
        }
        let mut seen: BTreeMap<&str, Vec<&Handler>> = BTreeMap::new();
        for (i, h) in self.handlers.iter().enumerate() {
            let s = &h.spec;
            let where_ = if s.id.is_empty() { format!("handler[{}]", i) } else { format!("handler {:?}", s.id) };
            if s.id.is_empty() {
                p.push(format!("{} has no id", where_));
            } else {
                let before = seen.entry(s.id.as_str()).or_default();
                if let Some(problem) = shared_id(h, before) {
                    p.push(format!("{} {}", where_, problem));
                }
                before.push(h);
            }
            match (&s.resource, h.kind.is_activity()) {
                (Some(_), true) => p.push(format!("{} is a {} handler and takes no resource", where_, h.kind.as_str())),
                (None, false) => p.push(format!("{} has no resource", where_)),
                (Some((_, _, name)), false) if name.is_empty() && s.many.category.is_empty() && !s.many.callback => {
                    p.push(format!("{} has no resource (name a plural, or use EVERYTHING, category() or select_resources())", where_))
                }
                (Some((_, _, name)), false) if (h.kind.is_webhook() || h.kind == Kind::Convert) && (name == EVERYTHING || !s.many.category.is_empty() || s.many.callback) => {
                    p.push(format!("{} is a {} handler and must name its resource", where_, h.kind.as_str()))
                }
                _ => {}
            }
            if s.initial_delay_callback && s.initial_delay > 0.0 {
                p.push(format!("{} sets both initialDelay and initialDelayCallback; keep one", where_));
            }
            if h.kind == Kind::Field && s.field.is_empty() {
                p.push(format!("{} is a field handler without a field", where_));
            }
            if s.field.is_empty() && (s.value.is_some() || s.old.is_some() || s.new.is_some()) {
                p.push(format!("{} filters on value/old/new without a field", where_));
            }
            if s.value.is_some() && (s.old.is_some() || s.new.is_some()) {
                p.push(format!("{} combines value with old/new", where_));
            }
            if h.kind == Kind::Convert && matches!(&s.resource, Some((g, _, _)) if g.is_empty()) {
                p.push(format!("{} is a convert handler of a core resource; only custom resources convert", where_));
            }
            for v in &s.versions {
                if v.is_empty() || v.contains('/') || v.contains(' ') {
                    p.push(format!("{} declares the version {:?}; versions are bare names such as \"v1\"", where_, v));
                }
            }
            for op in &s.operations {
                if !matches!(op.as_str(), "CREATE" | "UPDATE" | "DELETE" | "CONNECT" | "*") {
                    p.push(format!("{} has an unknown operation {:?} (CREATE, UPDATE, DELETE, CONNECT)", where_, op));
                }
            }
        }
        for (i, (_, resource, verbs)) in self.permissions.iter().enumerate() {
            let where_ = format!("permission[{}]", i);
            if resource.is_empty() {
                p.push(format!("{} has no resource", where_));
            }
            if verbs.is_empty() {
                p.push(format!("{} has no verbs", where_));
            }
            for v in verbs {
                if !matches!(v.as_str(), "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection" | "*") {
                    p.push(format!("{} has an unknown verb {:?}", where_, v));
                }
            }
        }
        p
    }

    /// The manifest as compact JSON, or the error message that lists the
    /// problems (as abi.ManifestError words it).
    pub fn manifest_json(&self) -> std::result::Result<String, String> {
        let problems = self.problems();
        if !problems.is_empty() {
            return Err(format!("module {:?} has an invalid manifest: {}; fix the handler registrations and rebuild", self.name, problems.join("; ")));
        }
        self.write_manifest().map_err(|e| e.to_string())
    }

    fn write_manifest(&self) -> std::result::Result<String, EncodeError> {
        let mut out = String::with_capacity(256);
        let mut w = ObjWriter::new(&mut out);
        w.num("abiVersion", VERSION as f64)?;
        let mut mw = ObjWriter::new(w.key("module"));
        mw.str("name", &self.name);
        mw.str_opt("version", &self.version);
        mw.end();
        let hs = w.key("handlers");
        hs.push('[');
        for (i, h) in self.handlers.iter().enumerate() {
            if i > 0 {
                hs.push(',');
            }
            write_handler(hs, h)?;
        }
        hs.push(']');
        let mut pw = ObjWriter::new(w.key("permissions"));
        if !self.permissions.is_empty() {
            let ks = pw.key("kubernetes");
            ks.push('[');
            for (i, (g, r, verbs)) in self.permissions.iter().enumerate() {
                if i > 0 {
                    ks.push(',');
                }
                let mut kw = ObjWriter::new(ks);
                kw.str("group", g);
                kw.str("resource", r);
                kw.strs("verbs", verbs);
                kw.end();
            }
            ks.push(']');
        }
        pw.strs_opt("hosts", &self.hosts);
        pw.end();
        w.end();
        Ok(out)
    }
}

fn write_handler(out: &mut String, h: &Handler) -> std::result::Result<(), EncodeError> {
    let s = &h.spec;
    let mut w = ObjWriter::new(out);
    w.str("id", &s.id);
    w.str("kind", h.kind.as_str());
    if let Some((g, v, n)) = &s.resource {
        let mut rw = ObjWriter::new(w.key("resource"));
        rw.str_opt("group", g);
        rw.str_opt("version", v);
        let everything = n == EVERYTHING;
        rw.str("name", if everything { "" } else { n });
        rw.str_opt("category", &s.many.category);
        rw.bool_opt("everything", everything);
        rw.bool_opt("callback", s.many.callback);
        rw.end();
    }
    let mut fw = ObjWriter::new(w.key("filters"));
    write_filters(&mut fw, "labels", &s.labels)?;
    write_filters(&mut fw, "annotations", &s.annotations)?;
    fw.str_opt("field", &s.field);
    for (k, f) in [("value", &s.value), ("old", &s.old), ("new", &s.new)] {
        if let Some(f) = f {
            write_filter(&mut fw, k, f)?;
        }
    }
    fw.bool_opt("when", s.when);
    fw.end();
    let mut ow = ObjWriter::new(w.key("options"));
    if let Some(e) = s.errors {
        ow.str("errors", e.as_str());
    }
    ow.num_opt("timeout", s.timeout)?;
    if s.retries != 0 {
        ow.num("retries", s.retries as f64)?;
    }
    ow.num_opt("backoff", s.backoff)?;
    ow.value_opt("param", &s.param)?;
    ow.bool_opt("optional", s.optional);
    ow.bool_opt("deleted", s.deleted);
    ow.num_opt("interval", s.interval)?;
    ow.num_opt("initialDelay", s.initial_delay)?;
    ow.bool_opt("initialDelayCallback", s.initial_delay_callback);
    ow.num_opt("idle", s.idle)?;
    ow.bool_opt("sharp", s.sharp);
    ow.num_opt("cancellationBackoff", s.cancellation_backoff)?;
    ow.num_opt("cancellationTimeout", s.cancellation_timeout)?;
    ow.num_opt("cancellationPolling", s.cancellation_polling)?;
    ow.strs_opt("operations", &s.operations);
    ow.str_opt("subresource", &s.subresource);
    ow.bool_opt("persistent", s.persistent);
    ow.bool_opt("sideEffects", s.side_effects);
    ow.bool_opt("ignoreFailures", s.ignore_failures);
    ow.strs_opt("versions", &s.versions);
    ow.end();
    w.end();
    Ok(())
}
