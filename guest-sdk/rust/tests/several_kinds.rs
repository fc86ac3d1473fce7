//! One function under several changing kinds (Kopf's @kopf.on.resume with
//! @kopf.on.create): one id, once per kind, each entry with its own
//! filters, picked by the request's kind.

use kopf::testing::Host;
use kopf::{obj, Context, Module, Result, Value};

fn reconcile(ctx: &mut Context) -> Result {
    Ok(Value::from(ctx.reason()))
}

fn other(_: &mut Context) -> Result {
    Ok(Value::Null)
}

fn module() -> Module {
    Module::build("several", "0.1.0", |m| {
        m.on_resume("", "v1", "pods", "reconcile", reconcile).when(|_| false);
        m.on_create("", "v1", "pods", "reconcile", reconcile);
        m.on_update("", "v1", "pods", "reconcile", reconcile).label("app", "web");
    })
}

#[test]
fn one_id_once_per_kind_in_the_manifest() {
    let h = Host::new(module());
    let kinds: Vec<String> = h.manifest()["handlers"].as_array().unwrap().iter()
        .map(|s| format!("{} {}", s.str_at("id"), s.str_at("kind"))).collect();
    assert_eq!(kinds, ["reconcile resume", "reconcile create", "reconcile update"]);
}

#[test]
fn the_request_kind_picks_the_entry() {
    let h = Host::new(module());
    let pod = obj! {"metadata" => obj!{"name" => "p", "labels" => obj!{"app" => "web"}}};
    let ask = |kind: &str| {
        let mut req = h.request("reconcile", Some(&pod), None);
        let m = req.as_object_mut().unwrap();
        m.insert("kind".into(), kind.into());
        m.insert("reason".into(), kind.into());
        m.insert("call".into(), "when".into());
        h.call(&req).response["matched"].as_bool()
    };
    assert_eq!(ask("resume"), Some(false), "the resume entry's when");
    assert_eq!(ask("create"), Some(true));
    let mut req = h.request("reconcile", Some(&pod), None);
    let m = req.as_object_mut().unwrap();
    m.insert("kind".into(), "update".into());
    m.insert("reason".into(), "update".into());
    assert_eq!(h.call(&req).outcome, Ok(Value::from("update")));
}

#[test]
fn mistakes() {
    let tests: Vec<(fn(&mut Module), &str)> = vec![
        (|m| {
            m.on_create("", "v1", "pods", "x", reconcile);
            m.on_update("", "v1", "pods", "x", other);
        }, "handler \"x\" is declared twice, for "),
        (|m| {
            m.on_create("", "v1", "pods", "x", reconcile);
            m.on_create("", "v1", "pods", "x", reconcile);
        }, "handler \"x\" is declared twice as a create handler"),
        (|m| {
            m.on_create("", "v1", "pods", "x", reconcile);
            m.daemon("", "v1", "pods", "x", reconcile);
        }, "handler \"x\" is declared twice (only create, update, delete, resume and field handlers share an id)"),
    ];
    for (register, want) in tests {
        let m = Module::build("m", "0.1.0", register);
        let p = m.problems();
        assert!(p.iter().any(|s| s.contains(want)), "problems {:?}, want one with {:?}", p, want);
    }
}
