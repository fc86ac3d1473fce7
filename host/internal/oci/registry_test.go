package oci

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
)

// testRegistry is an in-memory OCI registry on a local port. Blobs whose
// digest is in tamper are served with their last byte changed.
type testRegistry struct {
	*httptest.Server
	host string

	mu     sync.Mutex
	tamper map[string]bool
}

func newRegistry(t *testing.T) *testRegistry {
	t.Helper()
	return newRegistryWith(t)
}

// newRegistryWith is newRegistry with more options of the registry (such as
// registry.WithReferrersSupport).
func newRegistryWith(t *testing.T, opts ...registry.Option) *testRegistry {
	t.Helper()
	reg := registry.New(append([]registry.Option{registry.Logger(log.New(io.Discard, "", 0))}, opts...)...)
	tr := &testRegistry{tamper: map[string]bool{}}
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.mu.Lock()
		tampered := false
		for d := range tr.tamper {
			tampered = tampered || (r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+d))
		}
		tr.mu.Unlock()
		if !tampered {
			reg.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		reg.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if len(body) > 0 {
			body[len(body)-1] ^= 0xff
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(tr.Close)
	tr.host = strings.TrimPrefix(tr.URL, "http://")
	return tr
}

// ref is a reference into the test registry.
func (tr *testRegistry) ref(s string) string { return tr.host + "/" + s }

// tamperWith makes the registry corrupt the blob with digest d.
func (tr *testRegistry) tamperWith(d string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.tamper[d] = true
}

// pushRaw pushes an artifact with the given layers (media type and content)
// as another tool would, with the older wasm config type, and tags it.
func (tr *testRegistry) pushRaw(t *testing.T, repoTag string, layers ...[2]string) {
	t.Helper()
	ctx := t.Context()
	ref := tr.ref(repoTag)
	repo, err := remote.NewRepository(ref)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	var descs []ocispec.Descriptor
	for _, l := range layers {
		d, err := oras.PushBytes(ctx, repo, l[0], []byte(l[1]))
		if err != nil {
			t.Fatal(err)
		}
		descs = append(descs, d)
	}
	cfg, err := oras.PushBytes(ctx, repo, "application/vnd.wasm.config.v1+json", []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{Layers: descs, ConfigDescriptor: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, repo.Reference.Reference); err != nil {
		t.Fatal(err)
	}
}

// manifest fetches a manifest as the registry stores it.
func (tr *testRegistry) manifest(t *testing.T, repo, reference string) ocispec.Manifest {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tr.URL+"/v2/"+repo+"/manifests/"+reference, nil)
	req.Header.Set("Accept", ocispec.MediaTypeImageManifest)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m ocispec.Manifest
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// logBuffer is a logger whose output the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newClient returns a client with its own cache and an empty Docker config,
// and the buffer its warnings go to.
func newClient(t *testing.T, cacheDir string) (*Client, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	c, err := New(Options{
		CacheDir:     cacheDir,
		DockerConfig: t.TempDir() + "/config.json",
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, logs
}

// fakeWasm is bytes that pass the magic-number check (the oci package does
// not load modules).
func fakeWasm(body string) []byte { return append([]byte("\x00asm\x01\x00\x00\x00"), body...) }
