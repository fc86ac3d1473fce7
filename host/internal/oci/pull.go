package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
)

// Size limits of what Pull reads from a registry.
const (
	maxManifestBytes = 4 << 20
	maxModuleBytes   = 256 << 20
)

// wasmLayerTypes are the layer media types Pull accepts as the module.
var wasmLayerTypes = []string{MediaTypeWasm, MediaTypeWasmLegacy}

// Artifact is a module pushed or pulled.
type Artifact struct {
	// Reference is the reference as parsed (without oci://).
	Reference string
	// Digest is the manifest's digest: what host/repo@<digest> pins.
	Digest string
	// ModuleDigest is the wasm layer's digest, the module's own digest.
	ModuleDigest string
	// MediaType is the wasm layer's media type.
	MediaType string
	// Summary is what the manifest's annotations say about the module.
	Summary Summary
	// Wasm is the module.
	Wasm []byte
	// Path is the module's file in the cache; "" without a cache.
	Path string
	// Cached: the module came from the cache, not the registry.
	Cached bool
	// Stale: the registry was unreachable and a tag was served with the
	// digest last recorded for it.
	Stale bool
}

// Pull fetches the module artifact ref names, a tag or a digest, and
// verifies it. A digest already in the cache is served without a registry; a
// tag always asks the registry, unless it is unreachable and the cache knows
// the tag, in which case the cached digest is served with a warning.
func (c *Client) Pull(ctx context.Context, ref string) (Artifact, error) {
	r, err := ParseReference(ref)
	if err != nil {
		return Artifact{}, err
	}
	if r.Reference == "" {
		return Artifact{}, fmt.Errorf("%w %q: name a tag or a digest, e.g. %s:v1", ErrReference, ref, r)
	}
	if d, err := r.Digest(); err == nil {
		if a, ok := c.fromCache(r, d); ok {
			return a, nil
		}
	}
	a, err := c.pullRemote(ctx, r)
	if err == nil || !errors.Is(err, ErrUnreachable) || r.ValidateReferenceAsTag() != nil {
		return a, err
	}
	if d, ok := c.cache.tag(r); ok {
		if a, ok := c.fromCache(r, d); ok {
			c.opts.Logger.Warn("registry unreachable: serving the digest last seen for the tag from the cache",
				"reference", r.String(), "digest", a.Digest, "error", err)
			a.Stale = true
			return a, nil
		}
	}
	return Artifact{}, err
}

// fromCache assembles an artifact from a cached manifest and module.
func (c *Client) fromCache(r registry.Reference, d digest.Digest) (Artifact, bool) {
	mb, ok := c.cache.manifest(d)
	if !ok {
		return Artifact{}, false
	}
	m, layer, err := wasmLayer(ocispec.MediaTypeImageManifest, mb)
	if err != nil {
		return Artifact{}, false
	}
	wasm, ok := c.cache.module(layer.Digest)
	if !ok {
		return Artifact{}, false
	}
	return Artifact{
		Reference: r.String(), Digest: d.String(), ModuleDigest: layer.Digest.String(), MediaType: layer.MediaType,
		Summary: summaryOf(m.Annotations), Wasm: wasm, Path: c.cache.modulePath(layer.Digest), Cached: true,
	}, true
}

// pullRemote resolves r at the registry, fetches the manifest and the module
// (unless cached), verifies both and caches them.
func (c *Client) pullRemote(ctx context.Context, r registry.Reference) (Artifact, error) {
	repo := c.repository(r)
	desc, mb, err := oras.FetchBytes(ctx, repo, r.Reference, oras.FetchBytesOptions{MaxBytes: maxManifestBytes})
	if err != nil {
		return Artifact{}, fmt.Errorf("pull %s: %w", r, classify(err))
	}
	m, layer, err := wasmLayer(desc.MediaType, mb)
	if err != nil {
		return Artifact{}, fmt.Errorf("pull %s: %w", r, err)
	}
	a := Artifact{
		Reference: r.String(), Digest: desc.Digest.String(), ModuleDigest: layer.Digest.String(),
		MediaType: layer.MediaType, Summary: summaryOf(m.Annotations),
	}
	wasm, cached := c.cache.module(layer.Digest)
	if !cached {
		if layer.Size > maxModuleBytes {
			return Artifact{}, fmt.Errorf("pull %s: %w: the wasm layer has %d bytes, more than the %d allowed", r, ErrNoWasmLayer, layer.Size, maxModuleBytes)
		}
		if wasm, err = content.FetchAll(ctx, repo, layer); err != nil {
			return Artifact{}, fmt.Errorf("pull %s: layer %s: %w", r, layer.Digest, classify(err))
		}
	}
	// oras-go verified the bytes against the descriptor; check again here,
	// so that the digest the cache files the module under is the one read.
	if got := layer.Digest.Algorithm().FromBytes(wasm); got != layer.Digest {
		return Artifact{}, fmt.Errorf("pull %s: %w: layer %s read as %s", r, ErrDigestMismatch, layer.Digest, got)
	}
	if !isWasm(wasm) {
		return Artifact{}, fmt.Errorf("pull %s: %w: the %s layer does not start with the wasm magic number", r, ErrNotWasm, layer.MediaType)
	}
	a.Wasm, a.Cached = wasm, cached
	if c.cache.enabled() {
		if a.Path, err = c.cache.store(r, desc.Digest, mb, layer.Digest, wasm); err != nil {
			return Artifact{}, fmt.Errorf("pull %s: %w", r, err)
		}
	}
	return a, nil
}

// wasmLayer parses a manifest and returns its one wasm layer.
func wasmLayer(mediaType string, b []byte) (ocispec.Manifest, ocispec.Descriptor, error) {
	if mediaType == ocispec.MediaTypeImageIndex || strings.Contains(mediaType, "manifest.list") {
		return ocispec.Manifest{}, ocispec.Descriptor{}, fmt.Errorf("%w: the reference names an image index (%s), not a wasm module artifact", ErrNoWasmLayer, mediaType)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return ocispec.Manifest{}, ocispec.Descriptor{}, fmt.Errorf("%w: the manifest is not valid JSON", ErrNoWasmLayer)
	}
	var found []ocispec.Descriptor
	var types []string
	for _, l := range m.Layers {
		types = append(types, l.MediaType)
		if slices.Contains(wasmLayerTypes, l.MediaType) {
			found = append(found, l)
		}
	}
	switch {
	case len(found) == 0 && len(types) == 0:
		return m, ocispec.Descriptor{}, fmt.Errorf("%w: the manifest has no layers", ErrNoWasmLayer)
	case len(found) == 0:
		return m, ocispec.Descriptor{}, fmt.Errorf("%w: the manifest's layers are %s, none of them %s", ErrNoWasmLayer,
			strings.Join(types, ", "), strings.Join(wasmLayerTypes, " or "))
	case len(found) > 1:
		return m, ocispec.Descriptor{}, fmt.Errorf("%w: the manifest has %d wasm layers; a module artifact has one", ErrNoWasmLayer, len(found))
	}
	if err := found[0].Digest.Validate(); err != nil {
		return m, ocispec.Descriptor{}, fmt.Errorf("%w: the wasm layer's digest %q: %w", ErrDigestMismatch, found[0].Digest, err)
	}
	return m, found[0], nil
}

// isWasm reports whether b starts with the WebAssembly binary magic number.
func isWasm(b []byte) bool { return len(b) >= 8 && string(b[:4]) == "\x00asm" }
