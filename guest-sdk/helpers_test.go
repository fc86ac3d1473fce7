package kopf

import (
	"encoding/json"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// fresh gives the test an empty module registry and restores the old one.
func fresh(t *testing.T) *registry {
	t.Helper()
	old := registered
	registered = &registry{module: abi.ModuleInfo{Name: "test"}}
	t.Cleanup(func() { registered = old })
	return registered
}

// recorder is a host that records calls and answers with reply.
type recorder struct {
	calls []recorded
	reply func(fn string, request []byte) []byte
}

type recorded struct {
	fn      string
	request []byte
}

func (r *recorder) Call(fn string, request []byte) []byte {
	r.calls = append(r.calls, recorded{fn, request})
	if r.reply == nil {
		return nil
	}
	return r.reply(fn, request)
}

// replyWith answers every call with v as JSON.
func replyWith(v any) func(string, []byte) []byte {
	return func(string, []byte) []byte {
		b, _ := json.Marshal(v)
		return b
	}
}

// run registers nothing: it calls the registered handler id with req.
func run(t *testing.T, host *recorder, req abi.Request) *abi.Response {
	t.Helper()
	in, _ := json.Marshal(req)
	out, err := registered.handleJSON(in, host)
	if err != nil {
		t.Fatal(err)
	}
	var resp abi.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func bodyRequest(handler, body string) abi.Request {
	return abi.Request{Handler: handler, Body: json.RawMessage(body)}
}
