//! Outbound HTTP (`ctx.http`) in the test kit: served by the test's
//! function for hosts the manifest allows (globs, as the host matches
//! them); any other host fails the call, as the real host does.

use kopf::testing::Host;
use kopf::{obj, Context, HttpRequest, HttpResponse, Module, Result, Value};

fn fetch(ctx: &mut Context) -> Result {
    let url = ctx.param().as_str().unwrap_or("").to_string();
    let resp = ctx.http(&HttpRequest::post(&url, "ping").header("X-Guest", "kopf"))?;
    Ok(obj! {"status" => resp.status, "ok" => resp.ok(), "json" => resp.json().unwrap_or(Value::Null)})
}

fn harness() -> Host {
    Host::new(Module::build("http", "0.1.0", |m| {
        m.allow_hosts(&["api.example.com", "*.svc.cluster.local"]);
        m.on_create("kopf.dev", "v1", "kopfexamples", "fetch", fetch);
    }))
}

fn call(h: &Host, url: &str) -> kopf::testing::Result {
    let mut req = h.request("fetch", Some(&obj! {"metadata" => obj!{"name" => "x"}}), None);
    req.as_object_mut().unwrap().insert("param".into(), Value::from(url));
    h.call(&req)
}

#[test]
fn allowed_hosts_are_served_by_the_test() {
    let h = harness();
    h.http(|req| {
        let seen = format!("{} {} {} {}", req.method, req.url, req.headers["X-Guest"], String::from_utf8_lossy(&req.body));
        HttpResponse { status: 200, body: obj! {"seen" => seen}.to_string().into_bytes(), ..Default::default() }
    });
    for url in ["https://api.example.com/v1/quota", "http://db.ns.svc.cluster.local:8080/x"] {
        let res = call(&h, url);
        assert_eq!(res.outcome, Ok(obj! {"status" => 200, "ok" => true, "json" => obj!{"seen" => format!("POST {} kopf ping", url)}}));
    }
    let calls: Vec<String> = h.calls().into_iter().filter(|c| c.func == "http_request").map(|c| c.request).collect();
    assert_eq!(calls[0], r#"{"headers":{"X-Guest":"kopf"},"method":"POST","url":"https://api.example.com/v1/quota"}"#);
}

#[test]
fn a_response_of_any_status_is_a_response() {
    let h = harness();
    h.http(|_| HttpResponse { status: 404, ..Default::default() });
    assert_eq!(call(&h, "https://api.example.com/missing").outcome, Ok(obj! {"status" => 404, "ok" => false, "json" => Value::Null}));
}

#[test]
fn without_a_server_the_request_is_an_error() {
    let h = harness();
    let res = call(&h, "https://api.example.com/x");
    assert_eq!(res.outcome, Err(kopf::Error::arbitrary("kopf: POST https://api.example.com/x: the test serves no outbound HTTP: call Host::http")));
}

#[test]
fn other_hosts_fail_the_call() {
    let h = harness();
    h.http(|_| HttpResponse { status: 200, ..Default::default() });
    for url in ["https://example.com/", "https://api.example.com.evil.net/", "http://svc.cluster.local/"] {
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call(&h, url)));
        let msg = failed.err().and_then(|e| e.downcast_ref::<String>().cloned()).unwrap_or_default();
        assert!(msg.contains(&format!("the request to {} is not allowed", url)), "{}: {:?}", url, msg);
    }
}
