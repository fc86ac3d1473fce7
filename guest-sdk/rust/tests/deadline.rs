//! The host's limit for a call reaches the handler as ctx.deadline().

use kopf::testing::Host;
use kopf::{obj, Context, Module, Result, Value};

fn when(ctx: &mut Context) -> Result {
    Ok(obj! {"started" => ctx.started(), "deadline" => ctx.deadline()})
}

fn module() -> Module {
    Module::build("deadline", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "when", when);
    })
}

#[test]
fn the_deadline_is_the_hosts() {
    let h = Host::new(module());
    let body = obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample", "metadata" => obj!{"name" => "a", "namespace" => "default"}};
    let mut req = h.request("when", Some(&body), None);
    req.as_object_mut().unwrap().insert("deadline".into(), Value::from("2026-01-01T00:00:30Z"));
    let res = h.call(&req);
    assert_eq!(res.outcome, Ok(obj! {"started" => "2026-01-01T00:00:00Z", "deadline" => "2026-01-01T00:00:30Z"}));

    // A daemon's request has none.
    let res = h.call(&h.request("when", Some(&body), None));
    assert_eq!(res.outcome, Ok(obj! {"started" => "2026-01-01T00:00:00Z", "deadline" => ""}));
}
