package kube

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestRetryReportsTimeout: an attempt that runs out of its own timeout (a
// silent connection) calls its tracker's timeout before the retry, so that the retry
// dials a new connection; other failures do not, nor does the end of the
// caller's context.
func TestRetryReportsTimeout(t *testing.T) {
	silent := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name     string
		attempt  func(ctx context.Context) error
		caller   time.Duration // the caller's deadline; 0: none
		timeouts int
	}{
		{"silent", silent, 0, 2},
		{"refused", func(context.Context) error { return apierrors.NewServiceUnavailable("later") }, 0, 0},
		{"the caller's deadline", silent, 10 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, timeout := t.Context(), 10*time.Millisecond
			if tt.caller > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.caller)
				defer cancel()
				timeout = time.Minute
			}
			timeouts := 0
			r := retrier{backoffs: []time.Duration{0}, timeout: timeout, track: func(ctx context.Context) (context.Context, func()) {
				return ctx, func() { timeouts++ }
			}}
			err := r.do(ctx, func(err error) error { return wrapAPI(reqInfo{verb: "patch"}, err) }, tt.attempt)
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("err = %v, want ErrUnavailable", err)
			}
			if timeouts != tt.timeouts {
				t.Errorf("timeout reported %d times, want %d", timeouts, tt.timeouts)
			}
		})
	}
}
