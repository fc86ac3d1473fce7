package kopf

import (
	"context"
	"time"
)

// Context is the handler's deadline as a context.Context, for libraries
// that take one. With a [Timeout] option the deadline is the first
// attempt's start plus the timeout, Kopf's timeout= (after it the host
// fails the handler instead of retrying); without one there is no
// deadline. The context is cancelled when the call returns. The host's
// per-call limit (wasm.callTimeout) is not in it: the host stops a call
// that outlives it whatever the handler does.
func (c *Context) Context() context.Context {
	if c.goctx == nil {
		c.goctx, c.cancel = context.Background(), func() {}
		if d, ok := c.Deadline(); ok {
			c.goctx, c.cancel = context.WithDeadline(context.Background(), d)
		}
	}
	return c.goctx
}

// Deadline is when the handler's [Timeout] runs out, and whether it has
// one.
func (c *Context) Deadline() (time.Time, bool) {
	t := c.handler.spec.Options.Timeout
	if t <= 0 || c.req.Started.IsZero() {
		return time.Time{}, false
	}
	return c.req.Started.Add(time.Duration(t * float64(time.Second))), true
}

// release cancels the call's context, if a handler asked for it.
func (c *Context) release() {
	if c.cancel != nil {
		c.cancel()
	}
}
