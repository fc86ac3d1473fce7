package kopf

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// errNoReply is returned when a host function that must reply did not.
var errNoReply = errors.New("the host function returned no reply")

// hostCall sends a request to a host function and decodes its reply.
func (c *Context) hostCall(fn string, request, reply any) error {
	raw, err := json.Marshal(request)
	if err != nil {
		return fmt.Errorf("encode the %s request: %w", fn, err)
	}
	out := c.host.Call(fn, raw)
	if len(out) == 0 {
		return fmt.Errorf("%s: %w", fn, errNoReply)
	}
	if err := json.Unmarshal(out, reply); err != nil {
		return fmt.Errorf("decode the %s reply: %w", fn, err)
	}
	return nil
}

// Event types for [Context.PostEvent].
const (
	EventNormal  = abi.EventNormal
	EventWarning = abi.EventWarning
	// EventError is the type of [Context.Exception]'s Events.
	EventError = abi.EventError
)

// PostEvent posts a Kubernetes Event about the object being handled, as
// Kopf's kopf.event/info/warn; [Context.PostEventAbout] posts about others.
func (c *Context) PostEvent(eventType, reason, message string) error {
	return c.postEvent(abi.EventRequest{Type: eventType, Reason: reason, Message: message})
}

func (c *Context) postEvent(ev abi.EventRequest) error {
	reason := ev.Reason
	var reply abi.HostReply
	if err := c.hostCall(abi.HostPostEvent, ev, &reply); err != nil {
		return fmt.Errorf("kopf: post event: %w", err)
	}
	if reply.Error != nil {
		return apiError("post event "+reason, reply.Error)
	}
	return nil
}

// IndexLookup asks the host for the values stored under key in the index
// of the handler with id index.
func (c *Context) IndexLookup(index string, key any) ([]any, error) {
	rawKey, err := json.Marshal(key)
	if err != nil {
		return nil, fmt.Errorf("kopf: index %s: encode the key: %w", index, err)
	}
	var reply abi.IndexLookupResponse
	if err := c.hostCall(abi.HostIndexLookup, abi.IndexLookupRequest{Index: index, Key: rawKey}, &reply); err != nil {
		return nil, fmt.Errorf("kopf: index %s: %w", index, err)
	}
	if reply.Error != nil {
		return nil, apiError("index "+index, reply.Error)
	}
	out := make([]any, 0, len(reply.Values))
	for _, raw := range reply.Values {
		var v any
		_ = json.Unmarshal(raw, &v)
		out = append(out, v)
	}
	return out, nil
}

// Stopped reports whether the daemon or timer is asked to stop. A host that
// cannot answer counts as stopping, so that a daemon loop ends.
func (c *Context) Stopped() bool {
	var reply abi.SleepResponse
	if err := c.hostCall(abi.HostIsStopped, struct{}{}, &reply); err != nil {
		return true
	}
	c.stop = reply.Reason
	return reply.Stopped
}

// SleepUntilStopped blocks for d or until the daemon or timer is asked to
// stop, and reports whether it is (Kopf's stopped.wait(d)).
func (c *Context) SleepUntilStopped(d time.Duration) bool {
	var reply abi.SleepResponse
	if err := c.hostCall(abi.HostSleepUntilStopped, abi.SleepRequest{Seconds: d.Seconds()}, &reply); err != nil {
		return true
	}
	c.stop = reply.Reason
	return reply.Stopped
}

// StopReason says why the daemon is asked to stop ("deleted",
// "filters-mismatch", "exiting", ...), after Stopped or SleepUntilStopped
// said it is.
func (c *Context) StopReason() string { return c.stop }
