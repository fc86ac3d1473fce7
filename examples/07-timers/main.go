// Command 07-timers shows timers: a heartbeat every second on every
// KopfExample, and a check that runs only once an object has not changed
// for two seconds.
package main

import (
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("timers", "0.1.0")
	kopf.Timer("kopf.dev", "v1", "kopfexamples", heartbeat, kopf.ID("heartbeat"), kopf.Interval(time.Second))
	kopf.Timer("kopf.dev", "v1", "kopfexamples", settled, kopf.ID("settled"),
		kopf.Interval(time.Second), kopf.Idle(2*time.Second))
}

// heartbeat counts its runs in its result, status.heartbeat.
func heartbeat(ctx *kopf.Context) (any, error) {
	return map[string]any{"beats": ctx.Status().Int("heartbeat.beats") + 1}, nil
}

// settled reports the spec it saw once the object stopped changing.
func settled(ctx *kopf.Context) (any, error) {
	return map[string]any{"spec": ctx.Spec()}, nil
}

func main() {}
