//! The host's log level (the request's logLevel) drops the records below it
//! in the guest, unsent; without one, or with one the SDK does not know,
//! every record goes to the host, which filters.

use kopf::testing::Host;
use kopf::{obj, Context, Module, Result, Value};

fn logs(ctx: &mut Context) -> Result {
    ctx.debug("d", ());
    ctx.info("i", ());
    ctx.warn("w", ());
    ctx.error("e", ());
    Ok(Value::Null)
}

fn module() -> Module {
    Module::build("loglevel", "0.1.0", |m| {
        m.on_create("kopf.dev", "v1", "kopfexamples", "logs", logs);
    })
}

#[test]
fn records_below_the_hosts_level_are_not_sent() {
    let body = obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample", "metadata" => obj!{"name" => "a", "namespace" => "default"}};
    let cases: [(&str, &[&str]); 6] = [
        ("", &["debug", "info", "warning", "error"]),
        ("debug", &["debug", "info", "warning", "error"]),
        ("info", &["info", "warning", "error"]),
        ("warning", &["warning", "error"]),
        ("error", &["error"]),
        ("trace", &["debug", "info", "warning", "error"]),
    ];
    for (level, want) in cases {
        let h = Host::new(module());
        let mut req = h.request("logs", Some(&body), None);
        if !level.is_empty() {
            req.as_object_mut().unwrap().insert("logLevel".into(), Value::from(level));
        }
        h.call(&req);
        let got: Vec<String> = h.logs().iter().map(|r| r["level"].as_str().unwrap_or("").to_string()).collect();
        assert_eq!(got, want, "logLevel {:?}", level);
    }
}
