package modules

import (
	"context"
	"log/slog"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/host/internal/oci"
)

// Puller pulls modules named by OCI references into the cache.
type Puller struct {
	c      *oci.Client
	log    *slog.Logger
	verify *Verifier
}

// NewPuller pulls through c and logs each pull to log; verify (nil: none)
// checks every module pulled before Pull returns it.
func NewPuller(c *oci.Client, log *slog.Logger, verify *Verifier) *Puller {
	return &Puller{c: c, log: log, verify: verify}
}

// Pull returns the cached file of the module ref names now, once the
// verification policy accepts it.
func (p *Puller) Pull(ctx context.Context, ref string) (string, error) {
	a, err := p.c.Pull(ctx, ref)
	if err != nil {
		return "", err
	}
	if err := p.verify.Artifact(ctx, a); err != nil {
		return "", err
	}
	p.log.Info("module pulled", "reference", a.Reference, "digest", a.Digest, "cached", a.Cached, "stale", a.Stale)
	return a.Path, nil
}

// PullAll returns args with every OCI reference replaced by the cached file
// of the module it names, and the references by the files they became (for
// the reloader to poll tags). newPuller is called at the first reference.
func PullAll(ctx context.Context, args []string, newPuller func() (*Puller, error)) ([]string, map[string]string, error) {
	var pull *Puller
	out := make([]string, 0, len(args))
	refs := map[string]string{}
	for _, m := range args {
		if !oci.IsReference(m) {
			out = append(out, m)
			continue
		}
		if pull == nil {
			var err error
			if pull, err = newPuller(); err != nil {
				return nil, nil, err
			}
		}
		path, err := pull.Pull(ctx, m)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, path)
		refs[path] = m
	}
	return out, refs, nil
}

// Pinned reports whether an OCI reference names a digest, which never
// changes, rather than a tag, which may move.
func Pinned(ref string) bool { return strings.Contains(ref, "@") }
