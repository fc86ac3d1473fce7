package reactor

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
)

// errGone says the object disappeared while the cycle ran: not an error.
var errGone = errors.New("the object is gone")

// apply sends a cycle's patch: at most one request per endpoint, nothing
// when the patch is empty. It returns what the last successful write
// returned of the object (nil when nothing was sent). A 404 means the object was
// deleted meanwhile and returns errGone; any other failure is returned for
// the caller to throttle and retry from fresh state.
func (o *Operator) apply(ctx context.Context, res kube.Resource, body *unstructured.Unstructured, p *persistence.Patch) (*kube.Patched, error) {
	p.Minimize(body.Object)
	if p.Empty() {
		return nil, nil
	}
	reqs, err := p.Requests()
	if err != nil {
		return nil, err
	}
	var last *kube.Patched
	for _, req := range reqs {
		out, err := o.kube.Patch(ctx, res.ResourceRef, body.GetNamespace(), body.GetName(), req.Subresource, req.Type, req.Data)
		switch {
		case errors.Is(err, kube.ErrGone):
			return last, errGone
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
