//! Kopf's callable initial_delay: marked in the manifest, and the host's
//! "initialDelay" call gets the seconds the function computes.

use std::time::Duration;

use kopf::testing::Host;
use kopf::{obj, Context, Module, Result, Value};

fn tick(_: &mut Context) -> Result {
    Ok(Value::Null)
}

fn module() -> Module {
    Module::build("delays", "0.1.0", |m| {
        m.timer("kopf.dev", "v1", "kopfexamples", "later", tick)
            .interval(Duration::from_secs(60))
            .initial_delay_fn(|ctx| Duration::from_secs_f64(ctx.spec()["delay"].as_f64().unwrap_or(0.0)));
    })
}

#[test]
fn the_host_asks_for_the_delay() {
    let h = Host::new(module());
    let spec = h.spec("later");
    assert_eq!(spec["options"]["initialDelayCallback"], Value::from(true));
    let ex = obj! {"metadata" => obj!{"name" => "a", "namespace" => "default"}, "spec" => obj!{"delay" => 2.5}};
    let mut req = h.request("later", Some(&ex), None);
    req.as_object_mut().unwrap().insert("call".into(), "initialDelay".into());
    assert_eq!(h.call(&req).outcome, Ok(Value::from(2.5)));
}

#[test]
fn mistakes() {
    let m = Module::build("m", "0.1.0", |m| {
        m.on_create("", "v1", "pods", "c", tick).initial_delay_fn(|_| Duration::ZERO);
        m.daemon("", "v1", "pods", "d", tick).initial_delay(Duration::from_secs(1)).initial_delay_fn(|_| Duration::ZERO);
    });
    let p = m.problems();
    for want in ["option initial_delay_fn does not apply to create handlers", "handler \"d\" sets both initialDelay and initialDelayCallback"] {
        assert!(p.iter().any(|s| s.contains(want)), "problems {:?}, want one with {:?}", p, want);
    }
}
