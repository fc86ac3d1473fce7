package imagebake

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestBuildPushPull builds the host's image for linux/amd64 and
// linux/arm64 from the repository, twice (same digest), pushes it to an
// in-process registry, pulls it back, checks its platforms and config,
// runs the extracted binary's version, and bakes a module into it.
func TestBuildPushPull(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Checked before the builds: the image needs a CA bundle.
	certs, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatalf("no CA bundle for the image (%v): apt-get install ca-certificates", err)
	}
	dir := t.TempDir()
	var bins []Binary
	for _, arch := range []string{"amd64", "arm64"} {
		out := filepath.Join(dir, "kopf-wasm-"+arch)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -buildid= -X github.com/kopf-wasm/kopf-wasm/cmd/kopf-wasm/internal/app.version=v0.0.0-test",
			"-o", out, "./cmd/kopf-wasm")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build for %s: %v\n%s", arch, err, b)
		}
		bins = append(bins, Binary{OS: "linux", Architecture: arch, Path: out})
	}
	opts := Options{Binaries: bins, CACerts: certs, Created: time.Unix(1700000000, 0), Version: "v0.0.0-test",
		Revision: "abc", Source: "https://github.com/kopf-wasm/kopf-wasm"}
	start := time.Now()
	idx, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same inputs: %s and %s", d1, d2)
	}

	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	ref := strings.TrimPrefix(reg.URL, "http://") + "/kopf-wasm:test"
	ctx := context.Background()
	pushed, err := Push(ctx, ref, idx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built and pushed in %s (the go builds before it not counted); compressed sizes: %s",
		time.Since(start).Round(time.Millisecond), sizes(t, idx))
	if !strings.HasSuffix(pushed, "@"+d1.String()) {
		t.Errorf("pushed %s, want the digest %s", pushed, d1)
	}
	pulled, err := Pull(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	im, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.OS+"/"+d.Platform.Architecture)
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", platforms)
	}
	img := platformOf(t, pulled, runtime.GOARCH)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{"/kopf-wasm"}) || cf.Config.User != "65532:65532" ||
		cf.Config.Labels["org.opencontainers.image.version"] != "v0.0.0-test" || cf.Config.Labels["org.opencontainers.image.source"] == "" {
		t.Errorf("config: entrypoint %v, user %q, labels %v", cf.Config.Entrypoint, cf.Config.User, cf.Config.Labels)
	}
	files := extract(t, img)
	if files["etc/ssl/certs/ca-certificates.crt"] == nil || !strings.Contains(string(files["etc/passwd"]), "nonroot:x:65532") {
		t.Errorf("the image lacks the CA bundle or the non-root user")
	}
	bin := filepath.Join(dir, "extracted")
	if err := os.WriteFile(bin, files["kopf-wasm"], 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "kopf-wasm v0.0.0-test" {
		t.Errorf("the extracted binary's version: %q, %v", out, err)
	}

	baked, err := Bake(pulled, "kopfexample.wasm", wasmtest.Bytes(t, "kopfexample"))
	if err != nil {
		t.Fatal(err)
	}
	bakedRef := strings.TrimPrefix(reg.URL, "http://") + "/kopfexample:test"
	if _, err := Push(ctx, bakedRef, baked); err != nil {
		t.Fatal(err)
	}
	back, err := Pull(ctx, bakedRef)
	if err != nil {
		t.Fatal(err)
	}
	bimg := platformOf(t, back, "arm64")
	bcf, err := bimg.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"run", "-A", "/modules/kopfexample.wasm"}; !slices.Equal(bcf.Config.Cmd, want) ||
		!slices.Equal(bcf.Config.Entrypoint, []string{"/kopf-wasm"}) {
		t.Errorf("baked: entrypoint %v cmd %v, want %v", bcf.Config.Entrypoint, bcf.Config.Cmd, want)
	}
	if bf := extract(t, bimg); len(bf["modules/kopfexample.wasm"]) == 0 || len(bf["kopf-wasm"]) == 0 {
		t.Errorf("the baked image lacks the module or the host")
	}
}

func platformOf(t *testing.T, idx v1.ImageIndex, arch string) v1.Image {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.Architecture == arch {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no %s image", arch)
	return nil
}

// extract reads the image's files (flattened).
func extract(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(h.Name, "/")] = data
	}
}

// sizes are the compressed sizes of the index's images, by platform.
func sizes(t *testing.T, idx v1.ImageIndex) string {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, l := range layers {
			n, err := l.Size()
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
		out = append(out, fmt.Sprintf("%s %.1f MB", d.Platform.Architecture, float64(total)/1e6))
	}
	return strings.Join(out, ", ")
}
