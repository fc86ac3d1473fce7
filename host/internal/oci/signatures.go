package oci

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
)

// MediaTypeSigstoreBundle is the artifact type of a signature: a Sigstore
// bundle v0.3, stored as cosign v3 stores it.
const MediaTypeSigstoreBundle = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Annotations cosign v3 puts on a bundle's referrer manifest.
const (
	annotationBundleContent       = "dev.sigstore.bundle.content"
	annotationBundlePredicateType = "dev.sigstore.bundle.predicateType"
)

// Limits of what Signatures reads: bundles per module and bytes per bundle.
const (
	maxBundles     = 32
	maxBundleBytes = 1 << 20
)

// Resolve returns the manifest digest ref names (a tag or a digest),
// asking the registry.
func (c *Client) Resolve(ctx context.Context, ref string) (string, error) {
	_, desc, err := c.resolve(ctx, ref)
	if err != nil {
		return "", err
	}
	return desc.Digest.String(), nil
}

func (c *Client) resolve(ctx context.Context, ref string) (registry.Reference, ocispec.Descriptor, error) {
	r, err := ParseReference(ref)
	if err != nil {
		return registry.Reference{}, ocispec.Descriptor{}, err
	}
	if r.Reference == "" {
		return registry.Reference{}, ocispec.Descriptor{}, fmt.Errorf("%w %q: name a tag or a digest, e.g. %s:v1", ErrReference, ref, r)
	}
	desc, err := c.repository(r).Resolve(ctx, r.Reference)
	if err != nil {
		return registry.Reference{}, ocispec.Descriptor{}, fmt.Errorf("resolve %s: %w", r, classify(err))
	}
	return r, desc, nil
}

// AttachSignature stores bundle (a Sigstore bundle's JSON) as an OCI 1.1
// referrer of the manifest ref names: an image manifest of artifact type
// [MediaTypeSigstoreBundle] with the bundle as its one layer and the module's
// manifest as its subject. On a registry without the referrers API, oras-go
// keeps the referrers index under the tag sha256-<hex of the subject>, the
// OCI 1.1 fallback cosign reads too. It returns the referrer's digest.
func (c *Client) AttachSignature(ctx context.Context, ref string, bundle []byte, predicateType string) (string, error) {
	r, subject, err := c.resolve(ctx, ref)
	if err != nil {
		return "", err
	}
	repo := c.repository(r)
	layer := content.NewDescriptorFromBytes(MediaTypeSigstoreBundle, bundle)
	if err := pushBlob(ctx, repo, layer, bundle); err != nil {
		return "", fmt.Errorf("sign %s: %w", r, classify(err))
	}
	annotations := map[string]string{
		ocispec.AnnotationCreated:     time.Now().UTC().Format(time.RFC3339),
		annotationBundleContent:       "dsse-envelope",
		annotationBundlePredicateType: predicateType,
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, MediaTypeSigstoreBundle, oras.PackManifestOptions{
		Subject: &subject, Layers: []ocispec.Descriptor{layer}, ManifestAnnotations: annotations,
	})
	if err != nil {
		return "", fmt.Errorf("sign %s: push the signature: %w", r, classify(err))
	}
	return desc.Digest.String(), nil
}

// Signatures returns the manifest digest ref names and the Sigstore bundles
// attached to it as referrers (through the referrers API, or the
// sha256-<hex> tag where the registry has none). No bundle is no error.
func (c *Client) Signatures(ctx context.Context, ref string) (string, [][]byte, error) {
	r, subject, err := c.resolve(ctx, ref)
	if err != nil {
		return "", nil, err
	}
	repo := c.repository(r)
	var referrers []ocispec.Descriptor
	// The filter is applied here, not by the registry: some registries
	// (go-containerregistry's among them) report a referrer's config media
	// type as its artifact type, which is the empty type for a bundle.
	err = repo.Referrers(ctx, subject, "", func(ds []ocispec.Descriptor) error {
		for _, d := range ds {
			switch d.ArtifactType {
			case MediaTypeSigstoreBundle, ocispec.MediaTypeEmptyJSON, "":
				referrers = append(referrers, d)
			}
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("signatures of %s: %w", r, classify(err))
	}
	if len(referrers) > maxBundles {
		referrers = referrers[:maxBundles]
	}
	var bundles [][]byte
	for _, d := range referrers {
		b, err := c.bundlesOf(ctx, r, d)
		if err != nil {
			return "", nil, err
		}
		bundles = append(bundles, b...)
	}
	return subject.Digest.String(), bundles, nil
}

// bundlesOf reads the bundle layers of one referrer manifest.
func (c *Client) bundlesOf(ctx context.Context, r registry.Reference, d ocispec.Descriptor) ([][]byte, error) {
	repo := c.repository(r)
	if d.Size > maxManifestBytes {
		return nil, fmt.Errorf("signatures of %s: the referrer %s has %d bytes, more than %d", r, d.Digest, d.Size, maxManifestBytes)
	}
	mb, err := content.FetchAll(ctx, repo, d)
	if err != nil {
		return nil, fmt.Errorf("signatures of %s: referrer %s: %w", r, d.Digest, classify(err))
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("signatures of %s: referrer %s is not a manifest: %w", r, d.Digest, err)
	}
	var out [][]byte
	for _, l := range m.Layers {
		if l.MediaType != MediaTypeSigstoreBundle {
			continue
		}
		if l.Size > maxBundleBytes {
			return nil, fmt.Errorf("signatures of %s: bundle %s has %d bytes, more than %d", r, l.Digest, l.Size, maxBundleBytes)
		}
		b, err := content.FetchAll(ctx, repo, l)
		if err != nil {
			return nil, fmt.Errorf("signatures of %s: bundle %s: %w", r, l.Digest, classify(err))
		}
		out = append(out, b)
	}
	return out, nil
}
