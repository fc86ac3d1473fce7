package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
)

// Annotation keys of the handler summary on the manifest. The module's name
// and version also go into the standard title and version annotations.
const (
	AnnotationModuleName    = "io.github.kopf-wasm.module.name"
	AnnotationModuleVersion = "io.github.kopf-wasm.module.version"
	AnnotationABIVersion    = "io.github.kopf-wasm.abi.version"
	// AnnotationHandlers is a JSON array of {"id": ..., "kind": ...}.
	AnnotationHandlers = "io.github.kopf-wasm.handlers"
)

// Summary is what a manifest's annotations say about the module in it.
type Summary struct {
	Name       string    `json:"name"`
	Version    string    `json:"version,omitempty"`
	ABIVersion int       `json:"abiVersion"`
	Handlers   []Handler `json:"handlers"`
}

// Handler is one handler of a [Summary].
type Handler struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// config is the artifact's config blob (CNCF wasm layout).
type config struct {
	Created      string   `json:"created"`
	Architecture string   `json:"architecture"`
	OS           string   `json:"os"`
	LayerDigests []string `json:"layerDigests"`
}

// Push uploads wasm as a module artifact described by sum and tags it with
// ref's tag, which ref must have. The module is not loaded here (the caller
// validates it); only its magic number is checked. The result names the
// manifest digest and the module's digest; the module is also put into the
// cache, so the pushing host can run it without pulling.
func (c *Client) Push(ctx context.Context, wasm []byte, sum Summary, ref string) (Artifact, error) {
	r, err := ParsePushReference(ref)
	if err != nil {
		return Artifact{}, err
	}
	if !isWasm(wasm) {
		return Artifact{}, fmt.Errorf("%w: the content does not start with the wasm magic number", ErrNotWasm)
	}
	repo := c.repository(r)
	layer := content.NewDescriptorFromBytes(MediaTypeWasm, wasm)
	if err := pushBlob(ctx, repo, layer, wasm); err != nil {
		return Artifact{}, fmt.Errorf("push %s: %w", r, classify(err))
	}
	created := time.Now().UTC().Format(time.RFC3339)
	cfgJSON, err := json.Marshal(config{Created: created, Architecture: "wasm", OS: "wasip1", LayerDigests: []string{layer.Digest.String()}})
	if err != nil {
		return Artifact{}, err
	}
	cfg := content.NewDescriptorFromBytes(MediaTypeConfig, cfgJSON)
	if err := pushBlob(ctx, repo, cfg, cfgJSON); err != nil {
		return Artifact{}, fmt.Errorf("push %s: %w", r, classify(err))
	}
	annotations, err := sum.annotations(created)
	if err != nil {
		return Artifact{}, err
	}
	var packed manifestCapture
	desc, err := oras.PackManifest(ctx, &packed, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{
		Layers: []ocispec.Descriptor{layer}, ConfigDescriptor: &cfg, ManifestAnnotations: annotations,
	})
	if err != nil {
		return Artifact{}, fmt.Errorf("push %s: pack the manifest: %w", r, err)
	}
	if err := repo.PushReference(ctx, desc, bytes.NewReader(packed.b), r.Reference); err != nil {
		return Artifact{}, fmt.Errorf("push %s: %w", r, classify(err))
	}
	a := Artifact{Reference: r.String(), Digest: desc.Digest.String(), ModuleDigest: layer.Digest.String(),
		MediaType: MediaTypeWasm, Summary: sum, Wasm: wasm}
	if c.cache.enabled() {
		if a.Path, err = c.cache.store(r, desc.Digest, packed.b, layer.Digest, wasm); err != nil {
			c.opts.Logger.Warn("pushed module not cached", "reference", r.String(), "error", err)
		}
	}
	return a, nil
}

// ParsePushReference parses a reference Push accepts: one with a tag.
func ParsePushReference(ref string) (registry.Reference, error) {
	r, err := ParseReference(ref)
	if err != nil {
		return registry.Reference{}, err
	}
	if r.ValidateReferenceAsTag() != nil {
		return registry.Reference{}, fmt.Errorf("%w %q: push needs a tag, e.g. %s/%s:v1", ErrReference, ref, r.Registry, r.Repository)
	}
	return r, nil
}

// manifestCapture is the target oras.PackManifest writes the manifest to,
// so that it can be pushed under its tag in one request.
type manifestCapture struct{ b []byte }

func (m *manifestCapture) Push(_ context.Context, desc ocispec.Descriptor, r io.Reader) error {
	b, err := content.ReadAll(r, desc)
	m.b = b
	return err
}

// pushBlob uploads a blob unless the repository has it already.
func pushBlob(ctx context.Context, repo interface {
	content.Pusher
	content.ReadOnlyStorage
}, desc ocispec.Descriptor, b []byte) error {
	if ok, err := repo.Exists(ctx, desc); err != nil {
		return err
	} else if ok {
		return nil
	}
	return repo.Push(ctx, desc, bytes.NewReader(b))
}

// annotations renders the summary as manifest annotations.
func (s Summary) annotations(created string) (map[string]string, error) {
	handlers := s.Handlers
	if handlers == nil {
		handlers = []Handler{}
	}
	hs, err := json.Marshal(handlers)
	if err != nil {
		return nil, err
	}
	a := map[string]string{
		ocispec.AnnotationCreated: created,
		AnnotationABIVersion:      strconv.Itoa(s.ABIVersion),
		AnnotationHandlers:        string(hs),
	}
	if s.Name != "" {
		a[ocispec.AnnotationTitle] = s.Name
		a[AnnotationModuleName] = s.Name
	}
	if s.Version != "" {
		a[ocispec.AnnotationVersion] = s.Version
		a[AnnotationModuleVersion] = s.Version
	}
	return a, nil
}

// summaryOf reads a summary back from manifest annotations; what is missing
// or malformed (an artifact pushed by another tool) stays zero.
func summaryOf(a map[string]string) Summary {
	s := Summary{Name: a[AnnotationModuleName], Version: a[AnnotationModuleVersion]}
	if s.Name == "" {
		s.Name = a[ocispec.AnnotationTitle]
	}
	if s.Version == "" {
		s.Version = a[ocispec.AnnotationVersion]
	}
	s.ABIVersion, _ = strconv.Atoi(a[AnnotationABIVersion])
	_ = json.Unmarshal([]byte(a[AnnotationHandlers]), &s.Handlers)
	return s
}
