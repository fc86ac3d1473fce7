// Command manifestjson is a test guest whose manifest export returns text
// that is not JSON; the host must refuse to load it.
package main

import "github.com/extism/go-pdk"

//go:wasmexport kopf_manifest
func manifest() int32 {
	pdk.OutputString(`this is not a manifest`)
	return 0
}

//go:wasmexport kopf_handle
func handle() int32 {
	pdk.OutputString(`{"outcome":{"status":"success"}}`)
	return 0
}

func main() {}
