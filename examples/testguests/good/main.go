// Command good is a well-behaved test guest whose handlers succeed at once;
// the host's benchmarks measure calls with it.
//
//   - "ok" reads its input and returns a constant result without decoding
//     the request: the least work a handler can do, so that a call's cost is
//     the runtime's overhead.
//   - "decode" decodes the whole request with encoding/json, as the guest
//     SDK does, and returns a small result naming the object.
//   - "echo" decodes the request and returns its body as the result, so
//     that the output is sized like the input.
package main

import (
	"bytes"
	"encoding/json"

	"github.com/extism/go-pdk"
	"github.com/kopf-wasm/kopf-wasm/abi"
)

var kopfexamples = &abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}

//go:wasmexport kopf_manifest
func manifest() int32 {
	return output(abi.Manifest{
		ABIVersion: abi.Version,
		Module:     abi.ModuleInfo{Name: "good", Version: "0.1.0"},
		Handlers: []abi.HandlerSpec{
			{ID: "ok", Kind: abi.KindCreate, Resource: kopfexamples},
			{ID: "decode", Kind: abi.KindCreate, Resource: kopfexamples},
			{ID: "echo", Kind: abi.KindUpdate, Resource: kopfexamples},
		},
	})
}

// okPrefix starts the host's encoding of a request for "ok": the host
// writes abi.Request's fields in order and omits an empty "call".
var okPrefix = []byte(`{"handler":"ok"`)

var okResponse = []byte(`{"outcome":{"status":"success"},"result":{"message":"ok"}}`)

//go:wasmexport kopf_handle
func handle() int32 {
	input := pdk.Input()
	if bytes.HasPrefix(input, okPrefix) {
		pdk.Output(okResponse)
		return 0
	}
	var req abi.Request
	if err := json.Unmarshal(input, &req); err != nil {
		pdk.SetError(err)
		return 1
	}
	resp := abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}
	switch req.Handler {
	case "echo":
		resp.Result = req.Body
	default:
		resp.Result = json.RawMessage(`{"message":"hello ` + req.Name + `"}`)
	}
	return output(resp)
}

func output(v any) int32 {
	b, err := json.Marshal(v)
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	pdk.Output(b)
	return 0
}

func main() {}
