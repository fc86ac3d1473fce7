package signing

import (
	"crypto"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Mode says how many of a policy's signers must have signed a module.
type Mode string

const (
	// AnyOf accepts a module signed by at least one of the policy's signers.
	AnyOf Mode = "any-of"
	// AllOf accepts a module only if every signer of the policy signed it.
	AllOf Mode = "all-of"
)

// ParseMode reads a Mode from its flag or settings spelling.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", AnyOf:
		return AnyOf, nil
	case AllOf:
		return AllOf, nil
	}
	return "", fmt.Errorf("signing: unknown verification mode %q (want any-of or all-of)", s)
}

// Identity is a keyless signer: the subject (an e-mail or URI in the
// certificate's SAN) and the OIDC issuer that the Fulcio certificate of a
// keyless bundle must name.
type Identity struct {
	Subject string
	Issuer  string
}

// Policy is what a module's signatures must satisfy before the host loads it.
// Its signers are each key in Keys and each identity in Identities (checked
// against TrustedRoot); Mode says whether any or all of them must have
// signed. The zero Policy requires nothing.
type Policy struct {
	Keys        []*ecdsa.PublicKey
	Identities  []Identity
	TrustedRoot root.TrustedMaterial
	Mode        Mode
}

// Enabled reports whether the policy asks for any signature at all.
func (p Policy) Enabled() bool { return len(p.Keys) > 0 || len(p.Identities) > 0 }

// ReadTrustedRoot reads a Sigstore trusted root (trusted_root.json, as
// `cosign trusted-root create` writes or the TUF repository serves) from a
// file; nothing is fetched.
func ReadTrustedRoot(path string) (*root.TrustedRoot, error) {
	tr, err := root.NewTrustedRootFromPath(path)
	if err != nil {
		return nil, fmt.Errorf("signing: read trusted root %s: %w", path, err)
	}
	return tr, nil
}

// ErrNotSigned is wrapped by Verify's error when no bundle was found at all.
var ErrNotSigned = errors.New("no signature")

// Verify checks that the bundles (JSON) sign digest as the policy requires.
// Its error is one line naming the digest and what is missing.
func Verify(bundles [][]byte, digest Digest, p Policy) error {
	entities := make([]verify.SignedEntity, 0, len(bundles))
	for i, raw := range bundles {
		var b bundle.Bundle
		if err := b.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("signing: bundle %d for %s: %w", i+1, digest, err)
		}
		entities = append(entities, &b)
	}
	return VerifyEntities(entities, digest, p)
}

// VerifyEntities is Verify for bundles already parsed (or, in tests, made by
// a virtual Sigstore).
func VerifyEntities(entities []verify.SignedEntity, digest Digest, p Policy) error {
	if !p.Enabled() {
		return nil
	}
	h, err := digest.Hex()
	if err != nil {
		return err
	}
	if len(entities) == 0 {
		return fmt.Errorf("module %s: %w", digest, ErrNotSigned)
	}
	sum, _ := hexBytes(h)
	signers, err := p.signers()
	if err != nil {
		return err
	}
	var missing []string
	satisfied := 0
	for _, s := range signers {
		if s.satisfiedBy(entities, sum) {
			satisfied++
		} else {
			missing = append(missing, s.name)
		}
	}
	switch {
	case p.Mode == AllOf && len(missing) > 0:
		return fmt.Errorf("module %s is not signed by %s (policy all-of)", digest, strings.Join(missing, ", "))
	case satisfied == 0:
		return fmt.Errorf("module %s is not signed by any of %s (policy any-of)", digest, strings.Join(missing, ", "))
	}
	return nil
}

// signer is one key or identity of a policy, with the verifier that checks it.
type signer struct {
	name     string
	verifier *verify.Verifier
	policy   func(sum []byte) verify.PolicyBuilder
}

func (s signer) satisfiedBy(entities []verify.SignedEntity, sum []byte) bool {
	for _, e := range entities {
		if _, err := s.verifier.Verify(e, s.policy(sum)); err == nil {
			return true
		}
	}
	return false
}

func (p Policy) signers() ([]signer, error) {
	var out []signer
	for _, k := range p.Keys {
		s, err := keySigner(k)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(p.Identities) > 0 && p.TrustedRoot == nil {
		return nil, errors.New("signing: keyless identities need a trusted root file (--verify-trusted-root)")
	}
	for _, id := range p.Identities {
		s, err := identitySigner(id, p.TrustedRoot)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func keySigner(k *ecdsa.PublicKey) (signer, error) {
	hint, err := KeyHint(k)
	if err != nil {
		return signer{}, err
	}
	sv, err := signature.LoadVerifier(k, crypto.SHA256)
	if err != nil {
		return signer{}, fmt.Errorf("signing: load key %s: %w", hint, err)
	}
	// Any key id is accepted: cosign may write another hint (or none), and
	// the signature check decides.
	material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
	})
	v, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
	if err != nil {
		return signer{}, fmt.Errorf("signing: verifier: %w", err)
	}
	return signer{
		name:     "key " + hint,
		verifier: v,
		policy: func(sum []byte) verify.PolicyBuilder {
			return verify.NewPolicy(verify.WithArtifactDigest("sha256", sum), verify.WithKey())
		},
	}, nil
}

func identitySigner(id Identity, tm root.TrustedMaterial) (signer, error) {
	ci, err := verify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, "")
	if err != nil {
		return signer{}, fmt.Errorf("signing: identity %s (%s): %w", id.Subject, id.Issuer, err)
	}
	v, err := verify.NewVerifier(tm, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	if err != nil {
		return signer{}, fmt.Errorf("signing: verifier: %w", err)
	}
	return signer{
		name:     fmt.Sprintf("identity %s (issuer %s)", id.Subject, id.Issuer),
		verifier: v,
		policy: func(sum []byte) verify.PolicyBuilder {
			return verify.NewPolicy(verify.WithArtifactDigest("sha256", sum), verify.WithCertificateIdentity(ci))
		},
	}, nil
}
