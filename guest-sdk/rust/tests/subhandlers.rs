//! Sub-handlers (Kopf's @kopf.subhandler and kopf.execute()): run in the
//! parent's call while due, each with its own progress, reported to the
//! host as abi/subhandlers.go says, and run again cycle after cycle until
//! all are finished.

use std::time::Duration;

use kopf::testing::Host;
use kopf::{obj, Context, Error, Module, Result, Value, ABSENT};

fn items(ctx: &mut Context) -> Result {
    let items: Vec<String> = ctx.spec()["items"].as_array().cloned().unwrap_or_default().iter().map(|v| v.as_str().unwrap_or("").to_string()).collect();
    for item in items {
        let it = item.clone();
        ctx.subhandler(&format!("add-{}", item), move |ctx| {
            ctx.info("adding", obj! {"item" => it.as_str()});
            if it.starts_with("slow-") && ctx.retry() == 0 {
                return Err(Error::temporary_after(format!("{} is not ready yet", it), Duration::from_secs(4)));
            }
            Ok(obj! {"configMap" => format!("{}-{}", ctx.name(), it)})
        })
        .retries(5);
    }
    Ok(obj! {"items" => ctx.spec()["items"].clone()})
}

fn filtered(ctx: &mut Context) -> Result {
    let ok = |_: &mut Context| -> Result { Ok("ran".into()) };
    ctx.subhandler("labelled", ok).label("app", "demo");
    ctx.subhandler("unlabelled", ok).label("app", ABSENT);
    ctx.subhandler("callable", ok).label_fn("app", |v, _| v.as_str() == Some("demo"));
    ctx.subhandler("never", ok).when(|_| false);
    Ok(Value::Null)
}

fn explicit(ctx: &mut Context) -> Result {
    ctx.subhandler("first", |ctx| {
        let id = ctx.handler().to_string();
        ctx.patch().set("status.first", id);
        ctx.subhandler("nested", |ctx| Ok(Value::from(ctx.handler())));
        Ok(Value::Null)
    });
    ctx.execute()?;
    Ok("after".into())
}

fn module() -> Module {
    Module::build("subs", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "create_items", items);
        m.on_create("kopf.dev", "v1", "kopfexamples", "filtered", filtered);
        m.on_create("kopf.dev", "v1", "kopfexamples", "explicit", explicit);
        m.timer("kopf.dev", "v1", "kopfexamples", "timer", |ctx| {
            ctx.subhandler("x", |_| Ok(Value::Null));
            Ok(Value::Null)
        });
    })
}

fn fleet(items: &[&str], labels: Value) -> Value {
    obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample",
        "metadata" => obj!{"name" => "fleet", "namespace" => "default", "labels" => labels},
        "spec" => obj!{"items" => Value::Array(items.iter().map(|i| Value::from(*i)).collect())}}
}

#[test]
fn the_request_fixture_decodes_and_only_due_ones_run() {
    let path = format!("{}/../../abi/testdata/request-subhandlers.json", env!("CARGO_MANIFEST_DIR"));
    let req = Value::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let h = Host::new(module());
    let res = h.call(&req);
    // add-a is finished, add-b sleeps: neither runs, and the parent waits for b.
    assert_eq!(res.outcome, Err(Error::ChildrenRetry));
    assert!(res.pending());
    let children = res.children();
    assert_eq!(children.len(), 2);
    assert_eq!(children["create_items/add-a"].outcome, None);
    assert_eq!(children["create_items/add-b"].outcome, None);
    assert_eq!(children["create_items/add-b"].options, obj! {"retries" => 5});
    assert!(h.logs().is_empty());
}

#[test]
fn the_response_is_the_fixtures_shape() {
    let h = Host::new(module());
    let res = h.run("create_items", &fleet(&["a", "slow-b"], Value::object()), None);
    // The bytes, in the Go structs' field order.
    assert_eq!(
        &res.raw[res.raw.find(r#""subhandlers":"#).unwrap()..],
        r#""subhandlers":[{"id":"create_items/add-a","parent":"create_items","options":{"retries":5},"outcome":{"status":"success"},"result":{"configMap":"fleet-a"}},{"id":"create_items/add-slow-b","parent":"create_items","options":{"retries":5},"outcome":{"status":"temporary","message":"slow-b is not ready yet","delay":4}}]}"#
    );
    assert_eq!(res.response["outcome"], obj! {"status" => "children"});
    assert!(res.response["result"].is_null(), "the parent's result waits for its sub-handlers");
    let logs = h.logs();
    assert_eq!(logs[0]["fields"], obj! {"item" => "a", "subhandler" => "create_items/add-a"});
}

#[test]
fn cycles_until_every_subhandler_is_finished() {
    let h = Host::new(module());
    let cycles = h.run_cycles("create_items", &fleet(&["a", "slow-b"], Value::object()), None, 5);
    assert_eq!(cycles.len(), 2);
    let last = &cycles[1];
    assert_eq!(last.outcome, Ok(obj! {"items" => Value::Array(vec!["a".into(), "slow-b".into()])}));
    let children = last.children();
    assert_eq!(children["create_items/add-a"].outcome, None, "finished: not run again");
    assert_eq!(children["create_items/add-slow-b"].outcome, Some(Ok(obj! {"configMap" => "fleet-slow-b"})));
}

#[test]
fn filtered_out_subhandlers_are_not_run_nor_waited_for() {
    let h = Host::new(module());
    let ran = |labels: Value| {
        let res = h.run("filtered", &fleet(&[], labels), None);
        assert_eq!(res.outcome, Ok(Value::Null));
        res.children().into_iter().map(|(id, _)| id).collect::<Vec<_>>()
    };
    assert_eq!(ran(obj! {"app" => "demo"}), ["filtered/callable", "filtered/labelled"]);
    assert_eq!(ran(Value::object()), ["filtered/unlabelled"]);
}

#[test]
fn execute_runs_them_first_and_nested_ones_get_their_own_ids() {
    let h = Host::new(module());
    let res = h.run("explicit", &fleet(&[], Value::object()), None);
    assert_eq!(res.outcome, Ok("after".into()));
    let children = res.children();
    assert_eq!(children["explicit/first/nested"].outcome, Some(Ok("explicit/first/nested".into())));
    assert_eq!(children["explicit/first/nested"].parent, "explicit/first");
    assert_eq!(res.merge(), &obj! {"status" => obj!{"first" => "explicit/first"}}, "sub-handlers share the parent's patch");
}

#[test]
fn only_changing_handlers_have_subhandlers() {
    let h = Host::new(module());
    let res = h.run("timer", &fleet(&[], Value::object()), None);
    assert_eq!(res.outcome, Ok(Value::Null));
    let x = &res.children()["timer/x"];
    assert_eq!(x.outcome, Some(Err(Error::permanent("sub-handlers of timer handlers are not supported (only of changing handlers, as in Kopf)"))));
}
