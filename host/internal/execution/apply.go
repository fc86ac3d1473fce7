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
// (nil when nothing was sent). A 404 returns ErrGone; a transient failure
// returns an [*Unsent] with the requests still to send; any other failure
// is returned wrapped, for the caller to throttle and retry from fresh
// state.
func (e *Executor) Apply(ctx context.Context, subj *Subject, p *persistence.Patch) (*kube.Patched, error) {
	p.Minimize(subj.Object.Object)
	if p.Empty() {
		return nil, nil
	}
	reqs, err := p.Requests()
	if err != nil {
		return nil, err
	}
	return e.Send(ctx, subj, reqs)
}

// Unsent is the error of a write that failed for a transient reason
// (kube.ErrUnavailable) part-way: Requests are the ones not yet sent, the
// failed one first. The caller may keep them and [Executor.Send] them
// later instead of computing the outcome again; handlers then do not run
// twice for one change because a write was lost (Kopf calls them again).
type Unsent struct {
	Requests []persistence.Request
	Err      error
}

func (u *Unsent) Error() string { return u.Err.Error() }
func (u *Unsent) Unwrap() error { return u.Err }

// Send sends the requests of a patch in order (see [Executor.Apply]); a
// request that relocks takes the resourceVersion its predecessor returned.
func (e *Executor) Send(ctx context.Context, subj *Subject, reqs []persistence.Request) (*kube.Patched, error) {
	if e.opts.Cluster == nil {
		return nil, errors.New("no cluster to apply the patch to")
	}
	obj := subj.Object
	var last *kube.Patched
	for i, req := range reqs {
		sent := req
		if req.Relock && last != nil {
			var err error
			if sent, err = req.Relocked(last.ResourceVersion); err != nil {
				return last, err
			}
		}
		if e.log.Enabled(ctx, slog.LevelDebug) { // -v: Kopf's "Patching with: ..."
			e.log.Debug(fmt.Sprintf("Patching%s with: %s", subSuffix(sent.Subresource), sent.Data), ObjectAttrs(obj)...)
		}
		out, err := e.opts.Cluster.Patch(ctx, subj.Resource, obj.GetNamespace(), obj.GetName(), sent.Subresource, sent.Type, sent.Data)
		switch {
		case errors.Is(err, kube.ErrGone):
			return last, ErrGone
		case errors.Is(err, kube.ErrUnavailable) && !errors.Is(err, kube.ErrTooLarge):
			return last, &Unsent{Requests: reqs[i:], Err: fmt.Errorf("patch%s: %w", subSuffix(sent.Subresource), err)}
		case err != nil:
			return last, fmt.Errorf("patch%s: %w", subSuffix(sent.Subresource), err)
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
