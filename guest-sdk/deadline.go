package kopf

import (
	"context"
	"time"
)

// Context is the handler's deadline as a context.Context, for libraries
// that take one: the sooner of the host's limit for this call
// (wasm.callTimeout, or an admission review's timeout) and, with a
// [Timeout] option, the first attempt's start plus the timeout (Kopf's
// timeout=: after it the host fails the handler instead of retrying). A
// daemon's has only its Timeout. The context is cancelled when the call
// returns.
func (c *Context) Context() context.Context {
	if c.goctx == nil {
		c.goctx, c.cancel = context.Background(), func() {}
		if d, ok := c.Deadline(); ok {
			c.goctx, c.cancel = context.WithDeadline(context.Background(), d)
		}
	}
	return c.goctx
}

// Deadline is when this call must be over — the host's limit for the call
// or the handler's [Timeout], whichever comes first — and whether there is
// one.
func (c *Context) Deadline() (time.Time, bool) {
	d := c.req.Deadline
	if t := c.handler.spec.Options.Timeout; t > 0 && !c.req.Started.IsZero() {
		if own := c.req.Started.Add(time.Duration(t * float64(time.Second))); d.IsZero() || own.Before(d) {
			d = own
		}
	}
	return d, !d.IsZero()
}

// release cancels the call's context, if a handler asked for it.
func (c *Context) release() {
	if c.cancel != nil {
		c.cancel()
	}
}
