package wasmrt

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/tetratelabs/wazero/api"
	"golang.org/x/time/rate"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Host does the work behind the host functions for one call: the caller of
// [Module.Handle] supplies it, bound to the object being handled. The
// runtime has already checked a Kubernetes request against the module's
// permissions when it reaches Kube. Failures are reported in the replies
// (an [abi.HostError]), never by panicking; a panic is recovered and
// reported to the guest as a 500.
//
// Embed [NoHost] to implement only some of the methods.
type Host interface {
	// PostEvent posts a Kubernetes Event about the object being handled.
	PostEvent(ctx context.Context, event abi.EventRequest) error
	// Kube carries out a Kubernetes API request.
	Kube(ctx context.Context, req abi.KubeRequest) abi.KubeResponse
	// IndexLookup reads an index of the module.
	IndexLookup(ctx context.Context, req abi.IndexLookupRequest) abi.IndexLookupResponse
	// SleepUntilStopped blocks for up to d, or until the daemon or timer
	// being run is asked to stop, or until ctx ends.
	SleepUntilStopped(ctx context.Context, d time.Duration) abi.SleepResponse
	// IsStopped tells whether the daemon or timer being run is asked to stop.
	IsStopped(ctx context.Context) abi.SleepResponse
}

// NoHost is a [Host] that offers nothing: events and Kubernetes requests
// and index look-ups fail with a 501 "not available" error, sleeps just
// sleep (until ctx ends) and nothing is ever asked to stop. A nil Host
// passed to [Module.Handle] behaves as NoHost.
type NoHost struct{}

var _ Host = NoHost{}

// PostEvent implements [Host].
func (NoHost) PostEvent(context.Context, abi.EventRequest) error {
	return unavailable(abi.HostPostEvent)
}

// Kube implements [Host].
func (NoHost) Kube(context.Context, abi.KubeRequest) abi.KubeResponse {
	return abi.KubeResponse{Error: unavailable(abi.HostKubeRequest)}
}

// IndexLookup implements [Host].
func (NoHost) IndexLookup(context.Context, abi.IndexLookupRequest) abi.IndexLookupResponse {
	return abi.IndexLookupResponse{Error: unavailable(abi.HostIndexLookup)}
}

// SleepUntilStopped implements [Host].
func (NoHost) SleepUntilStopped(ctx context.Context, d time.Duration) abi.SleepResponse {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return abi.SleepResponse{}
}

// IsStopped implements [Host].
func (NoHost) IsStopped(context.Context) abi.SleepResponse { return abi.SleepResponse{} }

func unavailable(fn string) *abi.HostError {
	return &abi.HostError{
		Code:    http.StatusNotImplemented,
		Reason:  "NotAvailable",
		Message: fmt.Sprintf("%s is not available in this call", fn),
		Origin:  abi.OriginHost,
	}
}

// call is what the host functions know about the call in progress; it
// travels in the call's context.
// LogAttrser is a [Host] that adds attributes to its guest's log records
// (the execution layer's processing cycle id).
type LogAttrser interface {
	LogAttrs() []slog.Attr
}

type call struct {
	module  *Module
	handler string
	req     *abi.Request // nil for the manifest call
	host    Host
	kernel  *kernel    // of the instance called
	memory  api.Memory // the linear memory of the instance called

	logs        *rate.Limiter // the call's log records, made at its first
	droppedLogs int           // records dropped past logs
}

// mayLog tells whether the call may write one more log record under
// Options.LogRate and LogBurst; its limiter is made at the first record,
// so a call that logs nothing costs nothing. Calls outside a module's
// handler calls (the manifest, a pre-initialisation) are unbounded.
func (c *call) mayLog(o Options) bool {
	if c.module == nil || o.LogRate <= 0 {
		return true
	}
	if c.logs == nil {
		c.logs = rate.NewLimiter(rate.Limit(o.LogRate), o.LogBurst)
	}
	return c.logs.Allow()
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// callFrom returns the call in progress; host functions called outside a
// handler call (e.g. from the manifest export) get one with no host.
func callFrom(ctx context.Context) *call {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		return c
	}
	return &call{host: NoHost{}}
}

func (c *call) moduleName() string {
	if c.module == nil {
		return ""
	}
	return c.module.manifest.Module.Name
}

// kernelOrFault returns the kernel of the instance called; a kernel
// function called outside a call (e.g. while the guest initialises) fails
// the guest.
func (c *call) kernelOrFault() *kernel {
	if c.kernel == nil {
		kernelFault("the Extism kernel is not available outside a call of an export")
	}
	return c.kernel
}

// allowedHosts returns the outbound HTTP hosts the module declared.
func (c *call) allowedHosts() []string {
	if c.module == nil {
		return nil
	}
	return c.module.manifest.Permissions.Hosts
}

func (c *call) permissions() []abi.KubePermission {
	if c.module == nil {
		return nil
	}
	return c.module.manifest.Permissions.Kubernetes
}

// logAttrs returns the context that the host adds to a guest's log record.
func (c *call) logAttrs() []slog.Attr {
	attrs := make([]slog.Attr, 0, 8)
	if c.module != nil {
		attrs = append(attrs, slog.String("module", c.module.name))
	}
	if c.handler != "" {
		attrs = append(attrs, slog.String("handler", c.handler))
	}
	if r := c.req; r != nil {
		if r.Namespace != "" {
			attrs = append(attrs, slog.String("namespace", r.Namespace))
		}
		if r.Name != "" {
			attrs = append(attrs, slog.String("name", r.Name))
		}
		if r.UID != "" {
			attrs = append(attrs, slog.String("uid", r.UID))
		}
	}
	if la, ok := c.host.(LogAttrser); ok {
		attrs = append(attrs, la.LogAttrs()...)
	}
	return attrs
}
