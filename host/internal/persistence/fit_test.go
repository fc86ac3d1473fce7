package persistence

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

const diffBaseKey = "kopf.zalando.org/last-handled-configuration"

// noise is n characters that gzip cannot shrink much (base64 of random
// bytes from a fixed seed).
func noise(n int) string {
	r := rand.New(rand.NewChaCha8([32]byte{1}))
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return base64.StdEncoding.EncodeToString(raw)[:n]
}

// blobBody is an object whose spec holds blob, with the given annotations
// and status.
func blobBody(blob string, annotations map[string]any, status map[string]any) map[string]any {
	b := map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "big", "namespace": "ns"}, "spec": map[string]any{"blob": blob}}
	if annotations != nil {
		b["metadata"].(map[string]any)["annotations"] = annotations
	}
	if status != nil {
		b["status"] = status
	}
	return b
}

// applied is body after the patch's merge patches.
func applied(body map[string]any, p *Patch) map[string]any {
	out := objects.ApplyMerge(body, p.main).(map[string]any)
	return objects.ApplyMerge(out, p.status).(map[string]any)
}

func formOf(value string) Form {
	switch {
	case value == "":
		return FormNone
	case strings.HasPrefix(value, GzipPrefix):
		return FormGzip
	case strings.HasPrefix(value, DigestPrefix):
		return FormDigest
	}
	return FormJSON
}

// The annotation's room: 128 KiB less the key (43 bytes) here, less what
// other annotations take of the API server's 256 KiB. Each form is read
// back: JSON and gzip whole, the digest as "unchanged" for the same
// essence and "changed, old unknown" for another.
func TestDiffBaseFormsInAnnotation(t *testing.T) {
	s, err := New(Options{Prefix: "kopf.zalando.org", Finalizer: "a/b", V1Keys: true,
		DiffBaseAnnotationBytes: 128 << 10, MaxEssenceBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// {"spec":{"blob":"…"}} and a newline: 21 bytes around the blob.
	fits := 128<<10 - len(diffBaseKey) - 21
	managed := func(n int) map[string]any { // not essential, but counted
		return map[string]any{"other.kopf.zalando.org/x": strings.Repeat("o", n)}
	}
	tests := []struct {
		name   string
		blob   string
		others map[string]any
		want   Form
	}{
		{"small", "x", nil, FormJSON},
		{"exactly the room", strings.Repeat("b", fits), nil, FormJSON},
		{"one byte over, compressible", strings.Repeat("b", fits+1), nil, FormGzip},
		{"one byte over, incompressible", noise(fits + 1), nil, FormDigest},
		{"300 KiB compressible", strings.Repeat("b", 300<<10), nil, FormGzip},
		{"small but other annotations leave less", noise(60 << 10), managed(200 << 10), FormDigest},
		{"compressible, other annotations leave less", strings.Repeat("b", 60<<10), managed(200 << 10), FormGzip},
		{"room left by others", noise(40 << 10), managed(200 << 10), FormJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := blobBody(tt.blob, tt.others, nil)
			essence := s.Essence(b, nil)
			p := NewPatch(true)
			if err := s.StoreDiffBase(p, b, essence); err != nil {
				t.Fatal(err)
			}
			after := applied(b, p)
			value := objects.GetString(after, annotationPath(diffBaseKey))
			if got := formOf(value); got != tt.want {
				t.Fatalf("form %s (%d bytes), want %s", got, len(value), tt.want)
			}
			if r := p.Reduced(); (r == nil) != (tt.want == FormJSON) || (r != nil && r.Form != tt.want) {
				t.Errorf("Reduced() = %+v, want form %s", r, tt.want)
			}
			total := 0
			for k, v := range objects.GetMap(after, objects.Path{"metadata", "annotations"}) {
				total += len(k) + len(v.(string))
			}
			if total > annotationsLimit {
				t.Errorf("annotations take %d bytes, over the API server's %d", total, annotationsLimit)
			}
			checkReadBack(t, s, after, essence, tt.want)
		})
	}
}

// checkReadBack reads the stored diff-base back for the same essence and
// for a changed one, and stores the same essence again (nothing written).
func checkReadBack(t *testing.T, s *Storage, after, essence map[string]any, form Form) {
	t.Helper()
	old, unknown, err := s.FetchDiffBase(after, essence)
	if err != nil || unknown || !objects.Equal(old, essence) {
		t.Errorf("same essence: unknown=%v err=%v equal=%v", unknown, err, objects.Equal(old, essence))
	}
	changed := objects.DeepCopyMap(essence)
	objects.Set(changed, objects.Path{"spec", "blob"}, "changed")
	old, unknown, err = s.FetchDiffBase(after, changed)
	switch {
	case err != nil:
		t.Errorf("changed essence: %v", err)
	case form == FormDigest && (!unknown || old != nil):
		t.Errorf("changed essence, digest: old=%v unknown=%v, want nil and unknown", old != nil, unknown)
	case form != FormDigest && (unknown || !objects.Equal(old, essence)):
		t.Errorf("changed essence, %s: unknown=%v, old is the stored essence: %v", form, unknown, objects.Equal(old, essence))
	}
	again := NewPatch(true)
	if err := s.StoreDiffBase(again, after, essence); err != nil || !again.Empty() || again.Reduced() != nil {
		t.Errorf("storing the same essence again: err=%v empty=%v reduced=%+v", err, again.Empty(), again.Reduced())
	}
}

// In the status the bound is the object's size: an object of ~1 MiB has
// no room for its diff-base as JSON.
func TestDiffBaseFormsInStatus(t *testing.T) {
	const limit = 1280 << 10
	s, err := New(Options{Prefix: "kopf.zalando.org", Finalizer: "a/b", DiffBaseInStatus: true,
		DiffBaseObjectBytes: limit, MaxEssenceBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	stale := `{"spec":{"blob":"old` + noise(500 << 10)[3:] + `"}}`
	tests := []struct {
		name   string
		blob   string
		status map[string]any
		want   Form
	}{
		{"300 KiB", noise(300 << 10), nil, FormJSON},
		{"700 KiB incompressible", noise(700 << 10), nil, FormDigest},
		{"1 MiB compressible", strings.Repeat("b", 1<<20), nil, FormGzip},
		{"1 MiB incompressible", noise(1 << 20), nil, FormDigest},
		{"the stored diff-base is replaced, not added to", noise(500 << 10),
			map[string]any{"kopf": map[string]any{"last-handled-configuration": stale}}, FormJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := blobBody(tt.blob, nil, tt.status)
			essence := s.Essence(b, nil)
			p := NewPatch(true)
			if err := s.StoreDiffBase(p, b, essence); err != nil {
				t.Fatal(err)
			}
			after := applied(b, p)
			value := objects.GetString(after, statusDiffBase)
			if got := formOf(value); got != tt.want {
				t.Fatalf("form %s (%d bytes), want %s", got, len(value), tt.want)
			}
			if r := p.Reduced(); (r == nil) != (tt.want == FormJSON) || (r != nil && (r.Form != tt.want || !r.InStatus)) {
				t.Errorf("Reduced() = %+v, want form %s", r, tt.want)
			}
			if size := jsonSize(after); tt.want != FormDigest && size > limit {
				t.Errorf("the object is %d bytes with its diff-base, over %d", size, limit)
			}
			checkReadBack(t, s, after, essence, tt.want)
		})
	}
}

// The note is for a change of form: an object that stays large is
// reported once.
func TestReducedOnlyWhenTheFormChanges(t *testing.T) {
	s, err := New(Options{Prefix: "kopf.zalando.org", Finalizer: "a/b", DiffBaseAnnotationBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	b := blobBody(strings.Repeat("a", 2<<10), nil, nil)
	steps := []struct {
		blob string
		want Form // the note's form; FormNone for none
	}{
		{strings.Repeat("b", 2<<10), FormNone}, // gzip again
		{noise(2 << 10), FormDigest},           // gzip to digest
		{noise(3 << 10), FormNone},             // digest again
		{"small", FormNone},                    // back to JSON: nothing to report
		{strings.Repeat("c", 2<<10), FormGzip}, // JSON to gzip
	}
	p := NewPatch(false)
	if err := s.StoreDiffBase(p, b, s.Essence(b, nil)); err != nil || p.Reduced() == nil || p.Reduced().Form != FormGzip {
		t.Fatalf("first: %+v, %v", p.Reduced(), err)
	}
	b = applied(b, p)
	for i, step := range steps {
		objects.Set(b, objects.Path{"spec", "blob"}, step.blob)
		p := NewPatch(false)
		if err := s.StoreDiffBase(p, b, s.Essence(b, nil)); err != nil {
			t.Fatal(err)
		}
		got := FormNone
		if r := p.Reduced(); r != nil {
			got = r.Form
		}
		if got != step.want {
			t.Errorf("step %d: note %s, want %s", i, got, step.want)
		}
		b = applied(b, p)
	}
}

func TestDiffBaseCorruptReducedForms(t *testing.T) {
	s, err := New(Options{Prefix: "kopf.zalando.org", Finalizer: "a/b", MaxEssenceBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write([]byte(`{"spec":{"a":"` + strings.Repeat("0", 2<<20) + `"}}`))
	_ = zw.Close()
	tests := []struct{ name, value, want string }{
		{"digest not hex", DigestPrefix + "xyz", "not a hex SHA-256"},
		{"digest too short", DigestPrefix + "abcd", "not a hex SHA-256"},
		{"gzip not base64", GzipPrefix + "!!!", "base64"},
		{"gzip not gzip", GzipPrefix + base64.StdEncoding.EncodeToString([]byte("plain")), "gzip"},
		{"gzip over the cap", GzipPrefix + base64.StdEncoding.EncodeToString(bomb.Bytes()), "more than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := blobBody("x", map[string]any{diffBaseKey: tt.value}, nil)
			_, _, err := s.FetchDiffBase(b, s.Essence(b, nil))
			var corrupt *CorruptRecordError
			if !errors.As(err, &corrupt) || corrupt.Key != diffBaseKey || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a CorruptRecordError with %q", err, tt.want)
			}
		})
	}
}

func TestReducedMessage(t *testing.T) {
	tests := []struct {
		r    Reduced
		want []string
	}{
		{Reduced{Form: FormGzip, Size: 300 << 10, Stored: 1200, Room: 131029, Limit: 128 << 10},
			[]string{"300 KiB as JSON", "its annotation", "gzip-compressed (1200 bytes", "Kopf cannot read", "x-kubernetes-preserve-unknown-fields: true"}},
		{Reduced{Form: FormDigest, Size: 1 << 20, Room: 131029, Limit: 128 << 10},
			[]string{"1024 KiB as JSON", "SHA-256 digest", "old=null", "x-kubernetes-preserve-unknown-fields: true"}},
		{Reduced{Form: FormDigest, InStatus: true, Size: 1 << 20, Room: -5, Limit: 1280 << 10},
			[]string{"the status (0 bytes left of the 1280 KiB", "diffBaseObjectBytes", "ConfigMap"}},
	}
	for _, tt := range tests {
		msg := tt.r.Message()
		for _, want := range tt.want {
			if !strings.Contains(msg, want) {
				t.Errorf("%q lacks %q", msg, want)
			}
		}
		if len(msg) > 1024 {
			t.Errorf("%d bytes: an Event cuts it", len(msg))
		}
	}
}

// After a write the API server refused as too large, the diff-base goes
// as its digest whatever room the object seems to have (the room misses
// metadata.managedFields), in the annotation and in the status, the note
// saying why; stored so, the same essence writes nothing more.
func TestDigestOnlyAfterRefusedWrite(t *testing.T) {
	for _, inStatus := range []bool{false, true} {
		s, err := New(Options{Prefix: "kopf.zalando.org", Finalizer: "a/b", DiffBaseInStatus: inStatus,
			DiffBaseAnnotationBytes: 128 << 10, DiffBaseObjectBytes: 1280 << 10})
		if err != nil {
			t.Fatal(err)
		}
		b := blobBody("small enough for JSON", nil, nil)
		essence := s.Essence(b, nil)
		p := NewPatch(true)
		p.DigestOnly()
		if err := s.StoreDiffBase(p, b, essence); err != nil {
			t.Fatal(err)
		}
		r := p.Reduced()
		if r == nil || r.Form != FormDigest || !r.Refused || !strings.Contains(r.Message(), "refused") {
			t.Fatalf("inStatus=%v: Reduced() = %+v, want a refused digest", inStatus, r)
		}
		after := applied(b, p)
		if st, err := s.readDiffBase(after); err != nil || st.form != FormDigest {
			t.Fatalf("inStatus=%v: stored %s (%v), want the digest", inStatus, st.form, err)
		}
		checkReadBack(t, s, after, essence, FormDigest)
		again := NewPatch(true)
		again.DigestOnly()
		if err := s.StoreDiffBase(again, after, essence); err != nil || !again.Empty() {
			t.Errorf("inStatus=%v: the same essence again: err=%v empty=%v", inStatus, err, again.Empty())
		}
	}
}

// The marker annotation a first store adds counts toward the room: with
// other annotations past 128 KiB, a diff-base filling the room exactly
// leaves all annotations within the API server's 256 KiB.
func TestAnnotationRoomCountsTheMarker(t *testing.T) {
	s, err := New(Options{Prefix: "example.com", Finalizer: "a/b", DiffBaseAnnotationBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	others := map[string]any{"other.kopf.zalando.org/x": strings.Repeat("o", 140<<10)}
	// The room is about 116 KiB: try the sizes around it.
	for blob := 116<<10 - 200; blob < 116<<10; blob++ {
		b := blobBody(strings.Repeat("b", blob), others, nil)
		p := NewPatch(true)
		if err := s.StoreDiffBase(p, b, s.Essence(b, nil)); err != nil {
			t.Fatal(err)
		}
		total := 0
		for k, v := range objects.GetMap(applied(b, p), objects.Path{"metadata", "annotations"}) {
			total += len(k) + len(v.(string))
		}
		if total > annotationsLimit {
			t.Fatalf("blob %d: annotations take %d bytes, over the API server's %d", blob, total, annotationsLimit)
		}
	}
}
