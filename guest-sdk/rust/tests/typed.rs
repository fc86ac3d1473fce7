//! Typed access: `typed!` structs and FromValue decode the spec, status,
//! param and client replies, and encode back to a Value; mistakes name the
//! member.

use kopf::testing::Host;
use kopf::{obj, Context, Error, FromValue, Module, Result, Value};

kopf::typed! {
    /// A container of a typed spec.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Container {
        pub name: String = "name",
        pub image: Option<String> = "image",
    }
}

kopf::typed! {
    #[derive(Clone, Debug, PartialEq)]
    pub struct Spec {
        pub field: String = "field",
        pub replicas: Option<u16> = "replicas",
        pub ratio: f64 = "ratio",
        pub enabled: Option<bool> = "enabled",
        pub containers: Vec<Container> = "containers",
        pub extra: Value = "extra",
    }
}

fn example(spec: Value) -> Value {
    obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample", "metadata" => obj!{"name" => "x", "namespace" => "ns"}, "spec" => spec}
}

fn create_fn(ctx: &mut Context) -> Result {
    let spec: Spec = ctx.spec_as()?;
    let greeting: String = ctx.param_as()?;
    ctx.patch().set("status.replicas", spec.replicas.unwrap_or(1));
    Ok(obj! {"greeting" => greeting, "spec" => spec})
}

fn read_fn(ctx: &mut Context) -> Result {
    let c: Container = ctx.client("kopf.dev", "v1", "containers").namespace("ns").get_as("c1")?;
    let all: Vec<Container> = ctx.client("kopf.dev", "v1", "containers").namespace("ns").list_as("", "")?;
    Ok(obj! {"one" => c, "count" => all.len()})
}

fn harness() -> Host {
    Host::new(Module::build("typed", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "create_fn", create_fn).param("hello");
        m.on_create("kopf.dev", "v1", "kopfexamples", "read_fn", read_fn);
        m.permit("kopf.dev", "containers", &["get", "list"]);
    }))
}

#[test]
fn decode_and_encode_back() {
    let h = harness();
    let spec = obj! {"field" => "a", "ratio" => 0.5, "containers" => Value::Array(vec![obj!{"name" => "c1", "image" => "nginx"}, obj!{"name" => "c2"}]),
        "extra" => obj!{"any" => true}, "unknown" => "ignored"};
    let res = h.run("create_fn", &example(spec), None);
    assert_eq!(
        res.outcome,
        Ok(obj! {"greeting" => "hello", "spec" => obj!{"field" => "a", "ratio" => 0.5,
            "containers" => Value::Array(vec![obj!{"name" => "c1", "image" => "nginx"}, obj!{"name" => "c2"}]), "extra" => obj!{"any" => true}}})
    );
    assert_eq!(res.merge(), &obj! {"status" => obj!{"replicas" => 1}});
}

#[test]
fn mistakes_name_the_member() {
    let h = harness();
    for (spec, want) in [
        (obj! {"ratio" => 1}, "decode spec.field: missing"),
        (obj! {"field" => 3, "ratio" => 1}, "decode spec.field: want a string, got a number"),
        (obj! {"field" => "a", "ratio" => 1, "replicas" => 70000}, "decode spec.replicas: 70000 is not a u16"),
        (obj! {"field" => "a", "ratio" => 1, "replicas" => 1.5}, "decode spec.replicas: 1.5 is not a u16"),
        (obj! {"field" => "a", "ratio" => 1, "containers" => Value::Array(vec![obj!{"image" => "x"}])}, "decode spec.containers.0.name: missing"),
    ] {
        assert_eq!(h.run("create_fn", &example(spec), None).outcome, Err(Error::arbitrary(want)));
    }
}

#[test]
fn client_replies_decode() {
    let h = harness();
    h.add("kopf.dev", "containers", &obj! {"apiVersion" => "kopf.dev/v1", "kind" => "Container", "metadata" => obj!{"name" => "c1", "namespace" => "ns"}, "name" => "c1", "image" => "busybox"});
    let res = h.run("read_fn", &example(Value::object()), None);
    assert_eq!(res.outcome, Ok(obj! {"one" => obj!{"name" => "c1", "image" => "busybox"}, "count" => 1}));
}

#[test]
fn values_decode_directly() {
    assert_eq!(Value::from(3).decode::<i64>(), Ok(3));
    assert_eq!(Value::Null.decode::<Option<i64>>(), Ok(None));
    assert_eq!(obj! {"a" => 1, "b" => 2}.decode::<std::collections::BTreeMap<String, u8>>().unwrap().len(), 2);
    assert_eq!(Value::from(-1).decode::<u8>().unwrap_err().to_string(), "decode: -1 is not a u8");
    assert!(Container::from_value(&Value::from("x")).is_err());
}
