package oci

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
)

var summary = Summary{Name: "kopfexample", Version: "0.1.0", ABIVersion: 1,
	Handlers: []Handler{{ID: "create_fn", Kind: "create"}, {ID: "update_fn", Kind: "update"}}}

func TestPushPull(t *testing.T) {
	reg := newRegistry(t)
	c, _ := newClient(t, t.TempDir())
	wasm := fakeWasm("v1")
	pushed, err := c.Push(t.Context(), wasm, summary, reg.ref("handlers/example:v1"))
	if err != nil {
		t.Fatal(err)
	}
	if pushed.ModuleDigest != digest.FromBytes(wasm).String() || !strings.HasPrefix(pushed.Digest, "sha256:") {
		t.Errorf("push: digest %s, module %s", pushed.Digest, pushed.ModuleDigest)
	}

	m := reg.manifest(t, "handlers/example", "v1")
	if m.Config.MediaType != MediaTypeConfig || len(m.Layers) != 1 || m.Layers[0].MediaType != MediaTypeWasm ||
		m.Annotations[AnnotationHandlers] != `[{"id":"create_fn","kind":"create"},{"id":"update_fn","kind":"update"}]` ||
		m.Annotations["org.opencontainers.image.title"] != "kopfexample" || m.Annotations[AnnotationABIVersion] != "1" {
		t.Errorf("manifest as stored: %+v", m)
	}

	// A second host, with a cache of its own, pulls by tag and by digest.
	c2, _ := newClient(t, t.TempDir())
	for _, ref := range []string{reg.ref("handlers/example:v1"), "oci://" + reg.ref("handlers/example@"+pushed.Digest)} {
		got, err := c2.Pull(t.Context(), ref)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		if got.Digest != pushed.Digest || got.ModuleDigest != pushed.ModuleDigest || !bytes.Equal(got.Wasm, wasm) ||
			!reflect.DeepEqual(got.Summary, summary) || got.MediaType != MediaTypeWasm || got.Stale {
			t.Errorf("pull %s: %+v", ref, got)
		}
		if b, err := os.ReadFile(got.Path); err != nil || !bytes.Equal(b, wasm) {
			t.Errorf("pull %s: cached file %s: %v", ref, got.Path, err)
		}
		if want := filepath.Join("sha256", digest.FromBytes(wasm).Encoded()+".wasm"); !strings.HasSuffix(got.Path, want) {
			t.Errorf("cached at %s, want a path ending in %s", got.Path, want)
		}
	}
}

func TestTagMoves(t *testing.T) {
	reg := newRegistry(t)
	c, _ := newClient(t, t.TempDir())
	ref := reg.ref("handlers/example:stable")
	v1, err := c.Push(t.Context(), fakeWasm("v1"), summary, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Pull(t.Context(), ref); err != nil || got.Digest != v1.Digest {
		t.Fatalf("pull before the move: %+v, %v", got, err)
	}
	v2, err := c.Push(t.Context(), fakeWasm("v2"), summary, ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Pull(t.Context(), ref)
	if err != nil || got.Digest != v2.Digest || got.Digest == v1.Digest || string(got.Wasm[8:]) != "v2" {
		t.Errorf("pull after the move: %+v, %v; want digest %s", got, err, v2.Digest)
	}
	// The old digest is still pullable.
	if old, err := c.Pull(t.Context(), reg.ref("handlers/example@"+v1.Digest)); err != nil || string(old.Wasm[8:]) != "v1" {
		t.Errorf("pull of the old digest: %+v, %v", old, err)
	}
}

func TestLegacyLayer(t *testing.T) {
	reg := newRegistry(t)
	reg.pushRaw(t, "legacy/mod:v1", [2]string{MediaTypeWasmLegacy, string(fakeWasm("legacy"))})
	c, _ := newClient(t, "")
	got, err := c.Pull(t.Context(), reg.ref("legacy/mod:v1"))
	if err != nil || got.MediaType != MediaTypeWasmLegacy || string(got.Wasm[8:]) != "legacy" || got.Path != "" {
		t.Errorf("pull: %+v, %v", got, err)
	}
}

// TestOffline: a host restarts with no registry. Digests come from the
// cache; a tag comes from the cache with a warning; what was never pulled
// is an error.
func TestOffline(t *testing.T) {
	reg := newRegistry(t)
	dir := t.TempDir()
	c, logs := newClient(t, dir)
	ref := reg.ref("handlers/example:v1")
	pushed, err := c.Push(t.Context(), fakeWasm("v1"), summary, ref)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.Push(t.Context(), fakeWasm("other"), summary, reg.ref("handlers/other:v1"))
	if err != nil {
		t.Fatal(err)
	}
	c2, logs2 := newClient(t, dir) // a restarted host on the same cache
	if _, err := c2.Pull(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
	_ = os.RemoveAll(filepath.Join(dir, "sha256", digest.Digest(other.ModuleDigest).Encoded()+".wasm"))
	reg.Close()

	got, err := c2.Pull(t.Context(), reg.ref("handlers/example@"+pushed.Digest))
	if err != nil || !got.Cached || got.Stale || string(got.Wasm[8:]) != "v1" {
		t.Errorf("pull by digest offline: %+v, %v", got, err)
	}
	if logs2.String() != "" {
		t.Errorf("pull by digest from the cache logged %q", logs2.String())
	}
	got, err = c2.Pull(t.Context(), ref)
	if err != nil || !got.Stale || got.Digest != pushed.Digest {
		t.Errorf("pull by tag offline: %+v, %v", got, err)
	}
	if !strings.Contains(logs2.String(), "registry unreachable: serving the digest last seen for the tag") {
		t.Errorf("no warning for the stale tag: %q", logs2.String())
	}
	for _, ref := range []string{reg.ref("handlers/example:never"), reg.ref("handlers/other@" + other.Digest)} {
		if _, err := c2.Pull(t.Context(), ref); !errors.Is(err, ErrUnreachable) {
			t.Errorf("pull %s offline: %v; want ErrUnreachable", ref, err)
		}
	}
	_ = logs
}

func TestBadArtifacts(t *testing.T) {
	reg := newRegistry(t)
	c, _ := newClient(t, t.TempDir())
	reg.pushRaw(t, "bad/nowasm:v1", [2]string{"application/octet-stream", "data"})
	reg.pushRaw(t, "bad/twowasm:v1", [2]string{MediaTypeWasm, string(fakeWasm("a"))}, [2]string{MediaTypeWasm, string(fakeWasm("b"))})
	reg.pushRaw(t, "bad/text:v1", [2]string{MediaTypeWasm, "hello, I am text"})
	tampered, err := c.Push(t.Context(), fakeWasm("tampered"), summary, reg.ref("bad/tampered:v1"))
	if err != nil {
		t.Fatal(err)
	}
	reg.tamperWith(tampered.ModuleDigest)
	fresh, _ := newClient(t, t.TempDir()) // the pusher's cache would hide the tampering

	for _, tc := range []struct {
		name, ref string
		want      error
		text      string
	}{
		{"unknown tag", reg.ref("bad/nowasm:v9"), ErrNotFound, "not found"},
		{"unknown repository", reg.ref("nope/nope:v1"), ErrNotFound, "not found"},
		{"no wasm layer", reg.ref("bad/nowasm:v1"), ErrNoWasmLayer, "layers are application/octet-stream, none of them application/wasm"},
		{"two wasm layers", reg.ref("bad/twowasm:v1"), ErrNoWasmLayer, "2 wasm layers"},
		{"not wasm", reg.ref("bad/text:v1"), ErrNotWasm, "magic number"},
		{"tampered layer", reg.ref("bad/tampered:v1"), ErrDigestMismatch, tampered.ModuleDigest},
		{"no tag or digest", reg.ref("bad/nowasm"), ErrReference, "name a tag or a digest"},
		{"no registry", "nowasm:v1", ErrReference, "host[:port]/repository:tag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fresh.Pull(t.Context(), tc.ref)
			t.Log(err)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) || strings.Contains(err.Error(), "\n") {
				t.Errorf("pull %s: %v; want %v and %q on one line", tc.ref, err, tc.want, tc.text)
			}
		})
	}
	if _, err := c.Push(t.Context(), fakeWasm("x"), summary, reg.ref("bad/x@"+tampered.Digest)); !errors.Is(err, ErrReference) {
		t.Errorf("push by digest: %v; want ErrReference", err)
	}
	if _, err := c.Push(t.Context(), []byte("text"), summary, reg.ref("bad/x:v1")); !errors.Is(err, ErrNotWasm) {
		t.Errorf("push of text: %v; want ErrNotWasm", err)
	}
}

// TestDamagedCache: a cache entry that no longer matches its digest is a
// miss, fetched again from the registry.
func TestDamagedCache(t *testing.T) {
	reg := newRegistry(t)
	dir := t.TempDir()
	c, _ := newClient(t, dir)
	pushed, err := c.Push(t.Context(), fakeWasm("v1"), summary, reg.ref("handlers/example:v1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pushed.Path, fakeWasm("evil"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := c.Pull(t.Context(), reg.ref("handlers/example@"+pushed.Digest))
	if err != nil || got.Cached || string(got.Wasm[8:]) != "v1" {
		t.Errorf("pull over a damaged cache: %+v, %v", got, err)
	}
	if b, _ := os.ReadFile(pushed.Path); string(b[8:]) != "v1" {
		t.Errorf("the cache entry was not repaired: %q", b)
	}
}

func TestIsLocal(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost:5000", true},
		{"localhost", true},
		{"127.0.0.1:5000", true},
		{"[::1]:5000", true},
		{"127.1.2.3", true},
		{"ghcr.io", false},
		{"registry.example.com:5000", false},
		{"10.0.0.1:5000", false},
	} {
		if got := isLocal(tc.host); got != tc.want {
			t.Errorf("isLocal(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}
