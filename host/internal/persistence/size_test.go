package persistence

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// jsonSize counts what objects.Encode writes, without writing it.
func TestJSONSize(t *testing.T) {
	tests := []string{
		`null`, `true`, `false`, `0`, `-12345678901`, `1.5`, `1e+21`, `""`, `"plain"`,
		`"quote \" backslash \\ newline \n tab \t cr \r"`, `"control \u0001 \b \f \u001f"`, `"separators \u2028 \u2029"`, "\"invalid \xff utf-8\"", `"é ü 日本 😀"`, `"<html> & 'x'"`,
		`[]`, `{}`, `[1,"a",null,{"b":[true,false]}]`,
		`{"metadata":{"name":"n","annotations":{"a/b":"{\"x\":1}\n"}},"spec":{"list":[1,2.25,{"k":"v"}],"empty":{}}}`,
	}
	for _, in := range tests {
		v, err := objects.Decode([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		want, _ := objects.Encode(v)
		if got := jsonSize(v); got != len(want) {
			t.Errorf("jsonSize(%s) = %d, want %d (%s)", in, got, len(want), want)
		}
	}
}

// Removals and changes in the patch count as the patch leaves them; the
// diff-base's own keys do not count as others.
func TestAnnotationRoom(t *testing.T) {
	s, err := New(Options{Prefix: "kopf.zalando.org", Finalizer: "a/b", DiffBaseAnnotationBytes: 200 << 10})
	if err != nil {
		t.Fatal(err)
	}
	b := body(t, `{"metadata":{"annotations":{"x/gone":"1234567890","x/kept":"12345","x/changed":"1",
		"kopf.zalando.org/last-handled-configuration":"{}\n"}}}`)
	p := NewPatch(true)
	p.Set(annotationPath("x/gone"), nil)
	p.Set(annotationPath("x/changed"), "1234567890")
	p.Set(annotationPath("x/new"), "123")
	keys := []string{diffBaseKey}
	others := len("x/kept12345") + len("x/changed1234567890") + len("x/new123")
	if got, want := s.annotationRoom(p, b, keys), min(200<<10, annotationsLimit-others)-len(diffBaseKey); got != want {
		t.Errorf("room %d, want %d", got, want)
	}
	s.annotationBytes = 0
	if got, want := s.annotationRoom(p, b, keys), annotationsLimit-others-len(diffBaseKey); got != want {
		t.Errorf("no budget: room %d, want %d", got, want)
	}
	two := []string{diffBaseKey, "kopf.zalando.org/other-key"}
	if got, want := s.annotationRoom(p, b, two), (annotationsLimit-others-len(diffBaseKey)-len(two[1]))/2; got != want {
		t.Errorf("two keys: room %d each, want %d", got, want)
	}
}
