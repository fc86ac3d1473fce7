package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestRetryClosesIdleAfterTimeout: an attempt that runs out of its own
// timeout (a silent connection) calls onTimeout before the retry, so that
// the retry dials a new connection; other failures do not.
func TestRetryClosesIdleAfterTimeout(t *testing.T) {
	tests := []struct {
		name     string
		attempt  func(ctx context.Context) error
		timeouts int
	}{
		{"silent", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, 2},
		{"refused", func(context.Context) error { return apierrors.NewServiceUnavailable("later") }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeouts := 0
			r := retrier{backoffs: []time.Duration{0}, timeout: 10 * time.Millisecond, onTimeout: func() { timeouts++ }}
			err := r.do(t.Context(), func(err error) error { return wrapAPI(reqInfo{verb: "patch"}, err) }, tt.attempt)
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("err = %v, want ErrUnavailable", err)
			}
			if timeouts != tt.timeouts {
				t.Errorf("onTimeout called %d times, want %d", timeouts, tt.timeouts)
			}
		})
	}
}
