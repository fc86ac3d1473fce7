package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestWrapAPIClasses(t *testing.T) {
	gr := schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}
	tests := []struct {
		name      string
		err       error
		jsonPatch bool
		class     error
		code      int
	}{
		{"not found", apierrors.NewNotFound(gr, "x"), false, ErrGone, 404},
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("the object has been modified")), false, ErrConflict, 409},
		{"already exists", apierrors.NewAlreadyExists(gr, "x"), false, ErrExists, 409},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "KopfExample"}, "x", nil), false, ErrInvalid, 422},
		{"bad request", apierrors.NewBadRequest("nope"), false, ErrInvalid, 400},
		{"unapplied json patch", unappliedPatch(), true, ErrConflict, 422},
		{"422 on a merge patch", unappliedPatch(), false, ErrInvalid, 422},
		{"invalid field in a json patch", apierrors.NewInvalid(schema.GroupKind{Kind: "KopfExample"}, "x",
			field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "bad key!", "bad")}), true, ErrInvalid, 422},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("rbac")), false, ErrForbidden, 403},
		{"unauthorized", apierrors.NewUnauthorized("who"), false, ErrForbidden, 401},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 3), false, ErrUnavailable, 429},
		{"internal", apierrors.NewInternalError(errors.New("etcd")), false, ErrUnavailable, 500},
		{"unavailable", apierrors.NewServiceUnavailable("later"), false, ErrUnavailable, 503},
		{"server timeout", apierrors.NewServerTimeout(gr, "patch", 1), false, ErrUnavailable, 500},
		{"gateway timeout", apierrors.NewTimeoutError("slow", 1), false, ErrUnavailable, 504},
		{"413", &apierrors.StatusError{ErrStatus: metav1.Status{Code: 413, Reason: metav1.StatusReasonRequestEntityTooLarge,
			Message: "Request entity too large: limit is 3145728"}}, false, ErrTooLarge, 413},
		{"annotations too long", apierrors.NewInvalid(schema.GroupKind{Kind: "KopfExample"}, "x",
			field.ErrorList{field.TooLong(field.NewPath("metadata", "annotations"), "", 262144)}), true, ErrTooLarge, 422},
		{"etcd request too large", apierrors.NewInternalError(errors.New("etcdserver: request is too large")), false, ErrTooLarge, 500},
		{"etcd grpc limit", apierrors.NewInternalError(errors.New("rpc error: code = ResourceExhausted desc = trying to send message larger than max (2097882 vs. 2097152)")),
			false, ErrTooLarge, 500},
		{"method not allowed", apierrors.NewMethodNotSupported(gr, "patch"), false, ErrRequest, 405},
		{"connection refused", fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED), false, ErrUnavailable, 0},
		{"unexpected eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), false, ErrUnavailable, 0},
		{"deadline", context.DeadlineExceeded, false, ErrUnavailable, 0},
		{"other", errors.New("boom"), false, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wrapAPI(reqInfo{verb: "patch", resource: "kopfexamples.v1.kopf.dev", namespace: "ns", name: "x", jsonPatch: tt.jsonPatch}, tt.err)
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("wrapAPI(%v) = %T, want *APIError", tt.err, err)
			}
			if apiErr.Code != tt.code {
				t.Errorf("code = %d, want %d", apiErr.Code, tt.code)
			}
			for _, class := range []error{ErrGone, ErrConflict, ErrExists, ErrInvalid, ErrForbidden, ErrUnavailable, ErrRequest, ErrTooLarge} {
				if got := errors.Is(err, class); got != (class == tt.class) {
					t.Errorf("errors.Is(%v, %v) = %v", err, class, got)
				}
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the error does not wrap the original")
			}
			if !strings.HasPrefix(err.Error(), "patch kopfexamples.v1.kopf.dev ns/x: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

// unappliedPatch is what the API server answers to a JSON patch that does
// not apply (a failed test, a missing path): 422 Invalid, and no causes.
func unappliedPatch() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: "the server rejected our request due to an error in our request",
		Details: &metav1.StatusDetails{},
	}}
}

func TestWrapAPIPassesCancel(t *testing.T) {
	if err := wrapAPI(reqInfo{}, context.Canceled); err != context.Canceled {
		t.Errorf("wrapAPI(Canceled) = %v", err)
	}
	if err := wrapAPI(reqInfo{}, nil); err != nil {
		t.Errorf("wrapAPI(nil) = %v", err)
	}
}

func TestRetry(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("later")
	tests := []struct {
		name     string
		failures []error
		backoffs int
		calls    int
		class    error
	}{
		{"success", nil, 3, 1, nil},
		{"transient then success", []error{unavailable, unavailable}, 3, 3, nil},
		{"backoffs used up", []error{unavailable, unavailable, unavailable}, 2, 3, ErrUnavailable},
		{"no retry of a conflict", []error{apierrors.NewConflict(schema.GroupResource{}, "x", errors.New("c"))}, 3, 1, ErrConflict},
		{"no retry of forbidden", []error{apierrors.NewForbidden(schema.GroupResource{}, "x", errors.New("c"))}, 3, 1, ErrForbidden},
		{"retries off", []error{unavailable}, 0, 1, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := retrier{backoffs: make([]time.Duration, tt.backoffs)}
			calls := 0
			err := r.do(t.Context(), func(err error) error { return wrapAPI(reqInfo{verb: "get"}, err) },
				func(context.Context) error {
					calls++
					if calls <= len(tt.failures) {
						return tt.failures[calls-1]
					}
					return nil
				})
			if calls != tt.calls {
				t.Errorf("calls = %d, want %d", calls, tt.calls)
			}
			if (tt.class == nil) != (err == nil) || (tt.class != nil && !errors.Is(err, tt.class)) {
				t.Errorf("err = %v, want class %v", err, tt.class)
			}
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	var waits []time.Duration
	ctx, cancel := context.WithCancel(t.Context())
	r := retrier{
		backoffs: []time.Duration{time.Millisecond},
		onRetry: func(_ error, wait time.Duration, _ int) {
			waits = append(waits, wait)
			cancel() // the wait is interrupted: only its length matters here
		},
	}
	calls := 0
	err := r.do(ctx, func(err error) error { return wrapAPI(reqInfo{}, err) }, func(context.Context) error {
		calls++
		return apierrors.NewTooManyRequests("slow down", 2)
	})
	if !errors.Is(err, ErrUnavailable) || calls != 1 || len(waits) != 1 || waits[0] != 2*time.Second {
		t.Errorf("err %v, calls %d, waits %v; want ErrUnavailable, 1 call, a 2s wait", err, calls, waits)
	}
}
