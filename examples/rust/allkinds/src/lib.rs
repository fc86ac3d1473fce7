//! The allkinds operator in Rust: one handler of every kind but convert,
//! as examples/allkinds.md says and examples/allkinds (Go) does; the
//! polyglot end-to-end test (TestAllKinds) runs it beside the Go module
//! and asserts the same outcomes.
//!
//! Build: cargo build --release --target wasm32-wasi

use std::time::Duration;

use kopf::{obj, Context, Error, Module, Result, Value, EVENT_NORMAL};

kopf::export!(register);

const GROUP: &str = "kopf.dev";
const VERSION: &str = "v1";
const PLURAL: &str = "kopfexamples";

kopf::typed! {
    /// A KopfExample's spec, typed.
    pub struct Spec {
        pub field: Option<String> = "field",
    }
}

pub fn register(m: &mut Module) {
    m.module("allkinds", "0.1.0");
    m.on_startup("startup_fn", |ctx| {
        ctx.info("allkinds started", ());
        Ok(Value::Null)
    });
    m.on_cleanup("cleanup_fn", |ctx| {
        ctx.info("allkinds cleaned up", ());
        Ok(Value::Null)
    });
    m.on_create(GROUP, VERSION, PLURAL, "create_fn", create_fn);
    // A callable label filter: objects labelled skip=yes are not updated.
    m.on_update(GROUP, VERSION, PLURAL, "update_fn", update_fn).label_fn("skip", |v, _| v.as_str() != Some("yes"));
    m.on_field(GROUP, VERSION, PLURAL, "field_fn", field_fn).field("spec.field");
    m.on_delete(GROUP, VERSION, PLURAL, "delete_fn", delete_fn);
    m.on_resume(GROUP, VERSION, PLURAL, "resume_fn", |_| Ok("resumed".into()));
    m.on_event(GROUP, VERSION, PLURAL, "event_fn", event_fn);
    m.timer(GROUP, VERSION, PLURAL, "timer_fn", timer_fn).interval(Duration::from_secs(1));
    m.daemon(GROUP, VERSION, PLURAL, "daemon_fn", daemon_fn);
    m.index(GROUP, VERSION, PLURAL, "by_field", |ctx| Ok(obj! {ctx.spec().str_at("field") => ctx.name()}));
    m.on_probe("index_size", index_size);
    m.on_validate(GROUP, VERSION, PLURAL, "validate_fn", validate_fn);
    m.on_mutate(GROUP, VERSION, PLURAL, "mutate_fn", |ctx| {
        ctx.patch().set("metadata.labels.allkinds-mutated", "yes");
        Ok(Value::Null)
    });
}

/// Posts an Event about the object and registers two sub-handlers, whose
/// results land in status["create_fn/a"] and status["create_fn/b"].
fn create_fn(ctx: &mut Context) -> Result {
    ctx.post_event(EVENT_NORMAL, "AllKinds", "created")?;
    ctx.subhandler("a", |_| Ok("sub a".into()));
    ctx.subhandler("b", |_| Ok("sub b".into()));
    Ok(Value::Null)
}

fn update_fn(ctx: &mut Context) -> Result {
    let spec: Spec = ctx.spec_as()?;
    Ok(obj! {"field" => spec.field})
}

fn field_fn(ctx: &mut Context) -> Result {
    Ok(obj! {"old" => ctx.old().clone(), "new" => ctx.new().clone()})
}

fn delete_fn(ctx: &mut Context) -> Result {
    ctx.info(&format!("deleting {}", ctx.name()), ());
    Ok(Value::Null)
}

fn event_fn(ctx: &mut Context) -> Result {
    let kind = ctx.event().map(|e| e.kind.clone()).unwrap_or_default();
    ctx.info(&format!("event {} {}", kind, ctx.name()), ());
    Ok(Value::Null)
}

/// Marks the object once, through the handler's patch.
fn timer_fn(ctx: &mut Context) -> Result {
    if ctx.status()["ticked"].as_bool() != Some(true) {
        ctx.patch().set("status.ticked", true);
    }
    Ok(Value::Null)
}

fn daemon_fn(ctx: &mut Context) -> Result {
    ctx.info(&format!("daemon started {}", ctx.name()), ());
    while !ctx.sleep_until_stopped(Duration::from_secs(60)) {}
    ctx.info(&format!("daemon stopped {}", ctx.name()), ());
    Ok(Value::Null)
}

/// The number of keys in the index by_field, read whole.
fn index_size(ctx: &mut Context) -> Result {
    let index = ctx.index_all("by_field")?;
    Ok(index.as_object().map_or(0, |m| m.len()).into())
}

fn validate_fn(ctx: &mut Context) -> Result {
    let spec: Spec = ctx.spec_as()?;
    if spec.field.as_deref() == Some("forbidden") {
        return Err(Error::admission("field must not be forbidden", 0));
    }
    Ok(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kopf::testing::Host;

    fn example(field: &str, labels: Value) -> Value {
        obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample",
            "metadata" => obj!{"name" => "one", "namespace" => "default", "uid" => "u1", "labels" => labels},
            "spec" => obj!{"field" => field}}
    }

    #[test]
    fn every_kind_in_the_manifest() {
        let h = Host::new(kopf::module!(register));
        let kinds: Vec<String> = h.manifest()["handlers"].as_array().unwrap().iter().map(|s| format!("{} {}", s.str_at("id"), s.str_at("kind"))).collect();
        assert_eq!(
            kinds,
            [
                "startup_fn startup", "cleanup_fn cleanup", "create_fn create", "update_fn update", "field_fn/spec.field field",
                "delete_fn delete", "resume_fn resume", "event_fn event", "timer_fn timer", "daemon_fn daemon", "by_field index",
                "index_size probe", "validate_fn validate", "mutate_fn mutate",
            ]
        );
        assert_eq!(h.spec("update_fn")["filters"], obj! {"labels" => obj!{"skip" => obj!{"callback" => true}}, "when" => true});
    }

    #[test]
    fn create_runs_both_subhandlers_and_posts_an_event() {
        let h = Host::new(kopf::module!(register));
        let res = h.run("create_fn", &example("a", Value::object()), None);
        assert_eq!(res.outcome, Ok(Value::Null));
        let children = res.children();
        assert_eq!(children["create_fn/a"].outcome, Some(Ok("sub a".into())));
        assert_eq!(children["create_fn/b"].outcome, Some(Ok("sub b".into())));
        assert_eq!(h.events()[0].str_at("reason"), "AllKinds");
    }

    #[test]
    fn update_skips_objects_labelled_skip_yes() {
        let h = Host::new(kopf::module!(register));
        let old = example("a", Value::object());
        assert_eq!(h.why_not("update_fn", &example("b", obj! {"skip" => "no"}), Some(&old)), "");
        assert_ne!(h.why_not("update_fn", &example("b", obj! {"skip" => "yes"}), Some(&old)), "");
        assert_eq!(h.run("update_fn", &example("b", Value::object()), Some(&old)).outcome, Ok(obj! {"field" => "b"}));
    }

    #[test]
    fn field_timer_index_probe_and_webhooks() {
        let h = Host::new(kopf::module!(register));
        let res = h.run("field_fn/spec.field", &example("b", Value::object()), Some(&example("a", Value::object())));
        assert_eq!(res.outcome, Ok(obj! {"old" => "a", "new" => "b"}));
        assert_eq!(h.run("timer_fn", &example("a", Value::object()), None).merge(), &obj! {"status" => obj!{"ticked" => true}});
        assert_eq!(h.run("by_field", &example("a", Value::object()), None).outcome, Ok(obj! {"a" => "one"}));
        h.set_index("by_field", "a", vec!["one".into()]);
        h.set_index("by_field", "b", vec!["two".into()]);
        assert_eq!(h.run("index_size", &Value::Null, None).outcome, Ok(2.into()));
        assert!(!h.run("validate_fn", &example("forbidden", Value::object()), None).allowed());
        assert!(h.run("validate_fn", &example("fine", Value::object()), None).allowed());
        assert_eq!(h.run("mutate_fn", &example("a", Value::object()), None).merge(), &obj! {"metadata" => obj!{"labels" => obj!{"allkinds-mutated" => "yes"}}});
    }
}
