package reactor

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// errGone says the object disappeared while the cycle ran: not an error.
var errGone = errors.New("the object is gone")

// apply sends a cycle's changes to body, the object as the cycle read it
// from the watch cache: at most one request per endpoint, nothing when the
// patch is empty. It returns what the last successful write returned of
// the object (nil when nothing was sent). A 404 means the object was
// deleted meanwhile and returns errGone; any other failure is returned for
// the caller to throttle and retry from fresh state.
func (o *Operator) apply(ctx context.Context, res kube.Resource, body *unstructured.Unstructured, p *persistence.Patch) (*kube.Patched, error) {
	return o.send(ctx, res, body, p, true)
}

// send is apply; current says body is the latest version the host knows,
// so that the first write can be an update of it (see [Operator.write]).
func (o *Operator) send(ctx context.Context, res kube.Resource, body *unstructured.Unstructured, p *persistence.Patch, current bool) (*kube.Patched, error) {
	p.Minimize(body.Object)
	if p.Empty() {
		return nil, nil
	}
	reqs, err := p.Requests()
	if err != nil {
		return nil, err
	}
	var last *kube.Patched
	for i, req := range reqs {
		// After the first write body is stale: later ones are patches.
		out, err := o.write(ctx, res, body, req, current && i == 0)
		switch {
		case errors.Is(err, kube.ErrGone):
			return last, errGone
		case err != nil:
			return last, err
		}
		last = out
	}
	return last, nil
}

// write sends one request. With settings.WriteUpdate, and when body is
// current, a merge request goes out as an update (PUT) of body with the
// changes applied: the API server serves it with less work than a merge
// patch, and body's resourceVersion makes it conditional. If body is no
// longer the object's latest version (409), the changes go out as Kopf's
// merge patch instead, applied to the object as it is now; a locked
// request (a finalizer list computed from body) fails with the conflict,
// as its patch would. An update refused (403, 405) while the patch is
// accepted turns updates off for the resource.
func (o *Operator) write(ctx context.Context, res kube.Resource, body *unstructured.Unstructured, req persistence.Request, current bool) (*kube.Patched, error) {
	ns, name := body.GetNamespace(), body.GetName()
	var refused error
	if current && o.updates(res) {
		obj, ok, err := req.Updated(body.Object)
		if err != nil {
			return nil, err
		}
		if ok {
			out, err := o.kube.Update(ctx, res.ResourceRef, ns, name, req.Subresource, obj)
			switch {
			case err == nil || errors.Is(err, kube.ErrGone):
				return out, err
			case errors.Is(err, kube.ErrConflict) && !req.Locked:
			case refusesUpdates(err):
				refused = err
			default:
				return nil, fmt.Errorf("update%s: %w", subSuffix(req.Subresource), err)
			}
		}
	}
	out, err := o.kube.Patch(ctx, res.ResourceRef, ns, name, req.Subresource, req.Type, req.Data)
	if err != nil {
		return nil, fmt.Errorf("patch%s: %w", subSuffix(req.Subresource), err)
	}
	if refused != nil {
		o.noUpdates.Store(res.String(), true)
		o.log.Warn("the API server refuses updates of this resource but accepts patches: its changes go out as merge patches "+
			"from now on (grant the update verb to spare it work)", "resource", res.String(), "error", refused.Error())
	}
	return out, nil
}

// updates reports whether writes to res may be updates.
func (o *Operator) updates(res kube.Resource) bool {
	if o.opts.Settings.Persistence.Writes == settings.WritePatch {
		return false
	}
	_, refused := o.noUpdates.Load(res.String())
	return !refused
}

// refusesUpdates tells the failures of an update that a patch may not
// share: the credentials lack the update verb, or the resource does not
// serve PUT.
func refusesUpdates(err error) bool {
	var apiErr *kube.APIError
	return errors.Is(err, kube.ErrForbidden) || errors.As(err, &apiErr) && apiErr.Code == http.StatusMethodNotAllowed
}

func subSuffix(sub string) string {
	if sub == "" {
		return ""
	}
	return " " + sub
}
