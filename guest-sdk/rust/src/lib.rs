//! # kopf: write kopf-wasm handlers in Rust
//!
//! Kopf's programming model for handlers that run as a WebAssembly module
//! in the kopf-wasm host, speaking ABI v1 through Extism's kernel imports.
//! It has no dependencies (its JSON is its own, `json`), so a module stays
//! small: the example operator is about 230 KB.
//!
//! ```ignore
//! use kopf::{obj, Context, Module, Result};
//! use std::time::Duration;
//!
//! kopf::export!(register);
//!
//! fn register(m: &mut Module) {
//!     m.on_create("kopf.dev", "v1", "kopfexamples", "create_fn", create_fn)
//!         .retries(3)
//!         .backoff(Duration::from_secs(5));
//!     m.permit("", "pods", &["get", "list", "create"]);
//! }
//!
//! fn create_fn(ctx: &mut Context) -> Result {
//!     ctx.info("creating", obj! {"field" => ctx.spec().str_at("field")});
//!     ctx.patch().set("metadata.labels.handled", "yes");
//!     Ok(obj! {"message" => "hello world"}) // stored under status.create_fn
//! }
//! ```
//!
//! Build with `cargo build --release --target wasm32-wasi` (crate-type
//! cdylib); test natively with [`testing::Host`].

pub mod abi;
mod context;
mod errors;
mod filters;
pub mod hierarchy;
mod host;
pub mod http;
pub mod json;
mod patch;
mod registry;
mod subhandlers;
pub mod typed;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

pub use abi::{Admission, Conversion, DiffItem, Event, Kind, ResourceInfo, ResourceRef};
pub use context::{index_key, Client, Context, Level, EVENT_ERROR, EVENT_NORMAL, EVENT_WARNING, JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH};
pub use errors::{ApiError, Error, ORIGIN_CLUSTER, ORIGIN_HOST};
pub use filters::{all_of, any_of, none_of, not, when, When};
pub use hierarchy::{
    adjust_namespace, adjust_namespace_with, adopt, adopt_with, append_owner_reference, append_owner_reference_with, build_object_reference, harmonize,
    harmonize_with, label, label_with, owner_reference, owner_reference_with, remove_owner_reference, Hierarchy,
};
pub use host::Host;
pub use http::{HttpRequest, HttpResponse};
pub use json::{Map, Value};
pub use patch::Patch;
pub use registry::{ErrorsMode, Filter, Module, Registration, Result, ABSENT, EVERYTHING, PRESENT};
pub use subhandlers::Subhandler;
pub use typed::{DecodeError, FromValue};

use abi::ObjWriter;
use json::EncodeError;

impl Module {
    /// Builds a module: named after the crate unless `register` names it.
    /// Use [`module!`] rather than calling this.
    pub fn build(name: &str, version: &str, register: impl FnOnce(&mut Module)) -> Module {
        let mut m = Module::new(name, version);
        register(&mut m);
        m.finish();
        m
    }

    /// Serves the handle export: request bytes in, response JSON out. Only
    /// a request that is not JSON is a failure of the module; a handler's
    /// failure is an outcome in the response.
    pub fn handle_json(&self, input: &[u8], host: &mut dyn Host) -> std::result::Result<String, String> {
        let req = abi::Request::decode(input)?;
        let h = match self.handler(&req.handler, &req.kind, || req.resource()) {
            Some(h) => h,
            None => {
                let msg = format!("module {:?} has no handler {:?}; rebuild or reload the module", self.name, req.handler);
                return Ok(write_response(&Outcome::failed("error", msg, None, 0), &json::NULL, None, None, None, None).unwrap());
            }
        };
        let is_when = req.call == "when";
        let is_initial_delay = req.call == "initialDelay";
        let is_select = req.call == "select";
        let mut ctx = Context::make(req, &self.name, host);
        ctx.field = h.spec.field.clone();
        if is_when {
            // The callable filters in declaration order, then when.
            let matched = h.callbacks.iter().all(|f| f(&ctx)) && h.when.as_ref().map_or(true, |f| f(&ctx));
            return Ok(write_response(&Outcome::success(), &json::NULL, None, None, None, Some(matched)).unwrap());
        }
        if is_select {
            // Kopf's callable resource selector: one boolean per candidate.
            return Ok(match h.selects.as_ref() {
                Some(f) => write_response(&Outcome::success(), &f(ctx.body()), None, None, None, None).unwrap(),
                None => {
                    let msg = format!("handler {} has no callable resource selector", ctx.handler());
                    write_response(&Outcome::failed("error", msg, None, 0), &json::NULL, None, None, None, None).unwrap()
                }
            });
        }
        if is_initial_delay {
            // Kopf's callable initial_delay: the seconds are the result.
            return Ok(match h.initial_delay.as_ref() {
                Some(f) => write_response(&Outcome::success(), &Value::from(f(&ctx).as_secs_f64()), None, None, None, None).unwrap(),
                None => {
                    let msg = format!("handler {} has no callable initial delay", ctx.handler());
                    write_response(&Outcome::failed("error", msg, None, 0), &json::NULL, None, None, None, None).unwrap()
                }
            });
        }
        let result = (h.func)(&mut ctx);
        let result = ctx.finish_subhandlers(result);
        Ok(respond(&mut ctx, h.kind, result))
    }
}

pub(crate) struct Outcome {
    pub status: &'static str,
    pub message: String,
    pub delay: Option<f64>,
    pub code: u16,
}

impl Outcome {
    pub(crate) fn success() -> Outcome {
        Outcome { status: "success", message: String::new(), delay: None, code: 0 }
    }
    pub(crate) fn failed(status: &'static str, message: String, delay: Option<f64>, code: u16) -> Outcome {
        Outcome { status, message, delay, code }
    }
    pub(crate) fn of(err: &Error) -> Outcome {
        match err {
            Error::Temporary { message, delay } => Outcome::failed("temporary", message.clone(), delay.map(|d| d.as_secs_f64()), 0),
            Error::Permanent { message } => Outcome::failed("permanent", message.clone(), None, 0),
            Error::Admission { message, code } => Outcome::failed("permanent", message.clone(), None, admission_code(*code)),
            Error::Arbitrary { message } => Outcome::failed("error", message.clone(), None, 0),
            Error::ChildrenRetry => Outcome::failed("children", String::new(), None, 0),
        }
    }
}

fn admission_code(code: u16) -> u16 {
    if code == 0 {
        500
    } else {
        code
    }
}

/// Folds a handler's return value and its context into a response.
fn respond(ctx: &mut Context, kind: Kind, result: Result) -> String {
    let (mut outcome, value) = match result {
        Ok(v) => (Outcome::success(), v),
        Err(e) => (Outcome::of(&e), Value::Null),
    };
    let memo = match &ctx.memo {
        Some(m) => {
            let now = json::map_json(m).unwrap_or_default();
            if now != ctx.memo_was {
                Some(Value::Object(m.clone()))
            } else {
                None
            }
        }
        None => None,
    };
    let admission = if kind.is_webhook() {
        let warnings = ctx.admission().map(|a| a.warnings.clone()).unwrap_or_default();
        Some(warnings)
    } else {
        None
    };
    let patch = if ctx.patch.is_empty() { None } else { Some(&ctx.patch) };
    let written = write_response(&outcome, &value, patch, memo.as_ref(), admission.as_ref(), None).and_then(|mut s| {
        if !ctx.sub_outcomes.is_empty() {
            s.pop(); // the closing brace
            s.push_str(",\"subhandlers\":");
            subhandlers::write_outcomes(&mut s, &ctx.sub_outcomes)?;
            s.push('}');
        }
        Ok(s)
    });
    match written {
        Ok(s) => s,
        Err(e) => {
            // a NaN or an infinity in the result, patch or memo: as Go's
            // json.Marshal, an arbitrary error of the handler.
            outcome = Outcome::failed("error", format!("kopf: encode the response of {}: {}", ctx.handler(), e), None, 0);
            write_response(&outcome, &json::NULL, None, None, admission.as_ref(), None).unwrap()
        }
    }
}

/// Writes an outcome object.
pub(crate) fn write_outcome(out: &mut String, o: &Outcome) -> std::result::Result<(), EncodeError> {
    let mut ow = ObjWriter::new(out);
    ow.str("status", o.status);
    ow.str_opt("message", &o.message);
    if let Some(d) = o.delay {
        ow.num("delay", d)?;
    }
    if o.code != 0 {
        ow.num("code", o.code as f64)?;
    }
    ow.end();
    Ok(())
}

fn write_response(o: &Outcome, result: &Value, patch: Option<&Patch>, memo: Option<&Value>, admission: Option<&Vec<String>>, matched: Option<bool>) -> std::result::Result<String, EncodeError> {
    let mut out = String::with_capacity(128);
    let mut w = ObjWriter::new(&mut out);
    write_outcome(w.key("outcome"), o)?;
    if o.status == "success" {
        w.value_opt("result", result)?;
    }
    if let Some(p) = patch {
        p.write(w.key("patch"))?;
    }
    if let Some(m) = memo {
        w.value("memo", m)?;
    }
    if let Some(warnings) = admission {
        let allowed = o.status == "success";
        let mut aw = ObjWriter::new(w.key("admission"));
        aw.bool("allowed", allowed);
        if !allowed {
            aw.num("code", admission_code(o.code) as f64)?;
            aw.str_opt("message", &o.message);
        }
        aw.strs_opt("warnings", warnings);
        aw.end();
    }
    if let Some(m) = matched {
        w.bool("matched", m);
    }
    w.end();
    Ok(out)
}

/// Builds the crate's module with a registration function:
/// `kopf::module!(register)` (named and versioned after the crate).
#[macro_export]
macro_rules! module {
    ($register:path) => {
        $crate::Module::build(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), $register)
    };
}

/// Exports the module's entry points (`kopf_manifest`, `kopf_handle`) for
/// a registration function `fn register(m: &mut kopf::Module)`.
#[macro_export]
macro_rules! export {
    ($register:path) => {
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn kopf_manifest() -> i32 {
            $crate::__wasm::manifest(|| $crate::module!($register))
        }

        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn kopf_handle() -> i32 {
            $crate::__wasm::handle(|| $crate::module!($register))
        }
    };
}

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod __wasm {
    //! The entry points behind `export!`. The module is built once per
    //! instance and kept (an instance is never called concurrently).
    use super::Module;
    use crate::host::wasm;
    use std::cell::RefCell;

    thread_local! {
        static MODULE: RefCell<Option<Module>> = RefCell::new(None);
    }

    fn with<R>(build: fn() -> Module, f: impl FnOnce(&Module) -> R) -> R {
        MODULE.with(|cell| {
            if cell.borrow().is_none() {
                wasm::install_panic_hook();
                *cell.borrow_mut() = Some(build());
            }
            let m = cell.borrow();
            f(m.as_ref().unwrap())
        })
    }

    pub fn manifest(build: fn() -> Module) -> i32 {
        with(build, |m| match m.manifest_json() {
            Ok(s) => {
                wasm::output(s.as_bytes());
                0
            }
            Err(e) => {
                wasm::set_error(&e);
                1
            }
        })
    }

    pub fn handle(build: fn() -> Module) -> i32 {
        with(build, |m| {
            let input = wasm::input();
            match m.handle_json(&input, &mut wasm::WasmHost) {
                Ok(s) => {
                    wasm::output(s.as_bytes());
                    0
                }
                Err(e) => {
                    wasm::set_error(&e);
                    1
                }
            }
        })
    }
}
