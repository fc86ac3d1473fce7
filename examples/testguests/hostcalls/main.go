// Command hostcalls is a test guest that calls every host function of
// abi.HostNamespace once and returns what the host replied as its result:
// a log record, an event, a Kubernetes request for a declared permission
// (get configmaps) and one for an undeclared permission (get secrets), an
// index look-up and the stop checks.
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
	"github.com/kopf-wasm/kopf-wasm/abi"
)

//go:wasmimport kopf:host/v1 log
func hostLog(uint64) uint64

//go:wasmimport kopf:host/v1 post_event
func hostPostEvent(uint64) uint64

//go:wasmimport kopf:host/v1 kube_request
func hostKubeRequest(uint64) uint64

//go:wasmimport kopf:host/v1 index_lookup
func hostIndexLookup(uint64) uint64

//go:wasmimport kopf:host/v1 sleep_until_stopped
func hostSleepUntilStopped(uint64) uint64

//go:wasmimport kopf:host/v1 is_stopped
func hostIsStopped(uint64) uint64

//go:wasmexport kopf_manifest
func manifest() int32 {
	m := abi.Manifest{
		ABIVersion: abi.Version,
		Module:     abi.ModuleInfo{Name: "hostcalls"},
		Handlers: []abi.HandlerSpec{{
			ID: "calls", Kind: abi.KindCreate,
			Resource: &abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		}},
		Permissions: abi.Permissions{Kubernetes: []abi.KubePermission{
			{Group: "", Resource: "configmaps", Verbs: []string{"get", "list"}},
		}},
	}
	b, _ := json.Marshal(m)
	pdk.Output(b)
	return 0
}

// call sends v to a host function and returns its raw JSON reply.
func call(fn func(uint64) uint64, v any) json.RawMessage {
	in, err := pdk.AllocateJSON(v)
	if err != nil {
		panic(err)
	}
	defer in.Free()
	off := fn(in.Offset())
	if off == 0 {
		return json.RawMessage("null")
	}
	reply := pdk.FindMemory(off)
	defer reply.Free()
	return reply.ReadBytes()
}

//go:wasmexport kopf_handle
func handle() int32 {
	result := map[string]json.RawMessage{
		"log": call(hostLog, abi.LogRecord{Level: abi.LogInfo, Message: "hello from the guest",
			Fields: map[string]any{"answer": 42}}),
		"event": call(hostPostEvent, abi.EventRequest{Type: "Normal", Reason: "Testing", Message: "an event"}),
		"declared": call(hostKubeRequest, abi.KubeRequest{Verb: abi.VerbGet, Version: "v1",
			Resource: "configmaps", Namespace: "default", Name: "settings"}),
		"undeclared": call(hostKubeRequest, abi.KubeRequest{Verb: abi.VerbGet, Version: "v1",
			Resource: "secrets", Namespace: "default", Name: "password"}),
		"index":   call(hostIndexLookup, abi.IndexLookupRequest{Index: "by-owner", Key: json.RawMessage(`"alice"`)}),
		"sleep":   call(hostSleepUntilStopped, abi.SleepRequest{Seconds: 0.001}),
		"stopped": call(hostIsStopped, struct{}{}),
	}
	b, _ := json.Marshal(abi.Response{
		Outcome: abi.Outcome{Status: abi.OutcomeSuccess},
		Result:  mustJSON(result),
	})
	pdk.Output(b)
	return 0
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func main() {}
