package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/oci"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Classes of the errors of [Push], [Pull] and of [Run] for module arguments
// that are OCI references, for errors.Is.
var (
	// ErrReference: a reference cannot be parsed, or lacks a tag (push) or
	// a tag or digest (pull).
	ErrReference = oci.ErrReference
	// ErrRegistryUnreachable: the registry did not answer, and the cache
	// could not stand in for it.
	ErrRegistryUnreachable = oci.ErrUnreachable
	// ErrRegistryAuth: the registry refused the credentials, or wants some.
	ErrRegistryAuth = oci.ErrUnauthorized
	// ErrArtifactNotFound: no such repository, tag or digest.
	ErrArtifactNotFound = oci.ErrNotFound
	// ErrNotModuleArtifact: the artifact has no wasm layer (or several).
	ErrNotModuleArtifact = oci.ErrNoWasmLayer
	// ErrDigestMismatch: content read does not match its digest.
	ErrDigestMismatch = oci.ErrDigestMismatch
	// ErrNotWasm: a pulled module is not WebAssembly.
	ErrNotWasm = oci.ErrNotWasm
)

// Registry configures how modules travel as OCI artifacts (see [Push],
// [Pull]); [Registry.withDefaults] is the one place that sets defaults.
type Registry struct {
	// CacheDir keeps pulled modules by digest (<CacheDir>/sha256/<hex>.wasm),
	// their manifests, and the digest each tag last resolved to, so that a
	// host restarts without the registry. Default <user cache
	// folder>/kopf-wasm/modules, else <temp folder>/kopf-wasm/modules.
	CacheDir string
	// PlainHTTP speaks HTTP rather than HTTPS to registries. Registries on
	// localhost, 127.0.0.1 and [::1] always get plain HTTP.
	PlainHTTP bool
	// DockerConfig is the Docker config file holding credentials (written by
	// `docker login` or `oras login`). Default $DOCKER_CONFIG/config.json,
	// else ~/.docker/config.json; without one, access is anonymous.
	DockerConfig string
	// Logger receives the warning when a tag is served from the cache
	// because the registry is unreachable. Default slog.Default().
	Logger *slog.Logger
}

// ModuleCacheDir is the folder of pulled modules: CacheDir, or its
// default in the user's cache folder.
func (r Registry) ModuleCacheDir() string {
	if r.CacheDir != "" {
		return r.CacheDir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "kopf-wasm", "modules")
}

func (r Registry) withDefaults() Registry {
	r.CacheDir = r.ModuleCacheDir()
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r
}

func (r Registry) client() (*oci.Client, error) {
	r = r.withDefaults()
	return oci.New(oci.Options{CacheDir: r.CacheDir, PlainHTTP: r.PlainHTTP, DockerConfig: r.DockerConfig, Logger: r.Logger})
}

// Artifact is a module pushed to or pulled from a registry.
type Artifact struct {
	// Reference is the reference as parsed, without oci://.
	Reference string
	// Digest is the manifest's digest: host/repo@<Digest> pins this version.
	Digest string
	// ModuleDigest is the module's own digest (its wasm layer's), the one
	// [Inspect] reports for the same bytes.
	ModuleDigest string
	// Name, Version and Handlers ("id=kind") are the module's summary from
	// the manifest's annotations (empty for artifacts other tools pushed).
	Name, Version string
	Handlers      []string
	// Path is the module's file in the cache.
	Path string
	// Stale: the registry was unreachable and a tag was served from the
	// cache with the digest last seen for it (a warning was logged).
	Stale bool
}

// IsReference reports whether a module argument names an OCI artifact
// rather than a file: it starts with oci://, or it contains ':' or '@' and
// names no existing file or folder. So "./mod.wasm" is a file and
// "ghcr.io/acme/handlers:v1" a reference; "oci://" forces one.
func IsReference(arg string) bool { return oci.IsReference(arg) }

// Push validates the module file by loading it (as [Inspect] does), then
// pushes it to ref (host[:port]/repository:tag) in the CNCF wasm artifact
// layout with its handler summary in the manifest's annotations, and puts
// it into the cache.
func Push(ctx context.Context, file, ref string, reg Registry) (Artifact, error) {
	c, err := reg.client()
	if err != nil {
		return Artifact{}, err
	}
	if _, err := oci.ParsePushReference(ref); err != nil {
		return Artifact{}, err
	}
	s := settings.Default()
	rt, err := modules.NewRuntime(s.Wasm, discardLogger)
	if err != nil {
		return Artifact{}, err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	mod, err := modules.Load(ctx, rt, file)
	if err != nil {
		return Artifact{}, err
	}
	wasm, err := os.ReadFile(file)
	if err != nil {
		return Artifact{}, fmt.Errorf("module %s: %w", file, modules.NotFound(err))
	}
	m := mod.Manifest()
	sum := oci.Summary{Name: m.Module.Name, Version: m.Module.Version, ABIVersion: m.ABIVersion}
	for _, h := range m.Handlers {
		sum.Handlers = append(sum.Handlers, oci.Handler{ID: h.ID, Kind: string(h.Kind)})
	}
	a, err := c.Push(ctx, wasm, sum, ref)
	if err != nil {
		return Artifact{}, err
	}
	return artifactOf(a), nil
}

// Pull fetches the module artifact ref names (a tag or a digest), verifies
// its digests and caches it; see [Registry.CacheDir] for what is served
// without a registry. The module is not loaded.
func Pull(ctx context.Context, ref string, reg Registry) (Artifact, error) {
	c, err := reg.client()
	if err != nil {
		return Artifact{}, err
	}
	a, err := c.Pull(ctx, ref)
	if err != nil {
		return Artifact{}, err
	}
	return artifactOf(a), nil
}

func artifactOf(a oci.Artifact) Artifact {
	out := Artifact{Reference: a.Reference, Digest: a.Digest, ModuleDigest: a.ModuleDigest,
		Name: a.Summary.Name, Version: a.Summary.Version, Path: a.Path, Stale: a.Stale}
	for _, h := range a.Summary.Handlers {
		out.Handlers = append(out.Handlers, h.ID+"="+h.Kind)
	}
	return out
}

// newPuller pulls modules named by OCI references through o.Registry,
// which logs to o.Logger unless it has its own logger.
func (o Options) newPuller() (*modules.Puller, error) {
	reg := o.Registry
	if reg.Logger == nil {
		reg.Logger = o.Logger
	}
	c, err := reg.client()
	if err != nil {
		return nil, err
	}
	v, err := o.Verify.verifier(reg)
	if err != nil {
		return nil, err
	}
	return modules.NewPuller(c, o.Logger, v), nil
}
