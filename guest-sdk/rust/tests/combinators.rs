//! Kopf's filter combinators (kopf.all_, any_, none_, not_) over `when`
//! callbacks.

use kopf::testing::Host;
use kopf::{all_of, any_of, none_of, not, obj, when, Context, Module, Result, Value};

fn noop(_: &mut Context) -> Result {
    Ok(Value::Null)
}

fn is_web(ctx: &Context) -> bool {
    ctx.labels().get("app").map(String::as_str) == Some("web")
}

fn is_big(ctx: &Context) -> bool {
    ctx.spec()["size"].as_i64().unwrap_or(0) > 10
}

fn module() -> Module {
    Module::build("combinators", "0.1.0", |m| {
        m.on_create("", "v1", "pods", "all", noop).when(all_of(vec![when(is_web), when(is_big)]));
        m.on_create("", "v1", "pods", "any", noop).when(any_of(vec![when(is_web), when(is_big)]));
        m.on_create("", "v1", "pods", "none", noop).when(none_of(vec![when(is_web), when(is_big)]));
        m.on_create("", "v1", "pods", "not", noop).when(not(is_web));
        m.on_create("", "v1", "pods", "nested", noop).when(all_of(vec![when(not(is_web)), when(any_of(vec![when(is_big)]))]));
    })
}

#[test]
fn combinators_decide_as_kopf() {
    let h = Host::new(module());
    let pod = |app: &str, size: i64| obj! {"metadata" => obj!{"name" => "p", "labels" => obj!{"app" => app}}, "spec" => obj!{"size" => size}};
    let cases = [
        ("all", "web", 20, true), ("all", "web", 1, false), ("all", "db", 20, false),
        ("any", "web", 1, true), ("any", "db", 20, true), ("any", "db", 1, false),
        ("none", "db", 1, true), ("none", "web", 1, false), ("none", "db", 20, false),
        ("not", "db", 1, true), ("not", "web", 1, false),
        ("nested", "db", 20, true), ("nested", "db", 1, false), ("nested", "web", 20, false),
    ];
    for (id, app, size, want) in cases {
        assert_eq!(h.matches(id, &pod(app, size), None), want, "{} on app={} size={}", id, app, size);
    }
}
