package goldentest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/kopftest"
)

// fixture reads a golden file of the abi module.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "abi", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameBytes compares compact JSON from the SDK, indented as the fixtures
// are (two spaces, then a newline), with a fixture.
func sameBytes(t *testing.T, name string, compact []byte) {
	t.Helper()
	var got bytes.Buffer
	if err := json.Indent(&got, compact, "", "  "); err != nil {
		t.Fatalf("%s: the SDK's output is not JSON: %v\n%s", name, err, compact)
	}
	got.WriteByte('\n')
	if want := fixture(t, name); !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s: the SDK produces\n%s\nwant\n%s", name, got.Bytes(), want)
	}
}

// request decodes a request fixture as the host would send it.
func request(t *testing.T, name string) *abi.Request {
	t.Helper()
	var req abi.Request
	if err := json.Unmarshal(fixture(t, name), &req); err != nil {
		t.Fatal(err)
	}
	return &req
}

var example = map[string]any{
	"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
	"metadata": map[string]any{"name": "kopf-example-1", "namespace": "default", "labels": map[string]any{"app": "demo"}},
	"spec":     map[string]any{"field": "new", "items": []any{}},
}

func TestManifest(t *testing.T) {
	sameBytes(t, "manifest.json", kopftest.New(t).ManifestJSON())
}

func TestResponseSuccessAndLog(t *testing.T) {
	h := kopftest.New(t)
	req := h.Request("create_fn", example, nil)
	req.Memo = json.RawMessage(`{"seen":1}`)
	res, err := h.Call(req)
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "response-success.json", res.Raw)
	calls := h.Calls()
	if len(calls) != 1 || calls[0].Func != abi.HostLog {
		t.Fatalf("host calls = %+v, want one log", calls)
	}
	sameBytes(t, "log.json", calls[0].Request)
}

func TestResponseTemporary(t *testing.T) {
	h := kopftest.New(t)
	res, err := h.Call(request(t, "request-update.json"))
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "response-temporary.json", res.Raw)
}

func TestResponseValidate(t *testing.T) {
	h := kopftest.New(t)
	res, err := h.Call(request(t, "request-validate.json"))
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "response-validate.json", res.Raw)
}

func TestKubeResponseForbidden(t *testing.T) {
	h := kopftest.New(t)
	res := h.Run("delete_fn", example, nil)
	calls := h.Calls()
	if len(calls) != 1 || calls[0].Func != abi.HostKubeRequest {
		t.Fatalf("host calls = %+v, want one kube_request", calls)
	}
	sameBytes(t, "kube-response-forbidden.json", calls[0].Reply)
	var arbitrary *kopftest.ArbitraryError
	if !errors.As(res.Err, &arbitrary) || !bytes.Contains([]byte(arbitrary.Message), []byte("refused by the host: kopf: delete pods default/kopf-example-1-child")) {
		t.Errorf("outcome = %v, want the handler's arbitrary error about the refused delete", res.Err)
	}
}
