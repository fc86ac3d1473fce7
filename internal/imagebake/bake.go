package imagebake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host"
)

// HostImage describes the host's container image that [BuildHost] makes.
type HostImage struct {
	// Binaries are statically linked host binaries by platform, "os/arch"
	// (e.g. "linux/arm64") to a file.
	Binaries map[string]string
	// CACerts is a PEM bundle of CA certificates (e.g.
	// /etc/ssl/certs/ca-certificates.crt).
	CACerts string
	// Created is the time of the image and its files (SOURCE_DATE_EPOCH);
	// zero: the epoch, so that the same inputs give the same digest.
	Created time.Time
	// Version, Revision and Source are OCI labels.
	Version, Revision, Source string
}

// BuildHost builds the host's multi-platform image without a Docker
// daemon (an empty base, CA certificates, the non-root user 65532, the
// binary as the entrypoint /kopf-wasm, OCI labels; reproducible) and
// pushes it to ref. It returns the pushed digest reference.
func BuildHost(ctx context.Context, ref string, hi HostImage) (string, error) {
	certs, err := os.ReadFile(hi.CACerts)
	if err != nil {
		return "", fmt.Errorf("%w: CA certificates: %w", host.ErrUsage, err)
	}
	opts := Options{CACerts: certs, Created: hi.Created, Version: hi.Version, Revision: hi.Revision, Source: hi.Source}
	for platform, path := range hi.Binaries {
		osName, arch, ok := strings.Cut(platform, "/")
		if !ok || osName == "" || arch == "" {
			return "", fmt.Errorf("%w: platform %q: want os/arch, e.g. linux/amd64", host.ErrUsage, platform)
		}
		opts.Binaries = append(opts.Binaries, Binary{OS: osName, Architecture: arch, Path: path})
	}
	slices.SortFunc(opts.Binaries, func(a, b Binary) int {
		return strings.Compare(a.OS+"/"+a.Architecture, b.OS+"/"+b.Architecture)
	})
	idx, err := Build(opts)
	if err != nil {
		return "", err
	}
	return Push(ctx, ref, idx)
}

// BakeModule pulls the host image base, adds the module file at
// /modules/<file name> to every platform with the command
// `run -A /modules/<file name> ARGS...`, and pushes the result to ref
// (Kopf's "a Dockerfile and a Python file" in one command). It returns the
// pushed digest reference.
func BakeModule(ctx context.Context, base, module, ref string, args ...string) (string, error) {
	wasm, err := os.ReadFile(module)
	if err != nil {
		return "", fmt.Errorf("%w: module: %w", host.ErrUsage, err)
	}
	if _, _, err := host.Inspect(ctx, module, nil); err != nil {
		return "", fmt.Errorf("module %s does not load, so it is not baked: %w", module, err)
	}
	idx, err := Pull(ctx, base)
	if err != nil {
		return "", err
	}
	baked, err := Bake(idx, filepath.Base(module), wasm, args...)
	if err != nil {
		return "", err
	}
	return Push(ctx, ref, baked)
}
