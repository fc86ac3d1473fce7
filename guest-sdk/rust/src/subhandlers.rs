//! Sub-handlers, Kopf's @kopf.subhandler and kopf.execute().
//!
//! A wasm module cannot keep a handler's closures from one call to the
//! next, so the host calls the parent handler again in every processing
//! cycle of its cause until all its sub-handlers are finished, sending
//! their progress. In each call the parent registers its sub-handlers anew
//! ([`Context::subhandler`]); the SDK runs, in the same call, those that
//! are neither finished nor waiting for a retry, each with its own retry,
//! started and runtime, and tells the host every registration with its
//! options and outcome. The host keeps each one's progress under its id
//! "parent/child", stores its result under `status.<parent/child>`, and
//! lists the ids in the parent's "subrefs", as Kopf does. The parent's own
//! result is stored once all its sub-handlers are finished.
//!
//! Sub-handlers share the parent's patch and memo, and may register
//! sub-handlers of their own ("parent/child/grandchild"). Their log
//! records carry the field `subhandler=<id>`. The wire format is the Go
//! `abi` module's (abi/subhandlers.go).

use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use crate::abi::{Kind, ObjWriter, SubhandlerState};
use crate::context::Context;
use crate::errors::Error;
use crate::json::{EncodeError, Value};
use crate::registry::{ErrorsMode, Filter, Result, WhenFn};
use crate::Outcome;

type SubFn = Rc<dyn Fn(&mut Context) -> Result>;

/// [`Context::execute`] as a function pointer (see `Context::run_subs`).
pub(crate) type RunSubs = for<'a, 'b> fn(&'a mut Context<'b>) -> std::result::Result<(), Error>;

/// One registration of a sub-handler.
pub(crate) struct Sub {
    id: String,
    func: SubFn,
    errors: Option<ErrorsMode>,
    timeout: f64,
    retries: i64,
    backoff: f64,
    param: Value,
    labels: BTreeMap<String, Filter>,
    annotations: BTreeMap<String, Filter>,
    /// Callable label and annotation filters, then `when` (kept last).
    callbacks: Vec<WhenFn>,
    when: Option<WhenFn>,
    problem: String,
}

/// What the guest tells the host about one registration.
pub(crate) struct SubOutcome {
    id: String,
    parent: String,
    errors: Option<ErrorsMode>,
    timeout: f64,
    retries: i64,
    backoff: f64,
    param: Value,
    /// None when the guest did not call it.
    outcome: Option<Outcome>,
    result: Value,
}

/// The options of a sub-handler being registered (Kopf's error options,
/// param, and the filters on labels, annotations and the whole object):
/// returned by [`Context::subhandler`].
pub struct Subhandler<'c> {
    sub: &'c mut Sub,
}

impl<'c> Subhandler<'c> {
    fn problem(self, p: String) -> Self {
        if self.sub.problem.is_empty() {
            self.sub.problem = p;
        }
        self
    }
    /// Passed to the sub-handler as `ctx.param()`.
    pub fn param(self, v: impl Into<Value>) -> Self {
        self.sub.param = v.into();
        self
    }
    /// What an arbitrary error means (temporary by default).
    pub fn errors(self, mode: ErrorsMode) -> Self {
        self.sub.errors = Some(mode);
        self
    }
    /// Limits the attempts.
    pub fn retries(self, n: u32) -> Self {
        self.sub.retries = n as i64;
        self
    }
    /// Limits the time since the first attempt.
    pub fn timeout(self, d: Duration) -> Self {
        self.sub.timeout = d.as_secs_f64();
        self
    }
    /// The delay before retrying after an arbitrary error.
    pub fn backoff(self, d: Duration) -> Self {
        self.sub.backoff = d.as_secs_f64();
        self
    }
    /// Filters on a label: a string value, `PRESENT` or `ABSENT`. A
    /// sub-handler filtered out is not run and not waited for, as in Kopf.
    pub fn label(self, key: &str, f: impl Into<Filter>) -> Self {
        match f.into() {
            Filter::Is(v) if v.as_str().is_none() => self.problem(format!("the filter of {:?} is {}; use a string, PRESENT or ABSENT", key, v)),
            f => {
                self.sub.labels.insert(key.to_string(), f);
                self
            }
        }
    }
    /// Filters on an annotation, as [`Subhandler::label`].
    pub fn annotation(self, key: &str, f: impl Into<Filter>) -> Self {
        match f.into() {
            Filter::Is(v) if v.as_str().is_none() => self.problem(format!("the filter of {:?} is {}; use a string, PRESENT or ABSENT", key, v)),
            f => {
                self.sub.annotations.insert(key.to_string(), f);
                self
            }
        }
    }
    /// A callable label filter: `f` gets the label's value (null when absent).
    pub fn label_fn(self, key: &str, f: impl Fn(&Value, &Context) -> bool + 'static) -> Self {
        let key = key.to_string();
        self.sub.callbacks.push(Box::new(move |ctx: &Context| f(&ctx.meta()["labels"][key.as_str()], ctx)));
        self
    }
    /// A callable annotation filter, as [`Subhandler::label_fn`].
    pub fn annotation_fn(self, key: &str, f: impl Fn(&Value, &Context) -> bool + 'static) -> Self {
        let key = key.to_string();
        self.sub.callbacks.push(Box::new(move |ctx: &Context| f(&ctx.meta()["annotations"][key.as_str()], ctx)));
        self
    }
    /// A filter on the whole object (Kopf's when=), run last.
    pub fn when(self, f: impl Fn(&Context) -> bool + 'static) -> Self {
        self.sub.when = Some(Box::new(f));
        self
    }
}

impl<'h> Context<'h> {
    /// Registers a sub-handler of the running changing handler (Kopf's
    /// @kopf.subhandler): `f` runs under the id "<handler id>/<id>" with
    /// its own progress and retries, and its result is stored under
    /// `status.<handler id>/<id>`. Registered sub-handlers run when the
    /// handler returns `Ok`, or earlier with [`Context::execute`].
    /// Register the same sub-handlers in every call: one not registered in
    /// a call is not run in it.
    ///
    /// ```ignore
    /// fn create_fn(ctx: &mut Context) -> Result {
    ///     for item in ["a", "b"] {
    ///         ctx.subhandler(item, move |ctx| Ok(format!("made {}", item).into())).retries(3);
    ///     }
    ///     Ok(Value::Null)
    /// }
    /// ```
    pub fn subhandler<F>(&mut self, id: &str, f: F) -> Subhandler<'_>
    where
        F: Fn(&mut Context) -> Result + 'static,
    {
        let mut problem = String::new();
        if id.is_empty() {
            problem = "the sub-handler has no id".into();
        } else if !Kind::parse(self.kind()).map_or(false, Kind::is_changing) {
            problem = format!("sub-handlers of {} handlers are not supported (only of changing handlers, as in Kopf)", self.kind());
        }
        self.run_subs = Some(|ctx: &mut Context| ctx.execute());
        self.subs.push(Sub {
            id: format!("{}/{}", self.handler(), id),
            func: Rc::new(f),
            errors: None,
            timeout: 0.0,
            retries: 0,
            backoff: 0.0,
            param: Value::Null,
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            callbacks: Vec::new(),
            when: None,
            problem,
        });
        Subhandler { sub: self.subs.last_mut().unwrap() }
    }

    /// Runs the sub-handlers registered so far (Kopf's kopf.execute()):
    /// `Ok` once they are all finished, or [`Error::ChildrenRetry`] while
    /// some are not; return it (`ctx.execute()?`), and the code after it
    /// runs only in the call where every sub-handler is finished. Once a
    /// handler called it, sub-handlers it registers later run only by
    /// another `execute` (Kopf's explicit execute() replaces the implicit
    /// one).
    pub fn execute(&mut self) -> std::result::Result<(), Error> {
        self.executed = true;
        let subs = std::mem::take(&mut self.subs);
        let mut pending = false;
        for s in subs {
            if !self.run_sub(s) {
                pending = true;
            }
        }
        if pending {
            Err(Error::ChildrenRetry)
        } else {
            Ok(())
        }
    }

    /// Runs the sub-handlers the handler registered and did not execute
    /// itself, once it returned `Ok`.
    pub(crate) fn finish_subhandlers(&mut self, result: Result) -> Result {
        if result.is_err() || self.subs.is_empty() || self.executed {
            return result;
        }
        let run = self.run_subs.expect("sub-handlers registered without their runner");
        run(self)?;
        result
    }

    /// Runs one sub-handler if it is due, and says whether it is finished
    /// (as far as the guest can tell; the host decides).
    fn run_sub(&mut self, s: Sub) -> bool {
        if self.sub_outcomes.iter().any(|o| o.id == s.id) {
            return true; // registered twice: the first registration counts
        }
        let known = self.req.subhandlers().iter().find(|st| st.id == s.id).cloned();
        let st = known.clone().unwrap_or_else(|| SubhandlerState { id: s.id.clone(), started: self.req.started.clone(), ..Default::default() });
        // The sub-handler's kwargs, in place of its parent's.
        let parent = std::mem::replace(&mut self.req.handler, s.id.clone());
        let retry = std::mem::replace(&mut self.req.retry, st.retry);
        let started = std::mem::replace(&mut self.req.started, st.started.clone());
        let runtime = std::mem::replace(&mut self.req.runtime, st.runtime);
        let param = self.req.swap_param(s.param.clone());
        let sub_id = std::mem::replace(&mut self.sub_id, s.id.clone());
        let executed = std::mem::replace(&mut self.executed, false);
        let pending = std::mem::take(&mut self.subs);

        let finished = self.run_due(&s, &parent, known.as_ref(), &st);

        self.req.handler = parent;
        self.req.retry = retry;
        self.req.started = started;
        self.req.runtime = runtime;
        self.req.swap_param(param);
        self.sub_id = sub_id;
        self.executed = executed;
        self.subs = pending;
        finished
    }

    fn run_due(&mut self, s: &Sub, parent: &str, known: Option<&SubhandlerState>, st: &SubhandlerState) -> bool {
        if s.problem.is_empty() && !self.sub_matches(s) {
            return true; // filtered out: not run, not waited for
        }
        let i = self.sub_outcomes.len();
        self.sub_outcomes.push(SubOutcome {
            id: s.id.clone(),
            parent: parent.to_string(),
            errors: s.errors,
            timeout: s.timeout,
            retries: s.retries,
            backoff: s.backoff,
            param: s.param.clone(),
            outcome: None,
            result: Value::Null,
        });
        match known {
            Some(k) if k.finished => return true,
            Some(k) if k.sleeping => return false,
            _ => {}
        }
        if !s.problem.is_empty() {
            self.sub_outcomes[i].outcome = Some(Outcome::failed("permanent", s.problem.clone(), None, 0));
            return true;
        }
        if (s.timeout > 0.0 && st.runtime >= s.timeout) || (s.retries > 0 && st.retry >= s.retries) {
            return true; // used up: the host fails it without a call
        }
        let result = (s.func)(self);
        let result = self.finish_subhandlers(result);
        let out = match &result {
            Ok(_) => Outcome::success(),
            Err(e) => Outcome::of(e),
        };
        let done = settled(&out, st, s);
        if let Ok(v) = result {
            self.sub_outcomes[i].result = v;
        }
        self.sub_outcomes[i].outcome = Some(out);
        done
    }

    /// A sub-handler's filters on the object, as the host applies a
    /// handler's: labels and annotations, the callables, then `when`.
    fn sub_matches(&self, s: &Sub) -> bool {
        let meta = |where_: &str, filters: &BTreeMap<String, Filter>| {
            filters.iter().all(|(k, f)| {
                let v = self.meta()[where_].get(k).and_then(Value::as_str);
                match f {
                    Filter::Present => v.is_some(),
                    Filter::Absent => v.is_none(),
                    Filter::Is(want) => v.is_some() && v == want.as_str(),
                }
            })
        };
        meta("labels", &s.labels) && meta("annotations", &s.annotations) && s.callbacks.iter().all(|f| f(self)) && s.when.as_ref().map_or(true, |f| f(self))
    }
}

/// Whether an outcome finishes a sub-handler, as the host's classification
/// would with its options (a temporary error whose delay the guest does
/// not know counts as unfinished).
fn settled(out: &Outcome, st: &SubhandlerState, s: &Sub) -> bool {
    match out.status {
        "success" | "permanent" => true,
        "error" => {
            if matches!(s.errors, Some(ErrorsMode::Ignored) | Some(ErrorsMode::Permanent)) {
                return true;
            }
            (s.retries > 0 && st.retry + 1 >= s.retries) || (s.timeout > 0.0 && s.backoff > 0.0 && st.runtime + s.backoff >= s.timeout)
        }
        "temporary" => {
            if s.retries > 0 && st.retry + 1 >= s.retries {
                return true;
            }
            s.timeout > 0.0 && out.delay.map_or(false, |d| st.runtime + d >= s.timeout)
        }
        _ => false,
    }
}

/// Writes the response's "subhandlers" member.
pub(crate) fn write_outcomes(out: &mut String, outcomes: &[SubOutcome]) -> std::result::Result<(), EncodeError> {
    out.push('[');
    for (n, o) in outcomes.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let mut w = ObjWriter::new(out);
        w.str("id", &o.id);
        w.str("parent", &o.parent);
        let mut ow = ObjWriter::new(w.key("options"));
        if let Some(e) = o.errors {
            ow.str("errors", e.as_str());
        }
        ow.num_opt("timeout", o.timeout)?;
        if o.retries != 0 {
            ow.num("retries", o.retries as f64)?;
        }
        ow.num_opt("backoff", o.backoff)?;
        ow.value_opt("param", &o.param)?;
        ow.end();
        if let Some(oc) = &o.outcome {
            crate::write_outcome(w.key("outcome"), oc)?;
            if oc.status == "success" {
                w.value_opt("result", &o.result)?;
            }
        }
        w.end();
    }
    out.push(']');
    Ok(())
}
