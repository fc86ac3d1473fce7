package modules

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/kopf-wasm/kopf-wasm/host/internal/oci"
	"github.com/kopf-wasm/kopf-wasm/host/internal/signing"
)

// BundleSuffix is appended to a module file's name to find its signature
// bundle (as `cosign sign-blob --bundle` users name it).
const BundleSuffix = ".sigstore.json"

// ErrRefused is wrapped by the error of a module the verification policy
// refuses: unsigned, wrongly signed or tampered.
var ErrRefused = errors.New("module refused by the verification policy")

// Verifier applies the verification policy before a module loads: the
// Puller asks it about every module it pulls (at start, on a tag's reload,
// for a Module resource) and the host and the reloader about module files.
// A nil Verifier, or one with an empty policy, accepts everything.
type Verifier struct {
	policy signing.Policy
	c      *oci.Client
}

// NewVerifier checks modules against p; c finds the signatures of pulled
// modules (it may be nil when no module is pulled).
func NewVerifier(p signing.Policy, c *oci.Client) *Verifier { return &Verifier{policy: p, c: c} }

// Enabled reports whether the verifier checks anything.
func (v *Verifier) Enabled() bool { return v != nil && v.policy.Enabled() }

// Artifact checks the signatures attached to a pulled artifact's manifest.
func (v *Verifier) Artifact(ctx context.Context, a oci.Artifact) error {
	if !v.Enabled() {
		return nil
	}
	if v.c == nil {
		return fmt.Errorf("%w: module %s: no registry client to read its signatures", ErrRefused, a.Reference)
	}
	ref := a.Reference
	if r, err := oci.ParseReference(ref); err == nil {
		ref = r.Registry + "/" + r.Repository + "@" + a.Digest
	}
	_, bundles, err := v.c.Signatures(ctx, ref)
	if err != nil {
		return fmt.Errorf("%w: module %s: reading its signatures: %w", ErrRefused, a.Reference, err)
	}
	if err := signing.Verify(bundles, signing.Digest(a.Digest), v.policy); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefused, a.Reference, err)
	}
	return nil
}

// File checks a module file's content against the bundle next to it
// (path + BundleSuffix).
func (v *Verifier) File(path string, wasm []byte) error {
	if !v.Enabled() {
		return nil
	}
	var bundles [][]byte
	b, err := os.ReadFile(path + BundleSuffix)
	switch {
	case err == nil:
		bundles = append(bundles, b)
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: module %s: %w", ErrRefused, path, err)
	}
	if err := signing.Verify(bundles, signing.DigestOf(wasm), v.policy); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefused, path, err)
	}
	return nil
}

// VerifyFiles checks the module files given as files (not the ones pulled,
// which refs names and the Puller checked).
func VerifyFiles(v *Verifier, files []string, refs map[string]string) error {
	if !v.Enabled() {
		return nil
	}
	for _, f := range files {
		if _, pulled := refs[f]; pulled {
			continue
		}
		wasm, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("module %s: %w", f, NotFound(err))
		}
		if err := v.File(f, wasm); err != nil {
			return err
		}
	}
	return nil
}
