package kube

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// retrier runs requests again after transient failures.
type retrier struct {
	backoffs []time.Duration
	timeout  time.Duration // per attempt
	onRetry  func(err error, wait time.Duration, attempt int)
	// track, if set, follows the connection of each attempt: it returns
	// the attempt's context and what to call when the attempt ran out of
	// its timeout without an answer (timedOut): its connection may have
	// gone silent (conns.go).
	track func(ctx context.Context) (context.Context, func())
	// retryable picks the errors worth another attempt; nil means those
	// of class [ErrUnavailable].
	retryable func(error) bool
}

// do calls fn until it succeeds, fails with an error that is not
// [ErrUnavailable], the backoffs are used up, or ctx ends. Each attempt gets
// its own timeout. wrap turns fn's raw error into the package's error.
// The wait before a retry is the backoff, or the server's Retry-After when
// that is longer.
func (r retrier) do(ctx context.Context, wrap func(error) error, fn func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		actx, onTimeout := ctx, func() {}
		if r.track != nil {
			actx, onTimeout = r.track(ctx)
		}
		err := wrap(r.once(actx, fn))
		if ctx.Err() == nil && timedOut(err) {
			onTimeout()
		}
		if err == nil || !r.worthRetrying(err) || attempt >= len(r.backoffs) || ctx.Err() != nil {
			return err
		}
		wait := r.backoffs[attempt]
		if after, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(after)*time.Second > wait {
			wait = time.Duration(after) * time.Second
		}
		if r.onRetry != nil {
			r.onRetry(err, wait, attempt+1)
		}
		if !sleep(ctx, wait) {
			return err
		}
	}
}

// single is r with one attempt: no retries, the attempt's timeout and
// its report kept.
func (r retrier) single() retrier {
	r.backoffs = nil
	return r
}

func (r retrier) worthRetrying(err error) bool {
	if r.retryable != nil {
		return r.retryable(err)
	}
	return errors.Is(err, ErrUnavailable)
}

func (r retrier) once(ctx context.Context, fn func(context.Context) error) error {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	return fn(ctx)
}

// sleep waits for d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
