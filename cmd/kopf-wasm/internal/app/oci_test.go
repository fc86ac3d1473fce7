package app

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// tamperingRegistry is an in-memory registry that serves every blob whose
// path ends in one of the tampered digests with its last byte changed.
func tamperingRegistry(t *testing.T, tampered *[]string) (*httptest.Server, string) {
	t.Helper()
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, d := range *tampered {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+d) {
				rec := httptest.NewRecorder()
				reg.ServeHTTP(rec, r)
				body := rec.Body.Bytes()
				body[len(body)-1] ^= 0xff
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write(body)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

// pushNotAModule pushes an artifact whose only layer is not wasm.
func pushNotAModule(t *testing.T, ref string) {
	t.Helper()
	repo, err := remote.NewRepository(ref)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	layer, err := oras.PushBytes(t.Context(), repo, "application/vnd.oci.image.layer.v1.tar", []byte("not a module"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := oras.PackManifest(t.Context(), repo, oras.PackManifestVersion1_1, "application/x-other",
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(t.Context(), desc, repo.Reference.Reference); err != nil {
		t.Fatal(err)
	}
}

var digestLine = regexp.MustCompile(`(?m)^Digest: +(sha256:[0-9a-f]{64})$`)

// TestPushPullRun: push a module, pull it by tag into a file, then run it
// by digest with the registry gone: the module comes from the cache and
// run gets as far as the (unreachable) cluster.
func TestPushPullRun(t *testing.T) {
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv, addr := tamperingRegistry(t, &[]string{})
	mod := wasmtest.Path(t, "kopfexample")
	ref := addr + "/operators/kopfexample:v1"

	r := run(t.Context(), "", "push", mod, ref)
	m := digestLine.FindStringSubmatch(r.out)
	if r.code != 0 || m == nil || !strings.Contains(r.out, "Module:  kopfexample 0.1.0, 3 handlers, sha256:") ||
		!strings.Contains(r.out, "Pinned:  "+addr+"/operators/kopfexample@"+m[1]) {
		t.Fatalf("push: %+v", r)
	}
	digest := m[1]

	out := filepath.Join(t.TempDir(), "pulled.wasm")
	r = run(t.Context(), "", "pull", ref, "-o", out)
	want, _ := os.ReadFile(mod)
	got, err := os.ReadFile(out)
	if r.code != 0 || !strings.Contains(r.out, "Digest:  "+digest) || err != nil || !bytes.Equal(got, want) {
		t.Errorf("pull -o: %+v (file: %v)", r, err)
	}

	srv.Close()
	kubeconfig := writeFile(t, t.TempDir(), "kubeconfig", unreachableKubeconfig)
	r = run(t.Context(), "", "run", "--kubeconfig", kubeconfig, "--log-format", "json", "oci://"+addr+"/operators/kopfexample@"+digest)
	if r.code != 1 || !strings.Contains(r.errOut, `"msg":"module pulled"`) ||
		!strings.Contains(r.errOut, "https://127.0.0.1:1") {
		t.Errorf("run by digest without the registry: %+v; want the module pulled from the cache and loaded (that comes before the cluster), then the cluster unreachable", r)
	}
	r = run(t.Context(), "", "pull", ref)
	if r.code != 0 || !strings.Contains(r.errOut, "registry unreachable: serving the digest last seen for the tag") {
		t.Errorf("pull of a tag without the registry: %+v; want the cached digest and a warning", r)
	}
}

// TestRegistryBadInput: every registry mistake is one line that says what
// to do.
func TestRegistryBadInput(t *testing.T) {
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	var tampered []string
	_, addr := tamperingRegistry(t, &tampered)
	gone := httptest.NewServer(http.NotFoundHandler())
	goneAddr := strings.TrimPrefix(gone.URL, "http://")
	gone.Close()
	mod := wasmtest.Path(t, "kopfexample")
	notWasm := writeFile(t, t.TempDir(), "notwasm.wasm", "hello, I am text")
	pushNotAModule(t, addr+"/other/thing:v1")

	// A module pushed, then served tampered to a host with an empty cache.
	r := run(t.Context(), "", "push", mod, addr+"/operators/tampered:v1")
	if r.code != 0 {
		t.Fatalf("push: %+v", r)
	}
	h := sha256File(t, mod)
	tampered = append(tampered, h)
	kubeconfig := writeFile(t, t.TempDir(), "kubeconfig", unreachableKubeconfig)

	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"unreachable registry", nil, []string{"pull", goneAddr + "/operators/kopfexample:v1"}, 1,
			"registry unreachable: "},
		{"unreachable registry, run", nil, []string{"run", "--kubeconfig", kubeconfig, goneAddr + "/operators/kopfexample:v1"}, 1,
			"check that the registry runs"},
		{"unknown tag", nil, []string{"pull", addr + "/operators/tampered:v9"}, 1,
			"not found: the registry has no such repository, tag or digest; check the repository and the tag or digest"},
		{"no wasm layer", nil, []string{"pull", addr + "/other/thing:v1"}, 1,
			"no wasm layer: the manifest's layers are application/vnd.oci.image.layer.v1.tar, none of them application/wasm"},
		{"digest mismatch", map[string]string{"KOPF_WASM_CACHE": t.TempDir()}, []string{"pull", addr + "/operators/tampered:v1"}, 1,
			"digest mismatch: the registry served content that does not match its digest or size"},
		{"push a file that is not wasm", nil, []string{"push", notWasm, addr + "/operators/x:v1"}, 1, "not a WebAssembly module"},
		{"push without a tag", nil, []string{"push", mod, addr + "/operators/x"}, 2, "push needs a tag"},
		{"pull without a registry", nil, []string{"pull", "kopfexample:v1"}, 2, "write it as host[:port]/repository:tag"},
		{"push without REF", nil, []string{"push", mod}, 2, "missing MODULE.wasm and REF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v) // the pusher's cache would hide the tampering
			}
			r := run(t.Context(), "", tt.args...)
			lines := strings.Split(strings.TrimSuffix(r.errOut, "\n"), "\n")
			if r.code != tt.code || !strings.Contains(r.errOut, tt.want) || len(lines) != 1 || !strings.HasPrefix(lines[0], "Error: ") {
				t.Errorf("exit %d, stderr %q; want exit %d and one Error line with %q", r.code, r.errOut, tt.code, tt.want)
			}
		})
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	r := run(t.Context(), "", "inspect", "-o", "json", path)
	m := regexp.MustCompile(`"digest": "(sha256:[0-9a-f]{64})"`).FindStringSubmatch(r.out)
	if m == nil {
		t.Fatalf("inspect: %+v", r)
	}
	return m[1]
}
