//! Events about other objects (Kopf's kopf.event(objs, ...)) carry each
//! object's reference; an empty list posts nothing, as in Kopf.

use kopf::testing::Harness;
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
    let h = Harness::new(module());
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
