//! A Rust test guest for outbound HTTP (`ctx.http`): the handler "get"
//! sends a GET with the header X-Guest: kopf to the URL in its param and
//! returns the status, the body and the X-Reply header. Its manifest
//! allows HTTP to 127.0.0.1 only. The host's tests
//! (host/internal/wasmrt, TestRustOutboundHTTP) serve it, as they do the
//! Go guest testguests/extism through the Extism PDK.

use kopf::{obj, Context, HttpRequest, Module, Result};

kopf::export!(register);

pub fn register(m: &mut Module) {
    m.module("outbound-rust", "0.1.0");
    m.allow_hosts(&["127.0.0.1"]);
    m.on_create("kopf.dev", "v1", "kopfexamples", "get", get);
}

fn get(ctx: &mut Context) -> Result {
    let url = ctx.param().as_str().unwrap_or("").to_string();
    let resp = ctx.http(&HttpRequest::get(&url).header("X-Guest", "kopf"))?;
    Ok(obj! {"status" => resp.status, "body" => resp.text(), "header" => resp.headers.get("x-reply").cloned().unwrap_or_default()})
}

#[cfg(test)]
mod tests {
    use super::*;
    use kopf::testing::Host;
    use kopf::{HttpResponse, Value};

    #[test]
    fn get_reports_the_response() {
        let h = Host::new(kopf::module!(register));
        h.http(|req| {
            assert_eq!((req.method.as_str(), req.headers["X-Guest"].as_str()), ("GET", "kopf"));
            HttpResponse { status: 202, headers: [("x-reply".to_string(), "pong".to_string())].into_iter().collect(), body: b"hello guest".to_vec() }
        });
        let mut req = h.request("get", Some(&obj! {"metadata" => obj!{"name" => "x"}}), None);
        req.as_object_mut().unwrap().insert("param".into(), Value::from("http://127.0.0.1:8080/ping"));
        assert_eq!(h.call(&req).outcome, Ok(obj! {"status" => 202, "body" => "hello guest", "header" => "pong"}));
    }
}
