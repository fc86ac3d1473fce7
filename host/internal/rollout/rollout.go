package rollout

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// The roles a version of a module plays; they label metrics and the
// Module resource's status.
const (
	// Stable is the version that handles the objects the canary does not.
	Stable = "stable"
	// Canary is the second version, handling a share of the objects.
	Canary = "canary"
	// Shadow is a version that is called beside the serving one and
	// whose answers are compared, never written.
	Shadow = "shadow"
)

// Bucket is the object's place in [0, 100): the FNV-1a hash of its UID.
// It depends on nothing but the UID, so every host and every restart
// puts an object in the same bucket.
func Bucket(uid string) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return int(h.Sum64() % 100)
}

// InCanary reports whether the object with this UID belongs to a canary
// that handles percent of the objects. Raising the share only moves
// objects from the stable version to the canary, lowering it only back.
func InCanary(uid string, percent int) bool {
	return Bucket(uid) < percent
}

// Counters count one version's calls. Safe for concurrent use.
type Counters struct {
	calls, errors atomic.Int64
}

// Call counts one call; failed when the call failed or its outcome was
// not a success.
func (c *Counters) Call(failed bool) {
	if c == nil {
		return
	}
	c.calls.Add(1)
	if failed {
		c.errors.Add(1)
	}
}

// Calls is how many calls were counted.
func (c *Counters) Calls() int64 { return c.calls.Load() }

// Errors is how many of them failed.
func (c *Counters) Errors() int64 { return c.errors.Load() }

// ShadowCounters count a shadow version's calls and what they differed
// in. Safe for concurrent use.
type ShadowCounters struct {
	Counters
	differences, skipped atomic.Int64
	mu                   sync.Mutex
	last                 string
}

// Differed counts a call whose answer differed, described by what.
func (c *ShadowCounters) Differed(what string) {
	c.differences.Add(1)
	c.mu.Lock()
	c.last = what
	c.mu.Unlock()
}

// Skip counts a call not shadowed because the shadow calls in flight
// were at their bound.
func (c *ShadowCounters) Skip() { c.skipped.Add(1) }

// Differences is how many shadow calls answered otherwise.
func (c *ShadowCounters) Differences() int64 { return c.differences.Load() }

// Skipped is how many calls were not shadowed (the bound was reached).
func (c *ShadowCounters) Skipped() int64 { return c.skipped.Load() }

// Last describes the latest difference ("" if none).
func (c *ShadowCounters) Last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Compare lists what differs between the serving version's answer
// (resp, err) and the shadow's: the call's error, the outcome (status,
// message, delay), the result and the patch, each as "what: serving ->
// shadow", with JSON compared as values (key order does not matter).
// None when they agree.
func Compare(resp *abi.Response, err error, shadow *abi.Response, shadowErr error) []string {
	var out []string
	add := func(what, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: %s -> %s", what, orNone(a), orNone(b)))
		}
	}
	add("error", errText(err), errText(shadowErr))
	if err != nil || shadowErr != nil {
		return out
	}
	add("outcome", outcomeText(resp), outcomeText(shadow))
	add("result", objects.CanonicalJSON(resultOf(resp)), objects.CanonicalJSON(resultOf(shadow)))
	add("patch", patchText(resp), patchText(shadow))
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func resultOf(r *abi.Response) json.RawMessage {
	if r == nil {
		return nil
	}
	return r.Result
}

func outcomeText(r *abi.Response) string {
	if r == nil {
		return ""
	}
	o := r.Outcome
	s := string(o.Status)
	if o.Message != "" {
		s += " (" + o.Message + ")"
	}
	if o.Delay != nil {
		s += fmt.Sprintf(" retry in %gs", *o.Delay)
	}
	return s
}

func patchText(r *abi.Response) string {
	if r == nil || r.Patch == nil {
		return ""
	}
	s := objects.CanonicalJSON(r.Patch.Merge)
	if len(r.Patch.JSON) > 0 {
		ops, _ := json.Marshal(r.Patch.JSON)
		s += " " + objects.CanonicalJSON(ops)
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
