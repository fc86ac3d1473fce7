// Command 08-daemons shows a daemon: a long-running handler per
// KopfExample that reports a heartbeat into the object's status through the
// API every half second until the host asks it to stop.
package main

import (
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

var examples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}

func init() {
	kopf.Module("daemons", "0.1.0")
	kopf.Permit("kopf.dev", "kopfexamples/status", "patch")
	examples.Daemon(monitor, kopf.ID("monitor"), kopf.CancellationTimeout(5*time.Second))
}

// monitor beats until it is asked to stop: when the object is deleted, no
// longer matches the filters, or the host stops.
func monitor(ctx *kopf.DaemonContext) (any, error) {
	status := ctx.Client(examples.Group, examples.Version, examples.Plural).Namespace(ctx.Namespace()).Subresource("status")
	for beats := 1; !ctx.Stopped(); beats++ {
		patch := map[string]any{"status": map[string]any{"monitor": map[string]any{"beats": beats}}}
		if _, err := status.Patch(ctx.Name(), kopf.MergePatch, patch); err != nil {
			return nil, kopf.Temporary(err, time.Second)
		}
		ctx.SleepUntilStopped(500 * time.Millisecond)
	}
	ctx.Logger().Info("monitor stopped", "reason", ctx.StopReason())
	return nil, nil
}

func main() {}
