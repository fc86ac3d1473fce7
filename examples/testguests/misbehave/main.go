// Command misbehave is a test guest whose handlers fail on purpose, one way
// each, selected by the handler id: "loop" spins forever, "oom" allocates
// until the memory limit stops it, "panic" panics, "exit" exits with code 3,
// "fail" returns a non-zero code with an error message, "badjson" writes
// output that is not JSON, "nooutcome" writes JSON without an outcome,
// "huge" writes as many bytes as its param's "bytes" asks, "sleep" sleeps
// for an hour in time.Sleep (only the host's sleep can end it), "nap"
// sleeps 10 ms and succeeds, and "ok" succeeds (to show that the module
// recovers on a fresh instance).
package main

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/extism/go-pdk"
	"github.com/kopf-wasm/kopf-wasm/abi"
)

var handlers = []string{"loop", "oom", "panic", "exit", "fail", "badjson", "nooutcome", "huge", "sleep", "nap", "ok"}

//go:wasmexport kopf_manifest
func manifest() int32 {
	m := abi.Manifest{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "misbehave"}}
	for _, id := range handlers {
		m.Handlers = append(m.Handlers, abi.HandlerSpec{
			ID: id, Kind: abi.KindCreate,
			Resource: &abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		})
	}
	b, _ := json.Marshal(m)
	pdk.Output(b)
	return 0
}

var (
	spins uint64   // written by "loop" so that the loop is not optimised away
	hold  [][]byte // kept by "oom" so that the garbage collector cannot free it
)

//go:wasmexport kopf_handle
func handle() int32 {
	var req abi.Request
	if err := json.Unmarshal(pdk.Input(), &req); err != nil {
		pdk.SetError(err)
		return 1
	}
	switch req.Handler {
	case "loop":
		for {
			spins++
		}
	case "oom":
		for {
			chunk := make([]byte, 8<<20)
			chunk[len(hold)%len(chunk)] = 1
			hold = append(hold, chunk)
		}
	case "panic":
		panic("misbehave: deliberate panic")
	case "exit":
		os.Exit(3)
	case "fail":
		pdk.SetError(errors.New("misbehave: deliberate failure"))
		return 7
	case "sleep":
		time.Sleep(time.Hour)
	case "nap":
		time.Sleep(10 * time.Millisecond)
		pdk.OutputString(`{"outcome":{"status":"success"}}`)
	case "badjson":
		pdk.OutputString(`{"outcome": {"status": "success"`)
	case "nooutcome":
		pdk.OutputString(`{"result": {"message": "no outcome"}}`)
	case "huge":
		var p struct{ Bytes int }
		_ = json.Unmarshal(req.Param, &p)
		pdk.OutputString(`{"outcome":{"status":"success"},"result":"` + strings.Repeat("x", p.Bytes) + `"}`)
	default:
		pdk.OutputString(`{"outcome":{"status":"success"}}`)
	}
	return 0
}

func main() {}
