//! Events about other objects (Kopf's kopf.event(objs, ...)) carry each
//! object's reference; an empty list posts nothing, as in Kopf.

use kopf::testing::Host;
use kopf::{obj, Context, Module, Result, Value};

fn post(ctx: &mut Context) -> Result {
    let pod = obj! {"apiVersion" => "v1", "kind" => "Pod", "metadata" => obj!{"name" => "p", "namespace" => "ns", "uid" => "u"}};
    let node = obj! {"apiVersion" => "v1", "kind" => "Node", "metadata" => obj!{"name" => "n1"}};
    ctx.post_event_about(&[], "Normal", "Nothing", "about no object")?;
    ctx.post_event_about(&[pod, node], "Warning", "Pressure", "full")?;
    Ok(Value::Null)
}

fn module() -> Module {
    Module::build("events", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "post", post);
    })
}

#[test]
fn events_about_objects_and_about_none() {
    let body = obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample", "metadata" => obj!{"name" => "a", "namespace" => "default"}};
    let h = Host::new(module());
    let res = h.run("post", &body, None);
    assert!(res.outcome.is_ok(), "{:?}", res.response);
    let got: Vec<String> = h.events().iter().map(|e| e.to_json().unwrap()).collect();
    assert_eq!(
        got,
        vec![
            r#"{"about":{"apiVersion":"v1","kind":"Pod","name":"p","namespace":"ns","uid":"u"},"message":"full","reason":"Pressure","type":"Warning"}"#,
            r#"{"about":{"apiVersion":"v1","kind":"Node","name":"n1"},"message":"full","reason":"Pressure","type":"Warning"}"#,
        ]
    );
}

fn failing(ctx: &mut Context) -> Result {
    let pod = obj! {"apiVersion" => "v1", "kind" => "Pod", "metadata" => obj!{"name" => "p", "namespace" => "ns"}};
    let err = match ctx.client("", "v1", "pods").namespace("ns").get("p") {
        Err(e) => e,
        Ok(_) => return Ok(Value::Null),
    };
    ctx.exception(&[pod.clone()], "", "could not read it:", &err)?;
    ctx.exception(&[pod], "Quota", "over quota", "")?;
    ctx.info_about(&[ctx.body().clone()], "Seen", "seen")?;
    ctx.warn_about(&[], "Nothing", "about no object")?;
    Ok(Value::Null)
}

#[test]
fn exceptions_are_error_events_named_after_the_error() {
    let body = obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample", "metadata" => obj!{"name" => "a", "namespace" => "default"}};
    let h = Host::new(Module::build("events", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "failing", failing);
    }));
    assert_eq!(h.run("failing", &body, None).outcome, Ok(Value::Null));
    let got: Vec<String> = h.events().iter().map(|e| format!("{} {} {}", e.str_at("type"), e.str_at("reason"), e.str_at("message"))).collect();
    assert_eq!(got.len(), 3, "{:?}", got);
    assert!(got[0].starts_with("Error ApiError could not read it: kopf: get pods ns/p:"), "{}", got[0]);
    assert_eq!(got[1], "Error Quota over quota");
    assert_eq!(got[2], "Normal Seen seen");
    assert_eq!(h.events()[1]["about"], obj! {"apiVersion" => "v1", "kind" => "Pod", "name" => "p", "namespace" => "ns"});
}
