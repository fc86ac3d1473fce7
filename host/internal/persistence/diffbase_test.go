package persistence

import (
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

func TestEssenceAsKopfBuildsIt(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		extra []string
		want  string
	}{
		{
			name: "spec, labels, annotations; no status or system metadata",
			body: `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"n","namespace":"ns","uid":"u","resourceVersion":"1","generation":2,
				"labels":{"app":"x"},"annotations":{"note":"y"},"finalizers":["a/b"],"managedFields":[{}]},
				"spec":{"field":"value","items":[1,2]},"status":{"create_fn":{"message":"done"}}}`,
			want: `{"metadata":{"annotations":{"note":"y"},"labels":{"app":"x"}},"spec":{"field":"value","items":[1,2]}}`,
		},
		{
			name: "framework and kubectl annotations dropped",
			body: `{"metadata":{"annotations":{
				"kopf.zalando.org/create_fn":"{}","kopf.zalando.org/last-handled-configuration":"{}",
				"other.kopf.zalando.org/x":"1","foreign.example.com/kopf-managed":"yes","foreign.example.com/fn":"{}",
				"kubectl.kubernetes.io/last-applied-configuration":"{}","keep.example.com/a":"b"}},"spec":{}}`,
			want: `{"metadata":{"annotations":{"keep.example.com/a":"b"}},"spec":{}}`,
		},
		{
			name: "empty stanzas dropped, empty spec kept",
			body: `{"metadata":{"labels":{},"annotations":{"kopf.zalando.org/fn":"{}"}},"spec":{},"status":{}}`,
			want: `{"spec":{}}`,
		},
		{
			name:  "extra fields restored, absent ones ignored",
			body:  `{"metadata":{"name":"n"},"spec":{"a":1},"status":{"phase":"Running","other":1}}`,
			extra: []string{"status.phase", "status.missing", "metadata.name"},
			want:  `{"metadata":{"name":"n"},"spec":{"a":1},"status":{"phase":"Running"}}`,
		},
		{
			name:  "legacy progress never essential",
			body:  `{"status":{"kopf":{"progress":{"fn":{}}}}}`,
			extra: []string{"status.kopf"},
			want:  `{"status":{"kopf":{}}}`,
		},
	}
	s := kopfStorage(t, "kopf.zalando.org")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := body(t, tt.body)
			before, _ := objects.Encode(b)
			var extra []objects.Path
			for _, f := range tt.extra {
				extra = append(extra, objects.ParsePath(f))
			}
			got, _ := objects.Encode(s.Essence(b, extra))
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if after, _ := objects.Encode(b); string(after) != string(before) {
				t.Errorf("body modified")
			}
		})
	}
}

// An object Kopf handled: its stored diff-base equals our essence of the
// same object, so the object is neither new nor changed.
func TestDiffBaseWrittenByKopfMeansNoChange(t *testing.T) {
	s := kopfStorage(t, "kopf.zalando.org")
	b := body(t, `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"kopf-example-1","namespace":"default",
		"labels":{"somelabel":"somevalue"},
		"annotations":{"someannotation":"somevalue",
			"kopf.zalando.org/last-handled-configuration":"{\"spec\":{\"duration\":\"1m\",\"field\":\"value\",\"items\":[\"item1\",\"item2\"]},\"metadata\":{\"labels\":{\"somelabel\":\"somevalue\"},\"annotations\":{\"someannotation\":\"somevalue\"}}}\n"}},
		"spec":{"duration":"1m","field":"value","items":["item1","item2"]},
		"status":{"create_fn":{"message":"hello world"}}}`)
	old, _, err := s.FetchDiffBase(b, s.Essence(b, nil))
	if err != nil || old == nil {
		t.Fatalf("FetchDiffBase = %v, %v", old, err)
	}
	if d := objects.Compare(old, s.Essence(b, nil)); len(d) != 0 {
		t.Errorf("diff = %v", d)
	}
	p := NewPatch(true)
	if err := s.StoreDiffBase(p, b, s.Essence(b, nil)); err != nil {
		t.Fatal(err)
	}
	if !p.Empty() {
		t.Errorf("storing an equal diff-base writes: %s", requests(t, p))
	}
}

func TestStoreDiffBaseFormat(t *testing.T) {
	s := kopfStorage(t, "kopf.zalando.org")
	b := body(t, `{"metadata":{"labels":{"l":"é"}},"spec":{"field":"<v>","n":1}}`)
	p := NewPatch(true)
	if err := s.StoreDiffBase(p, b, s.Essence(b, nil)); err != nil {
		t.Fatal(err)
	}
	want := `main merge {"metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"{\"metadata\":{\"labels\":{\"l\":\"\\u00e9\"}},\"spec\":{\"field\":\"<v>\",\"n\":1}}\n"}}}`
	if got := requests(t, p); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestFetchDiffBase(t *testing.T) {
	s := kopfStorage(t, "kopf.zalando.org")
	tests := []struct {
		name, body, want, err string
	}{
		{name: "none", body: `{"metadata":{}}`, want: `null`},
		{name: "json null", body: `{"metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"null"}}}`, want: `null`},
		{name: "cleared of our own keys", body: `{"metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"{\"metadata\":{\"annotations\":{\"kopf.zalando.org/x\":\"1\"}},\"spec\":{}}"}}}`, want: `{"spec":{}}`},
		{name: "corrupt", body: `{"metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"{"}}}`, err: "last-handled-configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := body(t, tt.body)
			got, _, err := s.FetchDiffBase(b, s.Essence(b, nil))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var enc []byte
			if got == nil {
				enc = []byte("null")
			} else {
				enc, _ = objects.Encode(got)
			}
			if string(enc) != tt.want {
				t.Errorf("got %s, want %s", enc, tt.want)
			}
		})
	}
}

func TestDiffBaseInStatus(t *testing.T) {
	s, err := New(Options{Prefix: "kopf.zalando.org", Finalizer: "a/b", DiffBaseInStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	b := body(t, `{"metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"{\"spec\":{\"a\":1}}\n"}},"spec":{"a":2}}`)
	old, _, err := s.FetchDiffBase(b, s.Essence(b, nil))
	if err != nil || !objects.Equal(old, body(t, `{"spec":{"a":1}}`)) {
		t.Fatalf("falls back to the annotation: %v, %v", old, err)
	}
	p := NewPatch(true)
	if err := s.StoreDiffBase(p, b, s.Essence(b, nil)); err != nil {
		t.Fatal(err)
	}
	want := `status merge {"status":{"kopf":{"last-handled-configuration":"{\"spec\":{\"a\":2}}"}}}`
	if got := requests(t, p); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	b2 := body(t, `{"spec":{"a":2},"status":{"kopf":{"last-handled-configuration":"{\"spec\":{\"a\":2}}"}}}`)
	if old, _, err := s.FetchDiffBase(b2, s.Essence(b2, nil)); err != nil || !objects.Equal(old, body(t, `{"spec":{"a":2}}`)) {
		t.Errorf("status first: %v, %v", old, err)
	}
	if e := s.Essence(body(t, `{"spec":{},"status":{"kopf":{"last-handled-configuration":"x"}}}`), []objects.Path{{"status", "kopf"}}); !objects.Equal(e, body(t, `{"spec":{},"status":{"kopf":{}}}`)) {
		t.Errorf("essence keeps the stored diff-base: %v", e)
	}
}
