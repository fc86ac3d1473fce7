package reactor

import (
	"context"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

// reportReduced says, once the patch is applied, that it stored the
// object's diff-base reduced (compressed, or only its digest) because it did
// not fit on the object: a warning with the object and a Warning Event
// (DiffBaseTooLarge) on it. The patch notes it only when the form changes,
// so an object that stays large is reported once, not at every change.
func (o *Operator) reportReduced(ctx context.Context, subj *execution.Subject, p *persistence.Patch) {
	r := p.Reduced()
	if r == nil {
		return
	}
	msg := r.Message()
	o.log.Warn(msg, append(subj.Attrs(), "diffbase_form", r.Form.String(), "diffbase_bytes", r.Size)...)
	if o.opts.Settings.Posting.Enabled && o.kube != nil {
		_ = o.kube.PostEvent(ctx, subj.Ref(), abi.EventRequest{Type: "Warning", Reason: "DiffBaseTooLarge", Message: msg})
	}
}
