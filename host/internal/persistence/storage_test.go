package persistence

import (
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

func body(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := objects.DecodeMap([]byte(s))
	if err != nil {
		t.Fatalf("body %s: %v", s, err)
	}
	return m
}

func kopfStorage(t *testing.T, prefix string) *Storage {
	t.Helper()
	s, err := New(Options{Prefix: prefix, Finalizer: "kopf.zalando.org/KopfFinalizerMarker", V1Keys: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// requests renders the patch's requests as "sub type data" lines.
func requests(t *testing.T, p *Patch) string {
	t.Helper()
	reqs, err := p.Requests()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range reqs {
		sub := r.Subresource
		if sub == "" {
			sub = "main"
		}
		kind := "merge"
		if r.Type == abi.PatchJSON {
			kind = "json"
		}
		lines = append(lines, sub+" "+kind+" "+string(r.Data))
	}
	return strings.Join(lines, "\n")
}

func TestNewRequiresPrefixAndFinalizer(t *testing.T) {
	if _, err := New(Options{Finalizer: "a/b"}); err == nil {
		t.Errorf("no prefix accepted")
	}
	if _, err := New(Options{Prefix: "p"}); err == nil {
		t.Errorf("no finalizer accepted")
	}
}

// An object in the middle of Kopf's handling: our fetch reads Kopf's record.
func TestFetchRecordWrittenByKopf(t *testing.T) {
	s := kopfStorage(t, "kopf.zalando.org")
	b := body(t, `{"metadata":{"annotations":{
		"kopf.zalando.org/create_fn":"{\"started\":\"2026-01-02T03:04:05.123456+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":false,\"failure\":false,\"delayed\":\"2026-01-02T03:05:05.123456+00:00\",\"message\":\"Not ready\"}",
		"kopf.zalando.org/fn.spec.field":"{\"started\":\"2026-01-02T03:04:05.123456+00:00\",\"retries\":1,\"success\":true,\"failure\":false}"
	}},"status":{"kopf":{"progress":{"legacy_fn":{"started":"2020-01-01T00:00:00","retries":2,"failure":true}}}}}`)
	tests := []struct {
		id      string
		found   bool
		retries int
		success bool
		failure bool
	}{
		{"create_fn", true, 1, false, false},
		{"fn/spec.field", true, 1, true, false},
		{"legacy_fn", true, 2, false, true},
		{"other_fn", false, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			rec, found, err := s.FetchRecord(b, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if found != tt.found || rec.Retries != tt.retries || rec.Success != tt.success || rec.Failure != tt.failure {
				t.Errorf("got %+v found=%v", rec, found)
			}
		})
	}
	bad := body(t, `{"metadata":{"annotations":{"kopf.zalando.org/create_fn":"{not json"}}}`)
	if _, _, err := s.FetchRecord(bad, "create_fn"); err == nil || !strings.Contains(err.Error(), "kopf.zalando.org/create_fn") {
		t.Errorf("corrupt record error = %v", err)
	}
}

func TestStoreAndPurgeRecord(t *testing.T) {
	long := strings.Repeat("h", 50) // V1 and V2 keys differ under the default prefix
	rec := Record{Started: ts("2026-01-02T03:04:05.123456Z"), Purpose: "create", Retries: 1, Success: true}
	tests := []struct {
		name   string
		prefix string
		body   string
		store  []string
		purge  []string
		want   string
	}{
		{
			name: "store", prefix: "kopf.zalando.org", body: `{}`, store: []string{"create_fn"},
			want: `main merge {"metadata":{"annotations":{"kopf.zalando.org/create_fn":"{\"started\":\"2026-01-02T03:04:05.123456+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}}}`,
		},
		{
			name: "store then purge in one cycle cancels out", prefix: "kopf.zalando.org", body: `{}`,
			store: []string{"create_fn"}, purge: []string{"create_fn"}, want: ``,
		},
		{
			name: "purge what the body has, legacy status too", prefix: "kopf.zalando.org",
			body:  `{"metadata":{"annotations":{"kopf.zalando.org/create_fn":"{}"}},"status":{"kopf":{"progress":{"create_fn":{}}}}}`,
			purge: []string{"create_fn"},
			want: `main merge {"metadata":{"annotations":{"kopf.zalando.org/create_fn":null}}}` + "\n" +
				`status merge {"status":{"kopf":{"progress":{"create_fn":null}}}}`,
		},
		{
			name: "long ids get both keys", prefix: "kopf.zalando.org", body: `{}`, store: []string{long},
			want: `main merge {"metadata":{"annotations":{"kopf.zalando.org/` + strings.Repeat("h", 39) + `-` + hashSuffix(long)[1:] + `":"{\"started\":\"2026-01-02T03:04:05.123456+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}","kopf.zalando.org/` + long + `":"{\"started\":\"2026-01-02T03:04:05.123456+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}}}`,
		},
		{
			name: "custom prefix gets the marker", prefix: "example.com", body: `{}`, store: []string{"fn"},
			want: `main merge {"metadata":{"annotations":{"example.com/fn":"{\"started\":\"2026-01-02T03:04:05.123456+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}","example.com/kopf-managed":"yes"}}}`,
		},
		{
			name: "no marker when the body has it", prefix: "example.com", body: `{"metadata":{"annotations":{"example.com/kopf-managed":"yes"}}}`, store: []string{"fn"},
			want: `main merge {"metadata":{"annotations":{"example.com/fn":"{\"started\":\"2026-01-02T03:04:05.123456+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := kopfStorage(t, tt.prefix)
			b := body(t, tt.body)
			p := NewPatch(true)
			for _, id := range tt.store {
				if err := s.StoreRecord(p, b, id, rec); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tt.purge {
				s.PurgeRecord(p, b, id)
			}
			if got := requests(t, p); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
