//! Callable label, annotation and value filters (Kopf's `labels={k: fn}`,
//! `value=fn`, `old=fn`, `new=fn`): marked as callbacks in the manifest,
//! asked by the host's "when" call in declaration order, before `when`.

use kopf::testing::Host;
use kopf::{obj, Module, Value};

fn module() -> Module {
    Module::build("callables", "0.1.0", |m| {
        m.on_update("kopf.dev", "v1", "kopfexamples", "labelled", |_| Ok(Value::Null))
            .label("app", "demo")
            .label_fn("skip", |v, _| v.as_str() != Some("yes"))
            .annotation_fn("owner", |v, ctx| v.as_str() == Some(ctx.name()));
        m.on_field("kopf.dev", "v1", "kopfexamples", "grown", |_| Ok(Value::Null))
            .field("spec.size")
            .old_fn(|v, _| v.as_i64().unwrap_or(0) < 3)
            .new_fn(|v, _| v.as_i64().unwrap_or(0) >= 3);
        m.on_create("kopf.dev", "v1", "kopfexamples", "big", |_| Ok(Value::Null))
            .field("spec.size")
            .value_fn(|v, _| v.as_i64().unwrap_or(0) > 10)
            .when(|ctx| ctx.name() != "excluded");
        m.timer("kopf.dev", "v1", "kopfexamples", "big_timer", |_| Ok(Value::Null)).field("spec.size").value_fn(|v, _| v.as_i64().unwrap_or(0) > 10);
    })
}

fn example(name: &str, size: i64, labels: Value, annotations: Value) -> Value {
    obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample",
        "metadata" => obj!{"name" => name, "namespace" => "default", "labels" => labels, "annotations" => annotations},
        "spec" => obj!{"size" => size}}
}

#[test]
fn the_manifest_marks_callables() {
    let h = Host::new(module());
    assert_eq!(
        h.spec("labelled")["filters"],
        obj! {"labels" => obj!{"app" => obj!{"value" => "demo"}, "skip" => obj!{"callback" => true}},
            "annotations" => obj!{"owner" => obj!{"callback" => true}}, "when" => true}
    );
    assert_eq!(h.spec("grown/spec.size")["filters"], obj! {"field" => "spec.size", "old" => obj!{"callback" => true}, "new" => obj!{"callback" => true}, "when" => true});
    assert_eq!(h.spec("big/spec.size")["filters"], obj! {"field" => "spec.size", "value" => obj!{"callback" => true}, "when" => true});
}

#[test]
fn label_and_annotation_callables_get_the_value_and_the_context() {
    let h = Host::new(module());
    let old = example("x", 1, obj! {"app" => "demo"}, obj! {"owner" => "x"});
    let called = |labels: Value, annotations: Value| h.why_not("labelled", &example("x", 2, labels, annotations), Some(&old));
    assert_eq!(called(obj! {"app" => "demo"}, obj! {"owner" => "x"}), "");
    assert_eq!(called(obj! {"app" => "demo", "skip" => "no"}, obj! {"owner" => "x"}), "");
    assert_ne!(called(obj! {"app" => "demo", "skip" => "yes"}, obj! {"owner" => "x"}), "");
    assert_ne!(called(obj! {"app" => "demo"}, obj! {"owner" => "someone else"}), "");
    assert_ne!(called(obj! {"app" => "demo"}, Value::object()), "", "an absent annotation is null");
    // The declarative filter first: the callables are not even asked.
    assert!(called(obj! {"app" => "other"}, obj! {"owner" => "x"}).contains("app"));
}

#[test]
fn old_and_new_callables_get_the_fields_values() {
    let h = Host::new(module());
    let e = |size| example("x", size, Value::object(), Value::object());
    assert_eq!(h.why_not("grown/spec.size", &e(5), Some(&e(1))), "");
    assert_ne!(h.why_not("grown/spec.size", &e(5), Some(&e(4))), "");
    assert_ne!(h.why_not("grown/spec.size", &e(2), Some(&e(1))), "");
}

#[test]
fn value_callables_get_new_or_old_for_changes_and_the_body_otherwise() {
    let h = Host::new(module());
    let e = |name, size| example(name, size, Value::object(), Value::object());
    assert_eq!(h.why_not("big/spec.size", &e("x", 11), None), "");
    assert_ne!(h.why_not("big/spec.size", &e("x", 3), None), "");
    assert_ne!(h.why_not("big/spec.size", &e("excluded", 11), None), "", "when runs after the callables");
    assert_eq!(h.why_not("big_timer/spec.size", &e("x", 11), None), "");
    assert_ne!(h.why_not("big_timer/spec.size", &e("x", 3), None), "");
}

#[test]
fn callables_on_kinds_without_old_and_new_are_mistakes() {
    let m = Module::build("bad", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "c", |_| Ok(Value::Null)).field("spec.x").old_fn(|_, _| true);
    });
    assert_eq!(m.problems(), ["option old does not apply to create handlers (handler c)"]);
}
