// Command spawning is the module the timer and daemon tests run, on
// kopf.dev/v1 kopfexamples selected by the label "mode":
//
//   - timer: ticks every 0.5s, counting in status.tick.count;
//   - idle: ticks every 0.3s once the object had no change for 1.5s;
//   - delayed: ticks every 0.5s after an initial delay of 1.5s;
//   - daemon: beats every 0.2s into status.monitor.beats through the API
//     until it is asked to stop, then returns why;
//   - stubborn: a daemon that ignores the stop request and is terminated
//     after its cancellation timeout of 1s.
package main

import (
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func mode(m string) kopf.Option { return kopf.Labels(map[string]any{"mode": m}) }

func init() {
	kopf.Module("spawning", "0.1.0")
	kopf.Permit(group, plural+"/status", "patch")
	kopf.Timer(group, version, plural, tick, kopf.ID("tick"), mode("timer"), kopf.Interval(500*time.Millisecond))
	kopf.Timer(group, version, plural, tick, kopf.ID("idle_tick"), mode("idle"),
		kopf.Interval(300*time.Millisecond), kopf.Idle(1500*time.Millisecond))
	kopf.Timer(group, version, plural, tick, kopf.ID("delayed_tick"), mode("delayed"),
		kopf.Interval(500*time.Millisecond), kopf.InitialDelay(1500*time.Millisecond))
	kopf.Daemon(group, version, plural, monitor, kopf.ID("monitor"), mode("daemon"))
	kopf.Daemon(group, version, plural, stubborn, kopf.ID("stubborn"), mode("stubborn"),
		kopf.CancellationTimeout(time.Second))
	kopf.Daemon(group, version, plural, sleepy, kopf.ID("sleepy"), mode("sleepy"),
		kopf.CancellationTimeout(time.Second))
}

// tick counts its runs in its own result.
func tick(ctx *kopf.Context) (any, error) {
	v, _ := ctx.Status().Get(ctx.Handler() + ".count")
	n, _ := v.(float64)
	return map[string]any{"count": n + 1}, nil
}

// monitor beats until it is asked to stop.
func monitor(ctx *kopf.Context) (any, error) {
	status := ctx.Client(group, version, plural).Namespace(ctx.Namespace()).Subresource("status")
	for beats := 1; !ctx.Stopped(); beats++ {
		patch := map[string]any{"status": map[string]any{"monitor": map[string]any{"beats": beats}}}
		if _, err := status.Patch(ctx.Name(), kopf.MergePatch, patch); err != nil {
			return nil, err
		}
		ctx.SleepUntilStopped(200 * time.Millisecond)
	}
	return map[string]any{"stopped": ctx.StopReason()}, nil
}

// stubborn never returns.
func stubborn(ctx *kopf.Context) (any, error) {
	for {
	}
}

// sleepy never looks at its stop request and sleeps in time.Sleep, where
// no loop check can see it: only the host's sleep ends it.
func sleepy(ctx *kopf.Context) (any, error) {
	for {
		time.Sleep(time.Hour)
	}
}

func main() {}
