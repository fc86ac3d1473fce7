//! The module of abi/testdata/manifest.json, registered as an author
//! would: its manifest, responses and host calls must equal the ABI's
//! golden fixtures byte for byte (as the Go SDK's goldentest checks).

use std::time::Duration;

use kopf::json::indent;
use kopf::testing::Host;
use kopf::{obj, arr, Context, Error, ErrorsMode, Module, Result, Value, ABSENT, PRESENT};

fn register(m: &mut Module) {
    m.module("kopfexample", "1.0.0");
    m.on_create("kopf.dev", "v1", "kopfexamples", "create_fn", create_fn)
        .retries(3)
        .backoff(Duration::from_secs(5))
        .param(obj! {"greeting" => "hello"});
    m.on_update("kopf.dev", "v1", "kopfexamples", "update_fn", update_fn).label("app", "demo").label("skip", ABSENT);
    m.on_delete("kopf.dev", "v1", "kopfexamples", "delete_fn", delete_fn).errors(ErrorsMode::Permanent).timeout(Duration::from_secs(60));
    m.on_field("kopf.dev", "v1", "kopfexamples", "field_fn", field_fn).field("spec.field").new(PRESENT).annotation("owner", PRESENT);
    m.timer("kopf.dev", "v1", "kopfexamples", "ping", |_| Ok("pong".into()))
        .interval(Duration::from_secs(10))
        .idle(Duration::from_secs(5))
        .sharp();
    m.daemon("", "v1", "pods", "monitor", monitor)
        .when(|ctx| ctx.labels().get("app").map(String::as_str) == Some("demo"))
        .initial_delay(Duration::from_secs(1))
        .cancellation_timeout(Duration::from_secs(3));
    m.on_validate("kopf.dev", "", "kopfexamples", "check", check).operations(&["CREATE", "UPDATE"]);
    m.on_startup("configure", |_| Ok(Value::Null));
    m.permit("", "pods", &["get", "list", "create"]);
    m.allow_hosts(&["api.example.com"]);
}

/// Gives response-success.json and log.json.
fn create_fn(ctx: &mut Context) -> Result {
    let greeting = ctx.param().str_at("greeting").to_string();
    ctx.info("child created", obj! {"child" => format!("{}-child", ctx.name())});
    ctx.patch().set("metadata.labels.handled", "yes");
    ctx.patch().add("/spec/items/-", "x");
    let memo = ctx.memo();
    let seen = memo.get("seen").and_then(Value::as_f64).unwrap_or(0.0);
    memo.insert("seen".into(), (seen + 1.0).into());
    Ok(obj! {"message" => greeting})
}

/// Gives response-temporary.json.
fn update_fn(_: &mut Context) -> Result {
    Err(Error::temporary_after("not ready yet", Duration::from_secs(5)))
}

/// Makes the request refused in kube-response-forbidden.json.
fn delete_fn(ctx: &mut Context) -> Result {
    match ctx.client("", "v1", "pods").namespace(ctx.namespace()).delete(&format!("{}-child", ctx.name())) {
        Err(e) if e.is_forbidden() && e.origin == kopf::ORIGIN_HOST => Err(Error::arbitrary(format!("refused by the host: {}", e))),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(Value::Null),
    }
}

fn field_fn(ctx: &mut Context) -> Result {
    Ok(obj! {"old" => ctx.old(), "new" => ctx.new()})
}

/// Sleeps until the host stops it and counts its rounds.
fn monitor(ctx: &mut Context) -> Result {
    let mut rounds = 0;
    while !ctx.sleep_until_stopped(Duration::from_secs(2)) {
        rounds += 1;
    }
    Ok(obj! {"rounds" => rounds, "reason" => ctx.stop_reason()})
}

/// Gives response-validate.json.
fn check(ctx: &mut Context) -> Result {
    if ctx.spec().str_at("field").is_empty() {
        if let Some(a) = ctx.admission_mut() {
            a.warnings.push("field is deprecated".into());
        }
        return Err(Error::admission("spec.field must not be empty", 422));
    }
    Ok(Value::Null)
}

fn fixture(name: &str) -> String {
    let path = format!("{}/../../abi/testdata/{}", env!("CARGO_MANIFEST_DIR"), name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path, e))
}

/// Compares compact JSON from the SDK, indented as the fixtures are (two
/// spaces, then a newline), with a fixture.
fn same_bytes(name: &str, compact: &str) {
    Value::parse(compact).unwrap_or_else(|e| panic!("{}: the SDK's output is not JSON: {}\n{}", name, e, compact));
    let got = indent(compact) + "\n";
    let want = fixture(name);
    assert!(got == want, "{}: the SDK produces\n{}\nwant\n{}", name, got, want);
}

fn harness() -> Host {
    Host::new(kopf::module!(register))
}

fn example() -> Value {
    obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample",
        "metadata" => obj!{"name" => "kopf-example-1", "namespace" => "default", "labels" => obj!{"app" => "demo"}},
        "spec" => obj!{"field" => "new", "items" => arr![]}}
}

#[test]
fn manifest() {
    same_bytes("manifest.json", &harness().manifest_json());
}

#[test]
fn response_success_and_log() {
    let h = harness();
    let mut req = h.request("create_fn", Some(&example()), None);
    req.as_object_mut().unwrap().insert("memo".into(), obj! {"seen" => 1});
    let res = h.call(&req);
    same_bytes("response-success.json", &res.raw);
    let calls = h.calls();
    assert_eq!(calls.len(), 1, "{:?}", calls);
    assert_eq!(calls[0].func, "log");
    same_bytes("log.json", &calls[0].request);
}

#[test]
fn response_temporary() {
    let h = harness();
    let req = Value::parse(&fixture("request-update.json")).unwrap();
    same_bytes("response-temporary.json", &h.call(&req).raw);
}

#[test]
fn response_validate() {
    let h = harness();
    let req = Value::parse(&fixture("request-validate.json")).unwrap();
    let res = h.call(&req);
    same_bytes("response-validate.json", &res.raw);
    assert!(!res.allowed());
}

#[test]
fn kube_response_forbidden() {
    let h = harness();
    let res = h.run("delete_fn", &example(), None);
    let calls = h.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].func, "kube_request");
    same_bytes("kube-response-forbidden.json", calls[0].reply.as_deref().unwrap());
    let msg = res.outcome.unwrap_err().to_string();
    assert!(msg.contains("refused by the host: kopf: delete pods default/kopf-example-1-child"), "{}", msg);
}

#[test]
fn kube_request_apply() {
    // kube-request.json: a server-side apply with the module's field manager.
    fn apply(ctx: &mut Context) -> Result {
        let child = obj! {"apiVersion" => "v1", "kind" => "Pod", "metadata" => obj!{"name" => format!("{}-child", ctx.name())}};
        ctx.client("", "v1", "pods").namespace(ctx.namespace()).apply(&child)?;
        Ok(Value::Null)
    }
    let h = Host::new(Module::build("kopfexample", "", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "apply", apply);
        m.permit("", "pods", &["patch"]);
    }));
    let res = h.run("apply", &example(), None);
    assert_eq!(res.outcome, Ok(Value::Null));
    same_bytes("kube-request.json", &h.calls()[0].request);
    assert_eq!(h.object("", "pods", "default", "kopf-example-1-child").unwrap().str_at("kind"), "Pod");
}

#[test]
fn field_when_daemon_timer_startup() {
    let h = harness();
    let mut old = example();
    old.set_path("spec.field", "old");
    // field_fn wants an owner annotation: the host would not call it
    // without one, and neither does run (unless forced).
    assert_eq!(h.why_not("field_fn/spec.field", &example(), Some(&old)), "its annotations filter wants owner present, the object has none");
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.run("field_fn/spec.field", &example(), Some(&old))));
    assert!(refused.is_err());
    let mut obj = example();
    obj.set_path("metadata.annotations.owner", "me");
    old.set_path("metadata.annotations.owner", "me");
    let res = h.run("field_fn/spec.field", &obj, Some(&old));
    assert_eq!(res.outcome, Ok(obj! {"old" => "old", "new" => "new"}));
    h.force(true);
    assert_eq!(h.run("field_fn/spec.field", &example(), Some(&old)).outcome, Ok(obj! {"old" => "old", "new" => "new"}));
    h.force(false);
    assert!(h.matches("monitor", &example(), None));
    let mut other = example();
    other.set_path("metadata.labels.app", "other");
    assert!(!h.matches("monitor", &other, None));
    h.stop_after(2, "deleted");
    let res = h.run("monitor", &example(), None);
    assert_eq!(res.outcome, Ok(obj! {"rounds" => 2, "reason" => "deleted"}));
    assert_eq!(h.sleeps(), vec![2.0, 2.0, 2.0]);
    assert_eq!(h.run("ping", &example(), None).outcome, Ok("pong".into()));
    assert_eq!(h.call(&h.request("configure", None, None)).outcome, Ok(Value::Null));
}
