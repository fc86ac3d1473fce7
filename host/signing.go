package host

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/oci"
	"github.com/kopf-wasm/kopf-wasm/host/internal/signing"
)

// ErrModuleRefused is wrapped by the error of a module the verification
// policy refuses (unsigned, wrongly signed, tampered): at start, by
// [Verify], and in the log line of a reload or a Module resource that was
// refused while the old version keeps serving.
var ErrModuleRefused = modules.ErrRefused

// BundleSuffix names a module file's signature: MODULE.wasm.sigstore.json.
const BundleSuffix = modules.BundleSuffix

// VerifyPolicy says which signatures a module needs before the host loads
// it. Its signers are each public key file in Keys and each identity in
// Identities (keyless bundles, checked against the trusted root file
// TrustedRoot); Mode "any-of" (the default) accepts a module one of them
// signed, "all-of" one every signer signed. The zero policy checks nothing.
// Verification reads no network beyond the registry a module comes from.
type VerifyPolicy struct {
	// Keys are PEM files of ECDSA P-256 public keys (cosign.pub).
	Keys []string
	// TrustedRoot is a Sigstore trusted_root.json for keyless bundles.
	TrustedRoot string
	// Identities are keyless signers as SUBJECT@ISSUER-URL pairs, split at
	// the first "@https://" or "@http://" (e.g.
	// ci@example.com@https://accounts.example.com).
	Identities []string
	// Mode is "any-of" (default) or "all-of".
	Mode string
}

// Enabled reports whether the policy asks for any signature.
func (p VerifyPolicy) Enabled() bool { return len(p.Keys) > 0 || len(p.Identities) > 0 }

// load reads the policy's files.
func (p VerifyPolicy) load() (signing.Policy, error) {
	mode, err := signing.ParseMode(p.Mode)
	if err != nil {
		return signing.Policy{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	out := signing.Policy{Mode: mode}
	for _, f := range p.Keys {
		k, err := signing.ReadPublicKey(f)
		if err != nil {
			return signing.Policy{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		out.Keys = append(out.Keys, k)
	}
	for _, id := range p.Identities {
		i := strings.Index(id, "@http")
		if i <= 0 {
			return signing.Policy{}, fmt.Errorf("%w: identity %q: write it as SUBJECT@ISSUER-URL, e.g. ci@example.com@https://accounts.example.com", ErrUsage, id)
		}
		out.Identities = append(out.Identities, signing.Identity{Subject: id[:i], Issuer: id[i+1:]})
	}
	if p.TrustedRoot != "" {
		tr, err := signing.ReadTrustedRoot(p.TrustedRoot)
		if err != nil {
			return signing.Policy{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		out.TrustedRoot = tr
	} else if len(out.Identities) > 0 {
		return signing.Policy{}, fmt.Errorf("%w: keyless identities need a trusted root file (--verify-trusted-root)", ErrUsage)
	}
	return out, nil
}

// verifier returns the module verifier of a policy; pulled modules' bundles
// are read through reg.
func (p VerifyPolicy) verifier(reg Registry) (*modules.Verifier, error) {
	if !p.Enabled() {
		return nil, nil
	}
	pol, err := p.load()
	if err != nil {
		return nil, err
	}
	c, err := reg.client()
	if err != nil {
		return nil, err
	}
	return modules.NewVerifier(pol, c), nil
}

// Signed is what [Sign] did.
type Signed struct {
	// Digest is what was signed: the module file's sha256, or the
	// manifest digest of a reference.
	Digest string
	// Bundle is the bundle's file, or the referrer manifest's digest.
	Bundle string
}

// Sign signs a module file or the module artifact a reference names with
// the ECDSA P-256 private key in keyFile. A file's bundle is written to
// MODULE.wasm.sigstore.json; a reference's is pushed as an OCI 1.1 referrer
// of its manifest (with the sha256-<hex> tag where the registry has no
// referrers API).
func Sign(ctx context.Context, module, keyFile string, reg Registry) (Signed, error) {
	key, err := signing.ReadPrivateKey(keyFile)
	if err != nil {
		return Signed{}, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if !IsReference(module) {
		wasm, err := os.ReadFile(module)
		if err != nil {
			return Signed{}, fmt.Errorf("module %s: %w", module, modules.NotFound(err))
		}
		d := signing.DigestOf(wasm)
		b, err := signing.Sign(ctx, d, key)
		if err != nil {
			return Signed{}, err
		}
		if err := os.WriteFile(module+BundleSuffix, b, 0o644); err != nil {
			return Signed{}, fmt.Errorf("write the bundle: %w", err)
		}
		return Signed{Digest: string(d), Bundle: module + BundleSuffix}, nil
	}
	c, err := reg.client()
	if err != nil {
		return Signed{}, err
	}
	d, err := c.Resolve(ctx, module)
	if err != nil {
		return Signed{}, err
	}
	b, err := signing.Sign(ctx, signing.Digest(d), key)
	if err != nil {
		return Signed{}, err
	}
	ref, err := c.AttachSignature(ctx, pinned(module, d), b, signing.PredicateType)
	if err != nil {
		return Signed{}, err
	}
	return Signed{Digest: d, Bundle: ref}, nil
}

// Verify checks a module file (against MODULE.wasm.sigstore.json) or the
// module artifact a reference names (against its referrers) with the policy,
// and returns the digest verified. A refusal wraps [ErrModuleRefused].
func Verify(ctx context.Context, module string, p VerifyPolicy, reg Registry) (string, error) {
	if !p.Enabled() {
		return "", fmt.Errorf("%w: name a public key (--key) or an identity (--certificate-identity) to verify against", ErrUsage)
	}
	v, err := p.verifier(reg)
	if err != nil {
		return "", err
	}
	if !IsReference(module) {
		wasm, err := os.ReadFile(module)
		if err != nil {
			return "", fmt.Errorf("module %s: %w", module, modules.NotFound(err))
		}
		return string(signing.DigestOf(wasm)), v.File(module, wasm)
	}
	c, err := reg.client()
	if err != nil {
		return "", err
	}
	d, err := c.Resolve(ctx, module)
	if err != nil {
		return "", err
	}
	return d, v.Artifact(ctx, oci.Artifact{Reference: pinned(module, d), Digest: d})
}

// pinned returns ref with its tag replaced by digest d.
func pinned(ref, d string) string {
	r, err := oci.ParseReference(ref)
	if err != nil {
		return ref
	}
	return r.Registry + "/" + r.Repository + "@" + d
}
