//! Handler outcomes (Kopf's TemporaryError, PermanentError, AdmissionError,
//! any other error) and the errors of host requests.

use std::fmt;
use std::time::Duration;

/// How a handler failed. Return it from a handler (`Err(...)`); `?` turns
/// any `std::error::Error` (an [`ApiError`] among them) into an
/// [`Error::Arbitrary`], whose fate the handler's errors mode decides.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// Kopf's TemporaryError: retry after `delay` (None: the handler's
    /// backoff; `Some(Duration::ZERO)`: at once).
    Temporary { message: String, delay: Option<Duration> },
    /// Kopf's PermanentError: no retries for this cause.
    Permanent { message: String },
    /// Kopf's AdmissionError: deny a webhook request with an HTTP code
    /// (500 when 0); elsewhere a permanent error.
    Admission { message: String, code: u16 },
    /// Any other error: the handler's errors mode decides.
    Arbitrary { message: String },
    /// Kopf's HandlerChildrenRetry: the handler has unfinished
    /// sub-handlers ([`Context::execute`](crate::Context::execute) returns
    /// it). Not a failure: the host calls the handler again when the
    /// earliest of them is due.
    ChildrenRetry,
}

impl Error {
    /// A temporary error with the host's default delay.
    pub fn temporary(message: impl Into<String>) -> Error {
        Error::Temporary { message: message.into(), delay: None }
    }
    /// A temporary error retried after `delay`.
    pub fn temporary_after(message: impl Into<String>, delay: Duration) -> Error {
        Error::Temporary { message: message.into(), delay: Some(delay) }
    }
    /// A permanent error.
    pub fn permanent(message: impl Into<String>) -> Error {
        Error::Permanent { message: message.into() }
    }
    /// An admission denial with an HTTP code (0 means 500).
    pub fn admission(message: impl Into<String>, code: u16) -> Error {
        Error::Admission { message: message.into(), code }
    }
    /// An arbitrary error.
    pub fn arbitrary(message: impl Into<String>) -> Error {
        Error::Arbitrary { message: message.into() }
    }
    /// The error's message.
    pub fn message(&self) -> &str {
        match self {
            Error::Temporary { message, .. }
            | Error::Permanent { message }
            | Error::Admission { message, .. }
            | Error::Arbitrary { message } => message,
            Error::ChildrenRetry => "unfinished sub-handlers",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(e: E) -> Error {
        Error::arbitrary(e.to_string())
    }
}

/// Who refused a host request.
pub const ORIGIN_HOST: &str = "host";
pub const ORIGIN_CLUSTER: &str = "cluster";

/// A failed host request: a Kubernetes request, an Event, an index
/// look-up. `code` is an HTTP status code and `origin` says who refused
/// ("host": the module's declared permissions or the host's limits;
/// "cluster": the API server).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub code: u16,
    pub reason: String,
    pub message: String,
    pub origin: String,
    /// The request, e.g. "get pods default/x".
    pub call: String,
}

impl ApiError {
    pub fn is_not_found(&self) -> bool {
        self.code == 404
    }
    pub fn is_already_exists(&self) -> bool {
        self.code == 409 && self.reason == "AlreadyExists"
    }
    pub fn is_conflict(&self) -> bool {
        self.code == 409 && self.reason != "AlreadyExists"
    }
    pub fn is_forbidden(&self) -> bool {
        self.code == 403
    }
    pub(crate) fn local(call: &str, message: String) -> ApiError {
        ApiError { code: 0, reason: String::new(), message, origin: String::new(), call: call.to_string() }
    }
}

impl fmt::Display for ApiError {
    /// As the Go SDK: "kopf: get pods default/x: message (404 NotFound from the cluster)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code == 0 && self.reason.is_empty() && self.origin.is_empty() {
            // Not an answer of the host or the cluster: the request did not get one.
            return write!(f, "kopf: {}: {}", self.call, self.message);
        }
        let mut status = format!("{} {}", self.code, self.reason).trim().to_string();
        if !self.origin.is_empty() {
            status.push_str(" from the ");
            status.push_str(&self.origin);
        }
        write!(f, "kopf: {}: {} ({})", self.call, self.message, status)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_error() {
        let e = ApiError { code: 409, reason: "AlreadyExists".into(), message: "x exists".into(), origin: ORIGIN_CLUSTER.into(), call: "create pods ns/x".into() };
        assert!(e.is_already_exists() && !e.is_conflict() && !e.is_not_found());
        assert_eq!(e.to_string(), "kopf: create pods ns/x: x exists (409 AlreadyExists from the cluster)");
        let r: Result<(), Error> = Err(e).map_err(Error::from);
        assert_eq!(r.unwrap_err(), Error::arbitrary("kopf: create pods ns/x: x exists (409 AlreadyExists from the cluster)"));
    }
}
