package persistence

import (
	"reflect"
	"strings"
	"testing"
)

// The expected keys below are the ones Kopf computes (its own test vectors
// for V1/V2 keys), so the annotations written here are the ones Kopf reads.
func TestKeysMatchKopf(t *testing.T) {
	const prefix = "my-operator.example.com"
	x, y, z := strings.Repeat, "y", "z"
	tests := []struct {
		name    string
		key     string
		wantV1  string
		wantV2  string
		prefix  string
		compare bool
	}{
		{name: "replacements", key: "a_b.c-d/e", wantV1: prefix + "/a_b.c-d.e", wantV2: prefix + "/a_b.c-d.e"},
		{name: "short", key: "x", wantV1: prefix + "/x", wantV2: prefix + "/x"},
		{name: "v1 limit", key: x("x", 39), wantV1: prefix + "/" + x("x", 39), wantV2: prefix + "/" + x("x", 39)},
		{name: "v1 cut x", key: x("x", 40), wantV1: prefix + "/" + x("x", 32) + "-tEokcg", wantV2: prefix + "/" + x("x", 40)},
		{name: "v1 cut y", key: x(y, 40), wantV1: prefix + "/" + x(y, 32) + "-VZlvhw", wantV2: prefix + "/" + x(y, 40)},
		{name: "v1 cut z", key: x(z, 40), wantV1: prefix + "/" + x(z, 32) + "-LlPQyA", wantV2: prefix + "/" + x(z, 40)},
		{name: "v2 limit", key: x("x", 63), wantV2: prefix + "/" + x("x", 63)},
		{name: "v2 cut x", key: x("x", 64), wantV2: prefix + "/" + x("x", 56) + "-SItAqA"},
		{name: "v2 cut y", key: x(y, 64), wantV2: prefix + "/" + x(y, 56) + "-0d251g"},
		{name: "v2 cut z", key: x(z, 64), wantV2: prefix + "/" + x(z, 56) + "-E7wvIA"},
		{name: "base64 altchars", key: x("fn", 323), wantV1: prefix + "/" + x("fn", 16) + "-Az-r.g", wantV2: prefix + "/" + x("fn", 28) + "-Az-r.g"},
	}
	c := keyConvention{prefix: prefix, v1: true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.v2Key(tt.key); got != tt.wantV2 {
				t.Errorf("v2Key = %s, want %s", got, tt.wantV2)
			}
			if tt.wantV1 == "" {
				return
			}
			if got := c.v1Key(tt.key); got != tt.wantV1 {
				t.Errorf("v1Key = %s, want %s", got, tt.wantV1)
			}
		})
	}
}

func TestKeysOrderAndDeduplication(t *testing.T) {
	c := keyConvention{prefix: "kopf.zalando.org", v1: true}
	tests := []struct {
		name string
		key  string
		body map[string]any
		want []string
	}{
		{"same v1 and v2", "create_fn", nil, []string{"kopf.zalando.org/create_fn"}},
		{"sub-handler", "create_fn/item1", nil, []string{"kopf.zalando.org/create_fn.item1"}},
		{"field handler", "fn/spec.field", nil, []string{"kopf.zalando.org/fn.spec.field"}},
		{"v2 then v1", strings.Repeat(".", 64), nil, []string{c.v2Key(strings.Repeat(".", 64)), c.v1Key(strings.Repeat(".", 64))}},
		{"replicaset of a deployment", "create_fn", map[string]any{
			"kind":     "ReplicaSet",
			"metadata": map[string]any{"ownerReferences": []any{map[string]any{"kind": "Deployment"}}},
		}, []string{"kopf.zalando.org/create_fn-ofDRS"}},
		{"replicaset alone", "create_fn", map[string]any{"kind": "ReplicaSet"}, []string{"kopf.zalando.org/create_fn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.keys(tt.key, tt.body); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("keys = %v, want %v", got, tt.want)
			}
		})
	}
	if len(c.keys(strings.Repeat(".", 64), nil)) != 2 {
		t.Errorf("long keys should differ between V1 and V2")
	}
	noV1 := keyConvention{prefix: "kopf.zalando.org"}
	if got := noV1.keys(strings.Repeat(".", 64), nil); len(got) != 1 {
		t.Errorf("without v1: %v", got)
	}
}

func TestManagedPrefixes(t *testing.T) {
	got := managedPrefixes(map[string]any{
		"kopf.zalando.org/create_fn":         "{}",
		"my.kopf.zalando.org/x":              "{}",
		"other.example.com/kopf-managed":     "yes",
		"other.example.com/create_fn":        "{}",
		"unrelated.example.com/thing":        "x",
		"no-prefix":                          "x",
		"kopf.zalando.org.evil.example.com/": "x",
	})
	want := map[string]bool{"kopf.zalando.org": true, "my.kopf.zalando.org": true, "other.example.com": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if m := (keyConvention{prefix: "kopf.example.com"}).markerKey(); m != "" {
		t.Errorf("kopf.* prefix marker = %q", m)
	}
	if m := (keyConvention{prefix: "example.com"}).markerKey(); m != "example.com/kopf-managed" {
		t.Errorf("marker = %q", m)
	}
}
