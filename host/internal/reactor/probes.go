package reactor

import (
	"context"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/probing"
)

// Probe answers the probe handlers of the current module set (Kopf's
// @kopf.on.probe), for the liveness endpoint: Kopf's {probe_id: result},
// cached for settings.Execution.ProbeCache; see the probing package for
// failures. It may be called before Run and concurrently with anything.
func (o *Operator) Probe(ctx context.Context) (probing.Report, error) {
	return o.prober.Probe(ctx)
}
