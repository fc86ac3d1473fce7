package imagebake

import (
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Binary is the host's binary for one platform.
type Binary struct {
	// OS and Architecture name the platform, as Go's GOOS and GOARCH do.
	OS, Architecture string
	// Path is the statically linked binary.
	Path string
}

// Options describe the image [Build] makes.
type Options struct {
	// Binaries are the host for each platform. Required.
	Binaries []Binary
	// CACerts is a PEM bundle of CA certificates. Required.
	CACerts []byte
	// Created is the image's time and every file's; zero means the epoch.
	// SOURCE_DATE_EPOCH is the usual source.
	Created time.Time
	// Version, Revision and Source fill the OCI labels.
	Version, Revision, Source string
}

// Entrypoint is the host image's entrypoint.
const Entrypoint = "/kopf-wasm"

// Build assembles the host's multi-platform image index (see the package
// comment).
func Build(opts Options) (v1.ImageIndex, error) {
	if len(opts.Binaries) == 0 || len(opts.CACerts) == 0 {
		return nil, fmt.Errorf("image: binaries and CA certificates are required")
	}
	base, err := layer(baseFiles(opts.CACerts), opts.Created)
	if err != nil {
		return nil, err
	}
	var idx v1.ImageIndex = mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range opts.Binaries {
		data, err := os.ReadFile(b.Path)
		if err != nil {
			return nil, fmt.Errorf("image: the %s/%s binary: %w", b.OS, b.Architecture, err)
		}
		bin, err := layer([]file{{path: strings.TrimPrefix(Entrypoint, "/"), mode: 0o755, data: data}}, opts.Created)
		if err != nil {
			return nil, err
		}
		img, err := platformImage(opts, b, base, bin)
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: b.OS, Architecture: b.Architecture}}})
	}
	return idx, nil
}

func platformImage(opts Options, b Binary, layers ...v1.Layer) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = b.OS, b.Architecture
	cf.Created = v1.Time{Time: opts.Created.UTC()}
	cf.Config.Entrypoint = []string{Entrypoint}
	cf.Config.User = nonRoot + ":" + nonRoot
	cf.Config.WorkingDir = "/home/nonroot"
	cf.Config.Env = []string{"PATH=/", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=/home/nonroot"}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       "kopf-wasm",
		"org.opencontainers.image.description": "Kopf's operator model with the handlers in WebAssembly modules: the host",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     opts.Version,
		"org.opencontainers.image.revision":    opts.Revision,
		"org.opencontainers.image.source":      opts.Source,
		"org.opencontainers.image.created":     opts.Created.UTC().Format(time.RFC3339),
	}
	cf.History = nil
	return mutate.ConfigFile(img, cf)
}

// ModulesDir is where [Bake] puts modules.
const ModulesDir = "/modules"

// Bake returns base (a host image index) with the module wasm added to
// every platform at /modules/NAME, and a command serving it in every
// namespace: run -A /modules/NAME, then extra arguments.
func Bake(base v1.ImageIndex, name string, wasm []byte, extra ...string) (v1.ImageIndex, error) {
	if name == "" || strings.ContainsAny(name, "/\\") {
		return nil, fmt.Errorf("image: module name %q: want a file name", name)
	}
	im, err := base.IndexManifest()
	if err != nil {
		return nil, err
	}
	modPath := path.Join(ModulesDir, name)
	var idx v1.ImageIndex = mutate.IndexMediaType(empty.Index, im.MediaType)
	for _, d := range im.Manifests {
		img, err := base.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		l, err := layer([]file{
			{path: strings.TrimPrefix(ModulesDir, "/"), mode: 0o755, dir: true},
			{path: strings.TrimPrefix(modPath, "/"), mode: 0o644, data: wasm},
		}, cf.Created.Time)
		if err != nil {
			return nil, err
		}
		img, err = mutate.AppendLayers(img, l)
		if err != nil {
			return nil, err
		}
		cf, err = img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.Config.Cmd = append([]string{"run", "-A", modPath}, extra...)
		if cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		cf.Config.Labels["org.opencontainers.image.title"] = "kopf-wasm with " + name
		cf.History = nil
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: d.Platform}})
	}
	return idx, nil
}
