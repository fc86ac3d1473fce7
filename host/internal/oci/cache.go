package oci

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry"
)

// cache is the on-disk module cache described in the package comment. The
// zero value (no folder) caches nothing.
type cache struct {
	dir string
}

func (c cache) enabled() bool { return c.dir != "" }

func (c cache) modulePath(d digest.Digest) string {
	return filepath.Join(c.dir, d.Algorithm().String(), d.Encoded()+".wasm")
}

func (c cache) manifestPath(d digest.Digest) string {
	return filepath.Join(c.dir, "manifests", d.Algorithm().String(), d.Encoded()+".json")
}

// tagPath names a tag's record by a hash of the reference, so that hosts,
// ports and repository paths need no escaping.
func (c cache) tagPath(r registry.Reference) string {
	sum := sha256.Sum256([]byte(r.String()))
	return filepath.Join(c.dir, "tags", hex.EncodeToString(sum[:]))
}

// read returns the content stored at path if it matches d; a missing or
// damaged entry is a miss (a damaged one is removed).
func (c cache) read(path string, d digest.Digest) ([]byte, bool) {
	if !c.enabled() || d.Validate() != nil {
		return nil, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	if d.Algorithm().FromBytes(b) != d {
		_ = os.Remove(path)
		return nil, false
	}
	return b, true
}

func (c cache) module(d digest.Digest) ([]byte, bool)   { return c.read(c.modulePath(d), d) }
func (c cache) manifest(d digest.Digest) ([]byte, bool) { return c.read(c.manifestPath(d), d) }

// tag returns the manifest digest last recorded for a tag reference.
func (c cache) tag(r registry.Reference) (digest.Digest, bool) {
	if !c.enabled() {
		return "", false
	}
	b, err := os.ReadFile(c.tagPath(r))
	if err != nil {
		return "", false
	}
	ref, dig, ok := strings.Cut(strings.TrimSpace(string(b)), "\n")
	d, err := digest.Parse(dig)
	if !ok || ref != r.String() || err != nil {
		return "", false
	}
	return d, true
}

// store records a pulled or pushed artifact: the module, the manifest and,
// for a tag reference, the digest the tag resolved to. It returns the
// module's path.
func (c cache) store(r registry.Reference, manifestDigest digest.Digest, manifest []byte, moduleDigest digest.Digest, wasm []byte) (string, error) {
	path := c.modulePath(moduleDigest)
	if err := writeAtomic(path, wasm); err != nil {
		return "", err
	}
	if err := writeAtomic(c.manifestPath(manifestDigest), manifest); err != nil {
		return "", err
	}
	if r.ValidateReferenceAsTag() == nil {
		record := r.String() + "\n" + manifestDigest.String() + "\n"
		if err := writeAtomic(c.tagPath(r), []byte(record)); err != nil {
			return "", err
		}
	}
	return path, nil
}

// writeAtomic writes b to path through a temporary file in the same folder
// and a rename, so that readers see the old content or the new, never part.
func writeAtomic(path string, b []byte) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name()) // don't leave partial files behind
		}
	}()
	_, werr := f.Write(b)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrCache, path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("%w: %w", ErrCache, err)
	}
	return nil
}
