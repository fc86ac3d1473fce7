package reactor

import (
	"context"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

// The diff-base goes to status.kopf by default (one request per update
// instead of two), but not every status keeps fields it does not know:
// built-in resources' typed statuses (Namespace) and CRDs without
// x-kubernetes-preserve-unknown-fields drop it. The operator notices when
// the API server returns a status without the diff-base it has just
// written, stores the diff-base in its annotation at once (one extra
// request, once per resource) and keeps it there for that resource.

var statusDiffBase = objects.Path{"status", "kopf", "last-handled-configuration"}

func hasStatusDiffBase(obj *kube.Patched) bool {
	return obj.StatusHas(statusDiffBase[1:]...)
}

// storesDiffBaseInStatus reports whether the cycle's patch writes the
// diff-base into the status.
func (c *cyc) storesDiffBaseInStatus() bool {
	_, ok := c.patch.Get(statusDiffBase)
	return ok
}

// statusPrunes switches the resource to the annotation diff-base and stores
// essence there for obj; it returns what the write returned.
func (o *Operator) statusPrunes(ctx context.Context, res kube.Resource, subj *execution.Subject, essence map[string]any) (*kube.Patched, error) {
	msg := fmt.Sprintf("The status of %s drops unknown fields (the diff-base written to status.kopf was not there "+
		"in the API server's answer): the diff-base goes to an annotation from now on, for every object of the resource; "+
		"handler results stored in status are dropped too. Add x-kubernetes-preserve-unknown-fields: true to the CRD's "+
		"status schema.", res.String())
	o.log.Warn(msg, append(subj.Attrs(), "resource", res.String())...)
	if _, known := o.pruning.LoadOrStore(res.String(), true); !known && o.opts.Settings.Posting.Enabled && o.kube != nil {
		_ = o.kube.PostEvent(ctx, subj.Ref(), abi.EventRequest{Type: "Warning", Reason: "StatusPruned", Message: msg})
	}
	p := persistence.NewPatch(res.Status)
	if err := o.annotated.StoreDiffBase(p, subj.Object.Object, essence); err != nil {
		return nil, err
	}
	last, err := o.exec.Apply(ctx, subj, p)
	if err == nil {
		o.reportReduced(ctx, subj, p)
	}
	return last, err
}
