// Command spawnbench is the module of the timers-and-daemons benchmark
// (internal/cmd/bench spawning), on kopf.dev/v1 kopfexamples selected by
// the label "mode":
//
//   - timer: a 1s timer that does nothing and returns no result, so that
//     the benchmark measures the timers' scheduling and calls, not the API
//     server (no write per run);
//   - count: a 1s timer that counts its runs in status.count.count (one
//     patch per run, as a timer that stores a result);
//   - sleep: a daemon that marks status.sleep.started once through the
//     API, so the benchmark can see it running, then sleeps until it is
//     asked to stop, then returns why.
package main

import (
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func mode(m string) kopf.Option { return kopf.Labels(map[string]any{"mode": m}) }

func init() {
	kopf.Module("spawnbench", "0.1.0")
	kopf.Permit(group, plural+"/status", "patch")
	kopf.Timer(group, version, plural, quiet, kopf.ID("timer"), mode("timer"), kopf.Interval(time.Second))
	kopf.Timer(group, version, plural, count, kopf.ID("count"), mode("count"), kopf.Interval(time.Second))
	kopf.Daemon(group, version, plural, sleep, kopf.ID("sleep"), mode("sleep"))
}

// quiet returns nothing: no patch.
func quiet(*kopf.Context) (any, error) { return nil, nil }

// count counts its runs in its own result.
func count(ctx *kopf.Context) (any, error) {
	v, _ := ctx.Status().Get(ctx.Handler() + ".count")
	n, _ := v.(float64)
	return map[string]any{"count": n + 1}, nil
}

// sleep marks itself started, then sleeps until it is asked to stop.
func sleep(ctx *kopf.Context) (any, error) {
	status := ctx.Client(group, version, plural).Namespace(ctx.Namespace()).Subresource("status")
	patch := map[string]any{"status": map[string]any{"sleep": map[string]any{"started": true}}}
	if _, err := status.Patch(ctx.Name(), kopf.MergePatch, patch); err != nil {
		return nil, err
	}
	for !ctx.Stopped() {
		ctx.SleepUntilStopped(time.Hour)
	}
	return map[string]any{"stopped": ctx.StopReason()}, nil
}

func main() {}
