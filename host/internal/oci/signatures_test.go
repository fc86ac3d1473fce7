package oci

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// indexSize returns how many manifests the index at a registry path (a
// manifest by tag, or the referrers API) lists; 0 when there is none.
func (tr *testRegistry) indexSize(t *testing.T, path string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tr.URL+"/v2/"+path, nil)
	req.Header.Set("Accept", ocispec.MediaTypeImageIndex)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return 0
	}
	var idx ocispec.Index
	if err := json.NewDecoder(resp.Body).Decode(&idx); err != nil {
		t.Fatal(err)
	}
	return len(idx.Manifests)
}

// TestSignatures stores bundles as referrers and finds them again, on a
// registry with the OCI 1.1 referrers API and on one without it (where the
// sha256-<hex> tag holds the referrers index).
func TestSignatures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		referrers bool
	}{{"referrers API", true}, {"tag fallback", false}} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []registry.Option
			if tc.referrers {
				opts = append(opts, registry.WithReferrersSupport(true))
			}
			reg := newRegistryWith(t, opts...)
			c, _ := newClient(t, "")
			ctx := t.Context()
			a, err := c.Push(ctx, fakeWasm("signed"), Summary{Name: "m"}, reg.ref("mods/m:v1"))
			if err != nil {
				t.Fatal(err)
			}
			d, bundles, err := c.Signatures(ctx, reg.ref("mods/m:v1"))
			if err != nil || d != a.Digest || len(bundles) != 0 {
				t.Fatalf("Signatures before signing = %s, %d bundles, %v; want %s, none", d, len(bundles), err, a.Digest)
			}
			for _, b := range []string{`{"bundle":1}`, `{"bundle":2}`} {
				if _, err := c.AttachSignature(ctx, reg.ref("mods/m:v1"), []byte(b), "https://sigstore.dev/cosign/sign/v1"); err != nil {
					t.Fatal(err)
				}
			}
			d, bundles, err = c.Signatures(ctx, reg.ref("mods/m@"+a.Digest))
			if err != nil || d != a.Digest {
				t.Fatalf("Signatures = %s, %v", d, err)
			}
			got := []string{}
			for _, b := range bundles {
				got = append(got, string(b))
			}
			if strings.Join(got, " ") != `{"bundle":1} {"bundle":2}` && strings.Join(got, " ") != `{"bundle":2} {"bundle":1}` {
				t.Fatalf("bundles = %q", got)
			}
			fallbackTag := strings.Replace(a.Digest, ":", "-", 1)
			// go-containerregistry's registry does not confirm a subject
			// (no OCI-Subject header), so the tag is written in both cases.
			if n := reg.indexSize(t, "mods/m/manifests/"+fallbackTag); n != 2 {
				t.Fatalf("tag %s holds %d referrers, want 2", fallbackTag, n)
			}
			if n := reg.indexSize(t, "mods/m/referrers/"+a.Digest); tc.referrers && n != 2 {
				t.Fatalf("the referrers API lists %d referrers, want 2", n)
			}
			// Another version under the same tag carries none of v1's signatures.
			if _, err := c.Push(ctx, fakeWasm("other"), Summary{Name: "m"}, reg.ref("mods/m:v1")); err != nil {
				t.Fatal(err)
			}
			if _, bundles, err := c.Signatures(ctx, reg.ref("mods/m:v1")); err != nil || len(bundles) != 0 {
				t.Fatalf("new version: %d bundles, %v; want none", len(bundles), err)
			}
		})
	}
}

func TestSignaturesNotFound(t *testing.T) {
	reg := newRegistry(t)
	c, _ := newClient(t, "")
	if _, _, err := c.Signatures(t.Context(), reg.ref("mods/none:v1")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if _, err := c.AttachSignature(t.Context(), reg.ref("mods/none:v1"), []byte("{}"), "p"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}
