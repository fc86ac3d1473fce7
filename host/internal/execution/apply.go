package execution

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

// ErrGone says the object disappeared before its patch could be sent: not
// an error of anyone's, the object is simply done.
var ErrGone = errors.New("the object is gone")

// Apply sends p, the patch of the subject: at most one request per
// endpoint (the object, and /status for resources with that subresource),
// nothing when the patch is empty after dropping what the body already
// holds. It returns what the last successful write returned of the object
// (nil when nothing was sent). A 404 returns ErrGone; any other failure is
// returned wrapped, for the caller to throttle and retry from fresh state.
func (e *Executor) Apply(ctx context.Context, subj *Subject, p *persistence.Patch) (*kube.Patched, error) {
	p.Minimize(subj.Object.Object)
	if p.Empty() {
		return nil, nil
	}
	if e.opts.Cluster == nil {
		return nil, errors.New("no cluster to apply the patch to")
	}
	reqs, err := p.Requests()
	if err != nil {
		return nil, err
	}
	obj := subj.Object
	var last *kube.Patched
	for _, req := range reqs {
		if req.Relock && last != nil {
			if req, err = req.Relocked(last.ResourceVersion); err != nil {
				return last, err
			}
		}
		if e.log.Enabled(ctx, slog.LevelDebug) { // -v: Kopf's "Patching with: ..."
			e.log.Debug(fmt.Sprintf("Patching%s with: %s", subSuffix(req.Subresource), req.Data), ObjectAttrs(obj)...)
		}
		out, err := e.opts.Cluster.Patch(ctx, subj.Resource, obj.GetNamespace(), obj.GetName(), req.Subresource, req.Type, req.Data)
		switch {
		case errors.Is(err, kube.ErrGone):
			return last, ErrGone
		case err != nil:
			return last, fmt.Errorf("patch%s: %w", subSuffix(req.Subresource), err)
		}
		last = out
	}
	return last, nil
}

func subSuffix(sub string) string {
	if sub == "" {
		return ""
	}
	return " " + sub
}
