//! Convert handlers (beyond Kopf): their registration, the manifest they
//! make, and a conversion as the host asks for one.

use kopf::testing::Host;
use kopf::{obj, Context, Error, Kind, Module, Result, Value};

/// Widgets: v1alpha1 has spec.size (a string of digits), v1 spec.replicas.
fn convert(ctx: &mut Context) -> Result {
    let to = ctx.conversion().map(|c| c.desired_api_version.clone()).unwrap_or_default();
    match to.as_str() {
        "kopf.dev/v1" => {
            let size = ctx.body().str_at("spec.size").to_string();
            let n: i64 = size.parse().map_err(|_| Error::permanent(format!("spec.size {:?} is not a number", size)))?;
            Ok(obj! {"spec" => obj!{"replicas" => n}})
        }
        "kopf.dev/v1alpha1" => {
            let n = ctx.body()["spec"]["replicas"].as_i64().unwrap_or(0);
            Ok(obj! {"spec" => obj!{"size" => n.to_string()}})
        }
        _ => Err(Error::permanent(format!("cannot convert to {}", to))),
    }
}

fn module() -> Module {
    Module::build("conversion", "0.1.0", |m| {
        m.on_convert("kopf.dev", "v1", "widgets", "convert", convert).versions(&["v1alpha1", "v1"]);
    })
}

fn widget(version: &str, spec: Value) -> Value {
    obj! {"apiVersion" => format!("kopf.dev/{}", version), "kind" => "Widget",
    "metadata" => obj!{"name" => "w", "namespace" => "default"}, "spec" => spec}
}

#[test]
fn kind_convert_is_in_the_abi() {
    assert_eq!(Kind::Convert.as_str(), "convert");
    assert_eq!(Kind::parse("convert"), Some(Kind::Convert));
    assert!(!Kind::Convert.is_webhook() && !Kind::Convert.is_activity() && !Kind::Convert.is_changing());
}

#[test]
fn manifest_declares_the_handler_and_its_versions() {
    let h = Host::new(module());
    let spec = h.spec("convert");
    assert_eq!(spec.str_at("kind"), "convert");
    assert_eq!(spec["resource"], obj! {"group" => "kopf.dev", "version" => "v1", "name" => "widgets"});
    assert_eq!(spec["options"]["versions"].to_string(), r#"["v1alpha1","v1"]"#);
}

#[test]
fn converts_both_ways() {
    let h = Host::new(module());
    let res = h.convert("convert", &widget("v1alpha1", obj! {"size" => "3"}), "kopf.dev/v1");
    assert_eq!(res.outcome, Ok(obj! {"spec" => obj!{"replicas" => 3}}), "{}", res.raw);
    let res = h.convert("convert", &widget("v1", obj! {"replicas" => 5}), "kopf.dev/v1alpha1");
    assert_eq!(res.outcome, Ok(obj! {"spec" => obj!{"size" => "5"}}), "{}", res.raw);
    // No admission member in a convert handler's response.
    assert!(res.response.get("admission").is_none(), "{}", res.raw);
}

#[test]
fn a_failure_carries_the_message() {
    let h = Host::new(module());
    let res = h.convert("convert", &widget("v1alpha1", obj! {"size" => "many"}), "kopf.dev/v1");
    assert_eq!(res.response["outcome"].str_at("status"), "permanent");
    assert!(res.response["outcome"].str_at("message").contains(r#"spec.size "many" is not a number"#), "{}", res.raw);
}

#[test]
fn conversion_is_none_for_other_kinds() {
    let h = Host::new(Module::build("m", "", |m| {
        m.on_create("kopf.dev", "v1", "widgets", "create", |ctx| Ok(Value::from(ctx.conversion().is_none())));
    }));
    assert_eq!(h.run("create", &widget("v1", obj! {}), None).outcome, Ok(Value::from(true)));
}

#[test]
fn registration_mistakes() {
    let cases: Vec<(Module, &str)> = vec![
        (Module::build("m", "", |m| {
            m.on_convert("kopf.dev", "v1", "widgets", "c", convert).versions(&[]);
        }), "no versions"),
        (Module::build("m", "", |m| {
            m.on_validate("kopf.dev", "v1", "widgets", "v", convert).versions(&["v1"]);
        }), "option versions does not apply to validate handlers"),
        (Module::build("m", "", |m| {
            m.on_convert("kopf.dev", "v1", "widgets", "c", convert).versions(&["kopf.dev/v1"]);
        }), r#"declares the version "kopf.dev/v1""#),
        (Module::build("m", "", |m| {
            m.on_convert("", "v1", "pods", "c", convert);
        }), "only custom resources convert"),
        (Module::build("m", "", |m| {
            m.on_convert("kopf.dev", "v1", "widgets", "c", convert).label("a", "b");
        }), "option labels does not apply to convert handlers"),
    ];
    for (m, want) in cases {
        let err = m.manifest_json().unwrap_err();
        assert!(err.contains(want), "want {:?} in {}", want, err);
    }
}
