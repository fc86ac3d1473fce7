//! Outbound HTTP to the hosts the module declares with
//! [`Module::allow_hosts`](crate::Module::allow_hosts), over Extism's
//! kernel (http_request, http_status_code, http_headers), as the Go SDK's
//! modules do with the Extism PDK.
//!
//! ```ignore
//! m.allow_hosts(&["api.example.com"]);
//! ...
//! let resp = ctx.http(&HttpRequest::get("https://api.example.com/v1/quota").header("Accept", "application/json"))?;
//! let quota = resp.json()?;
//! ```
//!
//! A request to a host the module did not declare fails the whole call
//! (the host stops it, as Extism does): it is a mistake in the module,
//! not an outcome to handle. The response body is capped by the host
//! (16 MiB).

use std::collections::BTreeMap;

use crate::errors::ApiError;
use crate::json::{ParseError, Value};

/// An outbound HTTP request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpRequest {
    /// GET, POST, PUT, ... (GET when empty).
    pub method: String,
    pub url: String,
    pub headers: BTreeMap<String, String>,
    /// Sent when not empty.
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// A request with a method and a URL.
    pub fn new(method: &str, url: &str) -> HttpRequest {
        HttpRequest { method: method.to_string(), url: url.to_string(), ..HttpRequest::default() }
    }
    /// A GET request.
    pub fn get(url: &str) -> HttpRequest {
        HttpRequest::new("GET", url)
    }
    /// A POST request with a body.
    pub fn post(url: &str, body: impl Into<Vec<u8>>) -> HttpRequest {
        HttpRequest::new("POST", url).body(body)
    }
    /// Sets a header.
    pub fn header(mut self, name: &str, value: &str) -> HttpRequest {
        self.headers.insert(name.to_string(), value.to_string());
        self
    }
    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> HttpRequest {
        self.body = body.into();
        self
    }
    /// Sets a JSON body and its Content-Type.
    pub fn json(self, v: &Value) -> HttpRequest {
        self.header("Content-Type", "application/json").body(v.to_string())
    }

    /// The JSON of Extism's http_request (url, method, headers).
    pub(crate) fn to_json(&self) -> String {
        let mut headers = Value::object();
        for (k, v) in &self.headers {
            headers.as_object_mut().unwrap().insert(k.clone(), Value::from(v.as_str()));
        }
        let method = if self.method.is_empty() { "GET" } else { self.method.as_str() };
        crate::obj! {"url" => self.url.as_str(), "method" => method, "headers" => headers}.to_string()
    }
}

/// The response to an [`HttpRequest`]: any status (a 404 is a response,
/// not an error).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    /// The body parsed as JSON.
    pub fn json(&self) -> Result<Value, ParseError> {
        Value::parse_bytes(&self.body)
    }
    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

impl<'h> crate::Context<'h> {
    /// Sends an outbound HTTP request to a host the module declared with
    /// `allow_hosts` and returns the response, whatever its status. An
    /// error is a request that did not get a response (no connection, a
    /// host that serves no outbound HTTP); a host not declared fails the
    /// whole call.
    pub fn http(&self, req: &HttpRequest) -> Result<HttpResponse, ApiError> {
        let call = format!("{} {}", if req.method.is_empty() { "GET" } else { &req.method }, req.url);
        // In wasm the kernel directly, so that a module without outbound
        // HTTP links none of it; natively the host of the test kit.
        #[cfg(target_arch = "wasm32")]
        let reply = crate::host::wasm::http(req);
        #[cfg(not(target_arch = "wasm32"))]
        let reply = self.host.borrow_mut().http(req);
        reply.map_err(|e| ApiError::local(&call, e))
    }
}

/// Decodes the JSON object of http_headers.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn headers_of(raw: &[u8]) -> BTreeMap<String, String> {
    match Value::parse_bytes(raw) {
        Ok(Value::Object(m)) => m.into_iter().filter_map(|(k, v)| v.as_str().map(|s| (k.to_ascii_lowercase(), s.to_string()))).collect(),
        _ => BTreeMap::new(),
    }
}
