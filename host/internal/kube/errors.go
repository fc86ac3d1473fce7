package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Classes of failure. Errors returned by this package wrap at most one of
// them; test with errors.Is.
var (
	// ErrGone: the object does not exist (404). For a patch it means the
	// object was deleted meanwhile, which the reactor does not treat as a
	// failure.
	ErrGone = errors.New("not found") // not "gone": that reads as 410
	// ErrConflict: the object changed since it was read (409), or a JSON
	// patch did not apply to it (422 without field causes: a failed test
	// operation or a path that is gone; the server does not say which).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the server refused the content (422 or 400).
	ErrInvalid = errors.New("invalid")
	// ErrForbidden: the credentials do not allow it (403, 401).
	ErrForbidden = errors.New("forbidden")
	// ErrUnavailable: a transient failure (429, 5xx, a timeout, a lost or
	// refused connection); retried before it is returned.
	ErrUnavailable = errors.New("unavailable")
	// ErrRequest: any other 4xx refusal (405, 406, 415, ...).
	ErrRequest = errors.New("bad request")
	// ErrExists: a create found an object of that name (409 AlreadyExists).
	ErrExists = errors.New("already exists")
	// ErrTooLarge: the write was refused for its size: 413 (the request
	// body), 422 "Too long" (all annotations past 256 KiB), or a 5xx from
	// etcd ("request is too large", gRPC ResourceExhausted: the stored
	// object past --max-request-bytes, 1.5 MiB by default, as a ~2 MiB
	// status PATCH gets on the real control plane). Not retried: the same
	// write would be refused again.
	ErrTooLarge = errors.New("too large")

	// ErrNotServed: no resource of the cluster matches a selector or a
	// group/version/resource.
	ErrNotServed = errors.New("resource not served")
	// ErrAmbiguous: a selector matches resources in more than one group.
	ErrAmbiguous = errors.New("ambiguous resource")
	// ErrConfig: no usable kubeconfig.
	ErrConfig = errors.New("kubeconfig")
	// ErrUnreachable: the API server did not answer.
	ErrUnreachable = errors.New("cluster unreachable")
)

// APIError is a failed request to the API server.
type APIError struct {
	// Verb, Resource ("plural.version.group"), Namespace and Name say what
	// was asked.
	Verb, Resource, Namespace, Name string
	// Code is the HTTP status (0 when no response came back); Reason and
	// Message are the server's (or the transport's).
	Code    int
	Reason  metav1.StatusReason
	Message string

	class error
	err   error
}

// Error names the request, the class, the code and the message on one line.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Verb, e.Resource)
	if e.Name != "" || e.Namespace != "" {
		b.WriteString(" ")
		if e.Namespace != "" {
			b.WriteString(e.Namespace + "/")
		}
		b.WriteString(e.Name)
	}
	if e.class != nil {
		fmt.Fprintf(&b, ": %v", e.class)
	}
	if e.Code != 0 {
		fmt.Fprintf(&b, " (%d)", e.Code)
	}
	fmt.Fprintf(&b, ": %s", oneLine(e.Message))
	return b.String()
}

// Unwrap returns the class and the underlying error.
func (e *APIError) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.class != nil {
		errs = append(errs, e.class)
	}
	if e.err != nil {
		errs = append(errs, e.err)
	}
	return errs
}

// reqInfo names a request for [APIError].
type reqInfo struct {
	verb, resource, namespace, name string
	jsonPatch                       bool
}

// wrapAPI turns an error from client-go into an [*APIError]. Context
// cancellation is returned as it is.
func wrapAPI(info reqInfo, err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	e := &APIError{
		Verb: info.verb, Resource: info.resource,
		Namespace: info.namespace, Name: info.name, err: err,
	}
	var status apierrors.APIStatus
	causes := false
	if errors.As(err, &status) {
		s := status.Status()
		e.Code, e.Reason, e.Message = int(s.Code), s.Reason, withCauses(s)
		causes = s.Details != nil && len(s.Details.Causes) > 0
	} else {
		e.Message = err.Error()
	}
	e.class = classify(e.Code, e.Reason, err, info.jsonPatch && !causes)
	return e
}

// classify picks the class of a failure from its HTTP code, reason and
// underlying error. unapplied says the request was a JSON patch and the
// server named no invalid field: a 422 then means the patch did not apply
// to the object as it is now (a failed test operation, a missing path).
func classify(code int, reason metav1.StatusReason, err error, unapplied bool) error {
	switch {
	case tooLarge(code, err.Error()):
		return ErrTooLarge
	case code == 0:
		if transient(err) {
			return ErrUnavailable
		}
		return nil
	case code == http.StatusNotFound:
		return ErrGone
	case code == http.StatusConflict && reason == metav1.StatusReasonAlreadyExists:
		return ErrExists
	case code == http.StatusConflict:
		return ErrConflict
	case code == http.StatusUnprocessableEntity && unapplied:
		return ErrConflict
	case code == http.StatusUnprocessableEntity || code == http.StatusBadRequest:
		return ErrInvalid
	case code == http.StatusForbidden || code == http.StatusUnauthorized:
		return ErrForbidden
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return ErrUnavailable
	case code >= 400:
		return ErrRequest
	}
	return nil
}

// tooLarge reports whether the server refused a write for its size. The
// API server says so only in words: 413; 422 "Too long: must have at most
// N bytes" (apimachinery's annotation limit; field.TooLong); etcd's
// "etcdserver: request is too large", or gRPC's "ResourceExhausted ...
// larger than max", passed on as a 500.
func tooLarge(code int, msg string) bool {
	switch {
	case code == http.StatusRequestEntityTooLarge:
		return true
	case code == http.StatusUnprocessableEntity:
		return strings.Contains(msg, "Too long") || strings.Contains(msg, "must have at most")
	case code >= 500:
		return strings.Contains(msg, "request is too large") || strings.Contains(msg, "ResourceExhausted") ||
			strings.Contains(msg, "larger than max")
	}
	return false
}

// transient reports whether an error without an HTTP status is worth
// another attempt: timeouts and connections refused, reset or cut short.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.As(err, &netErr):
		return true
	}
	return strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "connection reset")
}

// timedOut reports whether an attempt ran out of its time without an
// answer from the server (a timeout, no HTTP status): the connection it
// waited on may have gone silent, and the client's connections are closed
// before its retry (stall.go). Time spent in the client's own rate limiter
// does not count: no connection was to blame.
func timedOut(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Code != 0 {
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "client rate limiter")
}

// withCauses adds the messages of a status' causes that its message does
// not already contain (a failed JSON-patch test says why only there).
func withCauses(s metav1.Status) string {
	msg := s.Message
	if s.Details == nil {
		return msg
	}
	for _, c := range s.Details.Causes {
		if c.Message != "" && !strings.Contains(msg, c.Message) {
			msg += "; " + c.Message
		}
	}
	return msg
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
