// Command extism is a test guest that uses go-pdk's own features, served by
// the host's Extism kernel, one per handler id: "log" logs a message at each
// level with pdk.Log (trace through log_trace itself, see logTrace), "vars" counts its calls in a variable (pdk.GetVar and
// SetVar) and returns the count, "config" returns whether pdk.GetConfig
// found "x", "env" returns the guest's GOGC environment variable, "http" sends a GET to the URL in its param with an X-Guest
// header and returns the response's status, body and X-Reply header, and
// "error" fails with pdk.SetError. Its manifest allows HTTP to 127.0.0.1.
package main

import (
	"encoding/json"
	"errors"
	"os"
	"strconv"

	"github.com/extism/go-pdk"
	"github.com/kopf-wasm/kopf-wasm/abi"
)

// go-pdk v1.1.3 imports log_error for pdk.LogTrace, so the guest calls the
// host's log_trace and get_log_level itself for that level.
//
//go:wasmimport extism:host/env log_trace
func logTrace(uint64)

//go:wasmimport extism:host/env get_log_level
func getLogLevel() int32

var handlers = []string{"log", "vars", "config", "env", "http", "error"}

//go:wasmexport kopf_manifest
func manifest() int32 {
	m := abi.Manifest{
		ABIVersion:  abi.Version,
		Module:      abi.ModuleInfo{Name: "extism"},
		Permissions: abi.Permissions{Hosts: []string{"127.0.0.1"}},
	}
	for _, id := range handlers {
		m.Handlers = append(m.Handlers, abi.HandlerSpec{
			ID: id, Kind: abi.KindCreate,
			Resource: &abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		})
	}
	return output(m)
}

//go:wasmexport kopf_handle
func handle() int32 {
	var req abi.Request
	if err := json.Unmarshal(pdk.Input(), &req); err != nil {
		pdk.SetError(err)
		return 1
	}
	var result any
	switch req.Handler {
	case "log":
		if getLogLevel() <= int32(pdk.LogTrace) {
			msg := pdk.AllocateString("extism trace")
			logTrace(msg.Offset())
		}
		pdk.Log(pdk.LogDebug, "extism debug")
		pdk.Log(pdk.LogInfo, "extism info")
		pdk.Log(pdk.LogWarn, "extism warn")
		pdk.Log(pdk.LogError, "extism error")
	case "vars":
		n, _ := strconv.Atoi(string(pdk.GetVar("count")))
		n++
		pdk.SetVar("count", []byte(strconv.Itoa(n)))
		result = n
	case "config":
		_, found := pdk.GetConfig("x")
		result = map[string]bool{"found": found}
	case "env":
		result = map[string]string{"GOGC": os.Getenv("GOGC")}
	case "http":
		var url string
		if err := json.Unmarshal(req.Param, &url); err != nil {
			pdk.SetError(err)
			return 1
		}
		resp := pdk.NewHTTPRequest(pdk.MethodGet, url).SetHeader("X-Guest", "kopf").Send()
		result = map[string]any{"status": resp.Status(), "body": string(resp.Body()), "header": resp.Headers()["x-reply"]}
	case "error":
		pdk.SetError(errors.New("extism guest: deliberate error"))
		return 1
	}
	b, _ := json.Marshal(result)
	return output(abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: b})
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
