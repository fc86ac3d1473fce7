//! The richer example that kopf-wasm's guest SDKs share, in Rust: the same
//! operator as examples/children (Go) and examples/assemblyscript/children,
//! whose end-to-end test (internal/polyglottest, TestChildren) asserts the
//! same outcomes for the three. On every KopfExample:
//!
//! - `create_child` makes a ConfigMap `<name>-child` holding spec.field,
//!   adopted by the parent (a controller owner reference, the parent's
//!   namespace and labels), so the garbage collector deletes it with the
//!   parent; result `{"child": "<name>-child"}` under status.create_child;
//! - `sync` (a field handler on spec.field) copies the new value into the
//!   ConfigMap with a merge patch; result `{"field": value}` under
//!   status["sync/spec.field"];
//! - `heartbeat`, a timer every second, counts its runs in
//!   status.heartbeat.beats.
//!
//! Build: cargo build --release --target wasm32-wasi (or kopf-wasm build).

use kopf::{obj, Context, Error, Module, Result, Value};
use std::time::Duration;

const GROUP: &str = "kopf.dev";
const VERSION: &str = "v1";
const PLURAL: &str = "kopfexamples";

kopf::export!(register);

pub fn register(m: &mut Module) {
    m.module("children", "0.1.0");
    m.on_create(GROUP, VERSION, PLURAL, "create_child", create_child);
    m.on_field(GROUP, VERSION, PLURAL, "sync", sync).field("spec.field");
    m.timer(GROUP, VERSION, PLURAL, "heartbeat", heartbeat).interval(Duration::from_secs(1));
    m.permit("", "configmaps", &["create", "patch"]);
}

/// A field's value as the ConfigMap stores it.
fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn create_child(ctx: &mut Context) -> Result {
    let name = format!("{}-child", ctx.name());
    let field = text(ctx.spec().get("field").unwrap_or(&Value::Null));
    let mut cm = obj! {"apiVersion" => "v1", "kind" => "ConfigMap",
        "metadata" => obj!{"name" => name.as_str()},
        "data" => obj!{"field" => field}};
    ctx.adopt(&mut cm);
    match ctx.client("", "v1", "configmaps").namespace(ctx.namespace()).create(&cm) {
        Ok(_) => {}
        Err(e) if e.is_already_exists() => {}
        Err(e) => return Err(e.into()), // arbitrary: retried after the backoff
    }
    ctx.info("child created", obj! {"configmap" => name.as_str()});
    Ok(obj! {"child" => name})
}

fn sync(ctx: &mut Context) -> Result {
    let value = text(ctx.new());
    let patch = obj! {"data" => obj!{"field" => value.as_str()}};
    let child = format!("{}-child", ctx.name());
    match ctx.client("", "v1", "configmaps").namespace(ctx.namespace()).patch(&child, "merge", &patch) {
        Ok(_) => {}
        Err(e) if e.is_not_found() => {
            return Err(Error::temporary_after("the child does not exist yet", Duration::from_secs(1)))
        }
        Err(e) => return Err(e.into()),
    }
    ctx.info("child synced", obj! {"field" => value.as_str()});
    Ok(obj! {"field" => value})
}

fn heartbeat(ctx: &mut Context) -> Result {
    let beats = ctx.status().path("heartbeat.beats").and_then(Value::as_f64).unwrap_or(0.0);
    Ok(obj! {"beats" => beats + 1.0})
}

#[cfg(test)]
mod tests {
    use super::*;
    use kopf::testing::Host;

    fn example(field: &str) -> Value {
        obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample",
            "metadata" => obj!{"name" => "family", "namespace" => "default", "uid" => "u1", "labels" => obj!{"team" => "a"}},
            "spec" => obj!{"field" => field}}
    }

    #[test]
    fn manifest() {
        let h = Host::new(kopf::module!(register));
        let ids: Vec<&str> = h.manifest()["handlers"].as_array().unwrap().iter().map(|h| h.str_at("id")).collect();
        assert_eq!(ids, ["create_child", "sync/spec.field", "heartbeat"]);
        assert_eq!(h.spec("heartbeat").path("options.interval").and_then(Value::as_f64), Some(1.0));
    }

    #[test]
    fn create_adopts_the_child() {
        let h = Host::new(kopf::module!(register));
        let res = h.run("create_child", &example("one"), None);
        assert_eq!(res.outcome, Ok(obj! {"child" => "family-child"}));
        let cm = h.object("", "configmaps", "default", "family-child").expect("the ConfigMap");
        assert_eq!(cm.str_at("data.field"), "one");
        assert_eq!(cm.str_at("metadata.labels.team"), "a");
        let refs = cm.path("metadata.ownerReferences").and_then(Value::as_array).expect("ownerReferences");
        assert_eq!((refs.len(), refs[0].str_at("uid"), refs[0].str_at("kind")), (1, "u1", "KopfExample"));
        assert_eq!(refs[0].get("controller"), Some(&Value::Bool(true)));
        // A retry finds the ConfigMap it made before.
        assert_eq!(h.run("create_child", &example("one"), None).outcome, Ok(obj! {"child" => "family-child"}));
    }

    #[test]
    fn sync_patches_the_child() {
        let h = Host::new(kopf::module!(register));
        let res = h.run("sync/spec.field", &example("two"), Some(&example("one")));
        assert!(matches!(res.outcome, Err(Error::Temporary { .. })), "{:?}", res.outcome);
        h.run("create_child", &example("one"), None);
        let res = h.run("sync/spec.field", &example("two"), Some(&example("one")));
        assert_eq!(res.outcome, Ok(obj! {"field" => "two"}));
        let cm = h.object("", "configmaps", "default", "family-child").unwrap();
        assert_eq!(cm.str_at("data.field"), "two");
    }

    #[test]
    fn heartbeat_counts() {
        let h = Host::new(kopf::module!(register));
        let mut obj = example("one");
        assert_eq!(h.run("heartbeat", &obj, None).outcome, Ok(obj! {"beats" => 1}));
        obj.set_path("status.heartbeat.beats", 4);
        assert_eq!(h.run("heartbeat", &obj, None).outcome, Ok(obj! {"beats" => 5}));
    }
}
