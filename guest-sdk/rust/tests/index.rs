//! Indexes: a large index that the host carries as null is read whole
//! from the host by ctx.index_all; a small one from the request.

use kopf::testing::Host;
use kopf::{obj, Context, Module, Result, Value};

fn siblings(ctx: &mut Context) -> Result {
    let all = ctx.index_all("by_owner")?;
    Ok(obj! {"carried" => ctx.index("by_owner").clone(), "all" => all})
}

fn module() -> Module {
    Module::build("indexes", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "siblings", siblings);
    })
}

fn example() -> Value {
    obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample", "metadata" => obj!{"name" => "a", "namespace" => "default"}, "spec" => obj!{}}
}

#[test]
fn index_all_reads_a_large_index_from_the_host() {
    let h = Host::new(module());
    h.set_index("by_owner", "alice", vec![Value::from("a"), Value::from("b")]);
    let want = obj! {"alice" => Value::Array(vec![Value::from("a"), Value::from("b")])};
    let res = h.run("siblings", &example(), None);
    assert_eq!(res.outcome, Ok(obj! {"carried" => want.clone(), "all" => want.clone()}));

    let mut req = h.request("siblings", Some(&example()), None);
    req.as_object_mut().unwrap().insert("indices".into(), obj! {"by_owner" => Value::Null});
    let res = h.call(&req);
    assert_eq!(res.outcome, Ok(obj! {"carried" => Value::Null, "all" => want}));
}

fn neighbours(ctx: &mut Context) -> Result {
    let key = vec![Value::from(ctx.namespace()), Value::from(ctx.spec().str_at("place"))];
    let looked = ctx.index_lookup("by_place", Value::Array(key.clone()))?;
    Ok(obj! {"lookup" => Value::Array(looked), "whole" => ctx.index("by_place")[kopf::index_key(&key).as_str()].clone()})
}

/// Kopf's tuple keys are JSON arrays: kopf::index_key gives the text a
/// result is keyed by, and a look-up by the array finds it.
#[test]
fn tuple_keys_are_json_arrays() {
    assert_eq!(kopf::index_key(&[Value::from("default"), Value::from("north")]), r#"["default","north"]"#);
    let h = Host::new(Module::build("indexes", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "neighbours", neighbours);
    }));
    h.set_index("by_place", kopf::index_key(&[Value::from("default"), Value::from("north")]), vec![Value::from("a")]);
    let mut ex = example();
    ex.as_object_mut().unwrap().insert("spec".into(), obj! {"place" => "north"});
    let res = h.run("neighbours", &ex, None);
    let a = Value::Array(vec![Value::from("a")]);
    assert_eq!(res.outcome, Ok(obj! {"lookup" => a.clone(), "whole" => a}));
}
