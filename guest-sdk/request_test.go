package kopf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// sameAsStdlib checks decodeRequest against json.Unmarshal: whenever the
// standard library accepts a request, so must decodeRequest, with the same
// result (raw members compared as JSON values).
func sameAsStdlib(t *testing.T, in []byte) {
	t.Helper()
	var want abi.Request
	if err := json.Unmarshal(in, &want); err != nil {
		return
	}
	got, err := decodeRequest(in)
	if err != nil {
		t.Fatalf("decodeRequest(%s): %v; encoding/json accepts it", in, err)
	}
	if !equalRequests(got, &want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(&want)
		t.Fatalf("decodeRequest(%s)\n got %s\nwant %s", in, g, w)
	}
}

func equalRequests(a, b *abi.Request) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	if erra != nil || errb != nil {
		return erra != nil && errb != nil
	}
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}

var requestSeeds = []string{
	`{}`,
	`null`,
	` { "handler" : "h" , "kind":"create" } `,
	`{"handler":"a","handler":"b"}`,
	`{"Handler":"upper","NAME":"n"}`,
	`{"h\u0061ndler":"escaped key","name":"q\"uote\\"}`,
	`{"body":{"a":[1,{"b":"}]"}],"c":"\\\""},"old":[],"new":"s","memo":null,"param":3.5}`,
	`{"event":{"type":"ADDED","object":{"x":{}}},"event":{"type":"MODIFIED"}}`,
	`{"resource":{"group":"g"},"resource":{"version":"v"}}`,
	`{"retry":2,"runtime":1.5,"started":"2026-11-22T10:00:00Z","diff":[{"op":"add","field":["a"],"new":1}]}`,
	`{"diff":[{"op":"change","field":[],"old":1,"new":2}]}`,
	`{"diff":[]}`,
	`{"started":"2026-11-22T10:00:00Z","deadline":"2026-11-22T10:00:30.5Z"}`,
	`{"deadline":null}`,
	`{"diff":[null,{"op":"change","field":["a"],"field":["b","c"],"old":1,"new":null},{"field":null}]}`,
	`{"resource":null,"diff":null,"retry":null,"handler":null,"started":null,"runtime":null}`,
	`{"handler":"h\u00e9\"","name":"café","retry":-0,"runtime":1e-3}`,
	`{"indices":{"i":{"k":[1]}},"admission":{"uid":"u","operation":"CREATE"},"activity":"startup","future":{"x":[]}}`,
	`{"admission":{"uid":"u","operation":"UPDATE","subresource":"status","dryRun":true,"userInfo":{"username":"a","groups":["g"]},"headers":{"Content-Type":["application/json"],"X":["1","2"]}}}`,
	`{"admission":{"UID":"u\u00e9","DryRun":false,"USERINFO":null,"Headers":{"A":null,"B":[],"A":["again"]},"uid":"last","future":1}}`,
	`{"admission":{"uid":null,"operation":null,"dryRun":null,"headers":null},"admission":{"subresource":"merged"}}`,
	`{"admission":null}`,
	`{"admission":{"headers":{"K":["a\"b","\u2028"]},"userInfo":{"extra":{"x":["y"]}}}}`,
}

func TestDecodeRequestLikeStdlib(t *testing.T) {
	for _, name := range []string{"request-update.json", "request-validate.json"} {
		b, err := os.ReadFile(filepath.Join("..", "abi", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		requestSeeds = append(requestSeeds, string(b))
	}
	for _, s := range requestSeeds {
		sameAsStdlib(t, []byte(s))
	}
}

func TestDecodeRequestRejects(t *testing.T) {
	for _, in := range []string{``, `not json`, `[]`, `{`, `{"handler"}`, `{"handler":}`, `{"handler":"x",}`,
		`{"handler":"x"} extra`, `{"body":{"a":[}}`, `{"body":{"a":"unterminated}}`, `{"retry":"two"}`, `{"body":[1,2}`} {
		if _, err := decodeRequest([]byte(in)); err == nil {
			t.Errorf("decodeRequest(%q) accepted it", in)
		}
	}
}

func TestDecodeRequestKeepsRawMembers(t *testing.T) {
	in := []byte(`{"handler":"h","body":  {"spec" : {"x":1}} ,"memo":{"seen":1}}`)
	req, err := decodeRequest(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(req.Body) != `{"spec" : {"x":1}}` || string(req.Memo) != `{"seen":1}` {
		t.Errorf("raw members = %s, %s", req.Body, req.Memo)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if strings.ContainsRune(string(in), '\u212a') || strings.ContainsRune(string(in), '\u017f') {
			return // Unicode case folding of keys (K, ſ) is encoding/json's alone
		}
		sameAsStdlib(t, in)
	})
}
